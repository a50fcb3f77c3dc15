"""Landing one file's Batch in one DuckDB transaction: set-based INSERT ... SELECT with anti-joins, so a file
arriving again adds nothing and a grown file adds only its new rows; a crash leaves no part of the file behind.

Test hook: when LFH_INGEST_TEST_PAUSE_FILE names a path, the lander creates that file after its inserts and
before COMMIT, then sleeps, so a test can kill -9 the process mid-transaction. Never set it in real use.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import duckdb
import polars as pl

from lfh.landing.batch import Batch

PAUSE_ENV_VAR = "LFH_INGEST_TEST_PAUSE_FILE"


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

    @property
    def landed(self) -> int:
        return self.stories + self.label_responses + self.hand_labels


# table -> (its columns taken from the batch, the key that makes a row a duplicate)
_TARGETS: dict[str, tuple[list[str], list[str]]] = {
    "stories": (["story_id", "model", "model_canonical", "query", "subject", "object", "role_category",
                 "story_text", "generated_at", "occurrence", "source_kind", "prompt_id", "prompt_tokens",
                 "completion_tokens", "is_simulated"], ["story_id"]),
    "label_responses": (["response_id", "story_id", "labeler_model", "prompt_version", "sample_index",
                         "request_text", "response_text", "responded_at", "prompt_tokens", "completion_tokens"],
                        ["response_id"]),
    "hand_labels": (["story_id", "role", "gender", "name", "name_raw", "reference_words", "label_source"],
                    ["story_id", "role", "label_source"]),
    "rejects": (["target_table", "reason", "detail", "raw_record"],
                ["source_file", "source_row", "target_table", "reason", "detail"]),
}
_PROVENANCE = ["source_file", "source_row", "file_sha256", "loaded_at", "load_id"]


def _insert_new(connection: duckdb.DuckDBPyConnection, table: str, frame: pl.DataFrame,
                provenance: Provenance) -> int:
    """Insert the rows of frame whose key is not in raw.<table> yet (the first by source_row within the file)."""
    columns, key = _TARGETS[table]
    within_file_key = [name for name in key if name not in ("source_file",)]
    if frame.select(within_file_key).is_duplicated().any():
        frame = frame.sort("source_row").unique(subset=within_file_key, keep="first", maintain_order=True)
    view = f"incoming_{table}"
    # polars' own string layout (Arrow string views) hands the frame to DuckDB without copying the texts
    connection.register(view, frame.to_arrow(compat_level=pl.CompatLevel.newest()))
    try:
        selected = ", ".join(f"i.{name}" for name in columns if name not in _PROVENANCE)
        match = " and ".join(f"t.{name} is not distinct from i.{name}" for name in key)
        statement = f"""
            insert into raw.{table} ({", ".join(name for name in columns if name not in _PROVENANCE)},
                                     {", ".join(_PROVENANCE)})
            select {selected}, i.source_file, i.source_row, $sha, $loaded_at, $load_id
            from (select *, $source_file as source_file from {view}) as i
            where not exists (select 1 from raw.{table} as t where {match})
        """
        parameters = {"sha": provenance.file_sha256, "loaded_at": provenance.loaded_at,
                      "load_id": provenance.load_id, "source_file": provenance.source_file}
        inserted = connection.execute(statement, parameters).fetchone()
    finally:
        connection.unregister(view)
    return int(inserted[0]) if inserted else 0


def _pause_for_crash_test() -> None:
    signal_file = os.environ.get(PAUSE_ENV_VAR)
    if signal_file:
        Path(signal_file).write_text("inside the transaction\n", encoding="utf-8")
        time.sleep(60)


def land_batch(connection: duckdb.DuckDBPyConnection, batch: Batch, provenance: Provenance) -> LandedCounts:
    """Insert everything of one file and its load_log row, committed together or not at all."""
    counts: dict[str, int] = {}
    offered = 0
    connection.execute("begin transaction")
    try:
        for table in ("stories", "label_responses", "hand_labels"):
            frame = getattr(batch, table)
            if frame is None or frame.height == 0:
                counts[table] = 0
                continue
            if table == "stories":
                frame = frame.with_columns(pl.lit(batch.source_kind).alias("source_kind"),
                                           pl.lit(batch.is_simulated).alias("is_simulated"))
            counts[table] = _insert_new(connection, table, frame, provenance)
            offered += frame.height
        if batch.rejects.height:
            _insert_new(connection, "rejects", batch.rejects, provenance)
        landed = LandedCounts(stories=counts["stories"], label_responses=counts["label_responses"],
                              hand_labels=counts["hand_labels"], duplicates=offered - sum(counts.values()),
                              rejected=batch.rejects.height)
        _record_load(connection, batch, provenance, landed)
        _pause_for_crash_test()
        connection.execute("commit")
    except BaseException:
        connection.execute("rollback")
        raise
    return landed


def _record_load(connection: duckdb.DuckDBPyConnection, batch: Batch, provenance: Provenance,
                 counts: LandedCounts) -> None:
    connection.execute(
        """insert into raw.load_log (load_id, source_file, file_sha256, file_kind, rows_read, rows_landed, duplicates,
               rejected, stories_landed, label_responses_landed, hand_labels_landed, started_at, finished_at,
               status, error)
           values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, current_timestamp::timestamp, 'loaded', null)""",
        [provenance.load_id, provenance.source_file, provenance.file_sha256, batch.file_kind, batch.rows_read,
         counts.landed, counts.duplicates, counts.rejected, counts.stories, counts.label_responses,
         counts.hand_labels, provenance.loaded_at],
    )


def record_failure(connection: duckdb.DuckDBPyConnection, provenance: Provenance, file_kind: str | None,
                   error: str) -> None:
    connection.execute(
        """insert into raw.load_log (load_id, source_file, file_sha256, file_kind, rows_read, rows_landed,
               duplicates, rejected, started_at, finished_at, status, error)
           values (?, ?, ?, ?, null, 0, 0, 0, ?, current_timestamp::timestamp, 'failed', ?)""",
        [provenance.load_id, provenance.source_file, provenance.file_sha256, file_kind, provenance.loaded_at, error],
    )
