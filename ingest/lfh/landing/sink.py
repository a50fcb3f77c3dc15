"""Where landed rows are written: the one seam between reading files and storing their rows.

`lfh ingest` talks to a LandingSink only: it asks whether a file was loaded before, opens one file's load, offers
each table's rows batch by batch, and finishes the load (the sink keeps the first row of each key it does not hold
yet, says how many per table, writes the raw.load_log row and makes it all visible at once) or aborts it.
DuckDBSink (lfh.landing.duckdb_sink) writes
the warehouse's raw schema; another sink, e.g. Parquet files for the Spark port, implements the same methods with
the same meaning: a file lands all or nothing, and a row whose key is already held is a duplicate.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

import polars as pl

# table -> (its columns taken from the batch, the key that makes a row a duplicate)
TARGETS: dict[str, tuple[list[str], list[str]]] = {
    "stories": (["story_id", "model", "model_canonical", "query", "subject", "object", "role_category",
                 "story_text", "generated_at", "occurrence", "source_kind", "prompt_id", "prompt_tokens",
                 "completion_tokens", "is_simulated", "run_id", "model_id", "model_version", "system_fingerprint"],
                ["story_id"]),
    "label_responses": (["response_id", "story_id", "labeler_model", "prompt_version", "sample_index",
                         "request_text", "response_text", "responded_at", "prompt_tokens", "completion_tokens",
                         "run_id", "labeler_version", "system_fingerprint"],
                        ["response_id"]),
    # one row per distinct manifest (a resumed run's updated manifest is a new row of the same run_id) and per
    # run synthesized for a file without one
    "runs": (["run_id", "run_kind", "run_name", "model", "model_canonical", "model_id", "base_url",
              "reported_models", "system_fingerprints", "sampling", "prompt_catalog_sha256", "label_template_sha256",
              "lfh_version", "git_commit", "git_dirty", "started_at", "finished_at", "requests", "retries",
              "failures", "prompt_tokens", "completion_tokens", "is_simulated", "is_synthesized", "manifest_json"],
             ["run_id", "file_sha256"]),
    "hand_labels": (["story_id", "role", "gender", "name", "name_raw", "reference_words", "label_source"],
                    ["story_id", "role", "label_source"]),
    "rejects": (["target_table", "reason", "detail", "raw_record"],
                ["source_file", "source_row", "target_table", "reason", "detail"]),
}
PROVENANCE = ["source_file", "source_row", "file_sha256", "loaded_at", "load_id"]
# Tables with a history: a row whose key is held lands again when its content differs from the latest held row of
# that key (a corrected hand label); raw stays append-only, and the models read the latest (int_hand_labels_paired).
HISTORY_TABLES = ("hand_labels",)


@dataclass(frozen=True)
class Provenance:
    source_file: str
    file_sha256: str
    loaded_at: datetime
    load_id: str


@dataclass(frozen=True)
class LandedCounts:
    stories: int = 0
    label_responses: int = 0
    hand_labels: int = 0
    duplicates: int = 0
    rejected: int = 0
    hand_labels_changed: int = 0  # of hand_labels: rows replacing an earlier, different label of the same key
    runs: int = 0  # rows added to raw.runs (a file's description, not its data: not counted in landed)

    @property
    def landed(self) -> int:
        return self.stories + self.label_responses + self.hand_labels

    def __add__(self, other: LandedCounts) -> LandedCounts:
        return LandedCounts(self.stories + other.stories, self.label_responses + other.label_responses,
                            self.hand_labels + other.hand_labels, self.duplicates + other.duplicates,
                            self.rejected + other.rejected, self.hand_labels_changed + other.hand_labels_changed,
                            self.runs + other.runs)


@dataclass(frozen=True)
class LoadRecord:
    """What a file's load read: the sink adds what landed and writes the raw.load_log row."""

    provenance: Provenance
    file_kind: str
    rows_read: int
    rejected: int


class LandingSink(Protocol):
    def prepare(self) -> None:
        """Create the raw tables when missing (called once before any file)."""

    def loaded_before(self, source_file: str, sha256: str) -> datetime | None:
        """When this exact file (path and checksum) was fully loaded, else None."""

    def begin_file(self, provenance: Provenance) -> None:
        """Start one file's all-or-nothing load."""

    def offer(self, table: str, frame: pl.DataFrame) -> None:
        """Take one batch of a table's rows (TARGETS[table] columns and source_row) into the open load. Nothing
        is visible before finish_file; memory must not grow with the number of batches."""

    def finish_file(self, load: LoadRecord) -> LandedCounts:
        """Keep, per table, the first row (by source_row) of each key not held yet (HISTORY_TABLES: or whose latest
        held row differs); record the load
        (raw.load_log) and make everything of the file visible at once. Returns what landed; duplicates are
        the offered rows of stories, label_responses and hand_labels that did not."""

    def abort_file(self) -> None:
        """Drop everything of the file's load (nothing of it stays)."""

    def record_failure(self, provenance: Provenance, file_kind: str | None, error: str) -> None:
        """Log a file that could not be landed (raw.load_log, status failed)."""

    def close(self) -> None: ...
