"""Ingesting one file: checksum, open it by format, normalise and land it batch by batch, all in one load.

Memory stays bounded by the batch size (lfh.landing.records.batch_rows), not the file's: each batch is read,
identified and offered to the sink before the next is read. The file still lands all or nothing (one sink
transaction), identical stories are numbered across batches (OccurrenceCounter) and rows repeated across batches
are duplicates as within one.

A file whose path and checksum are already in raw.load_log as loaded is not read again (its rows would all be
duplicates); a file that changed, e.g. grew, has another checksum and is read. `reread=True` reads it anyway,
e.g. after the seeds changed so that rows rejected before (unknown prompt) can land now.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import duckdb
import polars as pl

from lfh.failures import is_full_disk
from lfh.landing.audit_sample_workbook import audit_sample_batch, is_audit_sample
from lfh.landing.batch import Batch, empty_rejects
from lfh.landing.discovery import file_format
from lfh.landing.errors import UnreadableFileError
from lfh.landing.known_stories import refuse_unknown_stories
from lfh.landing.lander import land_batch, land_rejects
from lfh.landing.project_formats import WANTED_KEYS, detect_content, project_batch
from lfh.landing.read_csv import CsvOptions, read_csv_stream
from lfh.landing.read_json import read_json_stream
from lfh.landing.read_parquet import read_parquet_stream
from lfh.landing.read_xlsx import read_xlsx_records
from lfh.landing.records import RecordStream, batch_rows
from lfh.landing.runs import FileRuns, read_manifest_file
from lfh.landing.simulated import MixedDataError, check_not_mixing, is_simulated_file
from lfh.landing.sink import LandedCounts, LandingSink, LoadRecord, Provenance
from lfh.landing.stories import OccurrenceCounter
from lfh.landing.study_workbook import study_batch
from lfh.runs import is_manifest


@dataclass(frozen=True)
class ReadOptions:
    """How files are read: CSV encoding and separator (None: UTF-8 / detected); rows per batch (None: default)."""

    csv: CsvOptions = field(default_factory=CsvOptions)
    rows_per_batch: int | None = None


@dataclass(frozen=True)
class FileResult:
    path: Path
    file_kind: str | None
    rows_read: int
    counts: LandedCounts
    error: str | None = None
    unchanged_since: datetime | None = None  # set when the file was skipped: when its identical copy was loaded
    notes: tuple[str, ...] = ()  # one line per hand-label cell not landed, and why

    def summary(self) -> str:
        if self.error is not None:
            return f"{self.path}: FAILED, nothing landed: {self.error}"
        if self.unchanged_since is not None:
            return (f"{self.path}: unchanged since its load at {self.unchanged_since:%Y-%m-%d %H:%M:%S} "
                    f"(same checksum), skipped: 0 landed (use --reread to read it again)")
        counts = self.counts
        per_table = [(counts.stories, "stories"), (counts.label_responses, "label responses"),
                     (counts.hand_labels, "hand labels")]
        nonzero = [f"{label} {count}" for count, label in per_table if count]
        landed = f"{counts.landed} landed" + (f" ({', '.join(nonzero)})" if len(nonzero) > 1 else "")
        changed = (f", {counts.hand_labels_changed} hand labels changed (the latest load wins; the earlier values "
                   "stay in raw.hand_labels)" if counts.hand_labels_changed else "")
        if self.file_kind == MANIFEST_KIND:
            outcome = "rejected" if counts.rejected else (
                "1 run landed in raw.runs" if counts.runs else "already in raw.runs (duplicate)")
            return f"{self.path}: run manifest, {outcome}" + "".join(f"\n  {note}" for note in self.notes)
        runs = f", {counts.runs} run(s) recorded in raw.runs" if counts.runs else ""
        return (f"{self.path}: {self.rows_read} rows read, {landed}, {counts.duplicates} duplicates, "
                f"{counts.rejected} rejected{changed}{runs}" + "".join(f"\n  {note}" for note in self.notes))


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def open_records(path: Path, options: ReadOptions) -> RecordStream:
    """The file's records as a stream of batches; raises UnreadableFileError for a type it does not read."""
    kind = file_format(path)
    rows = options.rows_per_batch or batch_rows()
    if kind == "json":
        return read_json_stream(path, WANTED_KEYS, rows)
    if kind == "csv":
        return read_csv_stream(path, options.csv, rows)
    if kind == "parquet":
        return read_parquet_stream(path, rows)
    if kind == "xlsx":  # the study's workbooks are small: one batch
        return RecordStream(source_kind="study_xlsx", batches=iter([read_xlsx_records(path)]))
    raise UnreadableFileError(path, "unknown file type: expected .xlsx, .jsonl/.ndjson/.json, .csv or .parquet")


@dataclass
class _FileLoad:
    """The running totals of one file's batches."""

    file_kind: str | None = None
    content: str | None = None
    rows_read: int = 0
    rejected: int = 0
    pending_rejects: list[pl.DataFrame] = field(default_factory=list)
    hand_label_notes: list[str] = field(default_factory=list)
    header_rows: int = 0  # rows above the first record: messages number rows as the spreadsheet does


# A spreadsheet or CSV file numbers its header row 1, its first record row 2 (raw.rejects.source_row counts records)
HEADER_ROWS = {"study_xlsx": 1, "csv": 1}


def _normalised(path: Path, stream: RecordStream, load: _FileLoad) -> Iterator[Batch]:
    occurrences = OccurrenceCounter()
    for records in stream.batches:
        if stream.source_kind == "study_xlsx":
            yield audit_sample_batch(path, records) if is_audit_sample(records.columns) else study_batch(path, records)
            continue
        if load.content is None and records.rows_read:
            load.content = detect_content(path, records)
        yield project_batch(path, records, load.content, occurrences)


def _check_not_mixing(sink: LandingSink, path: Path, simulated: bool, story_ids: pl.Series) -> None:
    """Simulated and real stories never share a warehouse silently (lfh.landing.simulated)."""
    connection = getattr(sink, "connection", None)  # a sink without a DuckDB warehouse checks for itself
    if isinstance(connection, duckdb.DuckDBPyConnection):
        check_not_mixing(connection, path, simulated, story_ids)


def land_file(sink: LandingSink, path: Path, provenance: Provenance, options: ReadOptions,
              allow_mix: bool = False) -> tuple[LandedCounts, str, int, list[str]]:
    """Read, land and finish one file inside the sink's open load: (counts, file kind, rows read, what became of
    the hand-label cells not landed: one line each, at most HAND_LABEL_NOTES)."""
    simulated = is_simulated_file(path)
    if is_manifest(path):
        return _land_manifest(sink, path, provenance, simulated)
    stream = open_records(path, options)
    load = _FileLoad(header_rows=HEADER_ROWS.get(stream.source_kind, 0))
    later = _raw_records_later(stream)
    runs = FileRuns(provenance.file_sha256)
    for batch in _normalised(path, stream, load):
        batch.is_simulated = simulated
        runs.attach(batch)
        # every batch: a file mixes as soon as one of its batches brings stories the warehouse does not hold
        if not allow_mix and batch.stories is not None and batch.stories.height:
            _check_not_mixing(sink, path, simulated, batch.stories["story_id"])
        connection = getattr(sink, "connection", None)
        if isinstance(connection, duckdb.DuckDBPyConnection):
            batch = refuse_unknown_stories(connection, batch, load.header_rows)
        load.file_kind = load.file_kind or (batch.file_kind if batch.rows_read else None)
        load.rows_read += batch.rows_read
        load.rejected += batch.rejects.height
        _note_hand_label_rejects(load, batch.rejects)
        land_batch(sink, batch, rejects_now=not later)
        if later and batch.rejects.height:
            load.pending_rejects.append(batch.rejects)
    if load.pending_rejects:
        for completed in stream.complete_rejects(pl.concat(load.pending_rejects)):
            land_rejects(sink, completed)
    synthesized = runs.frame(simulated)
    if synthesized.height:
        sink.offer("runs", synthesized)
    file_kind = load.file_kind or f"empty_{stream.source_kind}"
    return sink.finish_file(LoadRecord(provenance, file_kind, load.rows_read, load.rejected)), file_kind, \
        load.rows_read, load.hand_label_notes


def _land_manifest(sink: LandingSink, path: Path, provenance: Provenance,
                   simulated: bool) -> tuple[LandedCounts, str, int, list[str]]:
    """A run manifest: one raw.runs row, or one raw.rejects row naming the field that is wrong."""
    manifest = read_manifest_file(path, simulated)
    if manifest.runs.height:
        sink.offer("runs", manifest.runs)
    land_rejects(sink, manifest.rejects)
    return sink.finish_file(LoadRecord(provenance, MANIFEST_KIND, 1, manifest.rejects.height)), MANIFEST_KIND, 1, \
        [str(detail) for detail in manifest.rejects["detail"].to_list()]


MANIFEST_KIND = "run_manifest"
HAND_LABEL_NOTES = 20


def _note_hand_label_rejects(load: _FileLoad, rejects: pl.DataFrame) -> None:
    """Hand labels are a person's work: say, for each cell not landed, which row and why (the first few)."""
    if not rejects.height or len(load.hand_label_notes) >= HAND_LABEL_NOTES:
        return
    for source_row, reason, detail in rejects.filter(pl.col("target_table") == "hand_labels").select(
            "source_row", "reason", "detail").iter_rows():
        if len(load.hand_label_notes) >= HAND_LABEL_NOTES:
            load.hand_label_notes.append("... (every one is in raw.rejects, target_table 'hand_labels')")
            return
        load.hand_label_notes.append(f"row {source_row + load.header_rows}: {reason}: {detail}")


def _raw_records_later(stream: RecordStream) -> bool:
    return stream.source_kind == "jsonl"


def ingest_file(sink: LandingSink, path: Path, reread: bool = False, options: ReadOptions | None = None,
                allow_mix: bool = False) -> FileResult:
    """Land one file all-or-nothing. A file that cannot be used is logged as failed in raw.load_log; a file loaded
    before with the same checksum is skipped unless reread. Simulated stories are flagged, and refused in a
    warehouse holding real ones (and the reverse) unless allow_mix."""
    options = options or ReadOptions()
    provenance = Provenance(source_file=str(path), file_sha256="", loaded_at=datetime.now(),
                            load_id=uuid.uuid4().hex)
    try:
        if not path.is_file():
            raise UnreadableFileError(path, "not a regular file" if path.exists() else "no such file")
        provenance = Provenance(source_file=str(path), file_sha256=file_sha256(path),
                                loaded_at=provenance.loaded_at, load_id=provenance.load_id)
        previous_load = None if reread else sink.loaded_before(str(path), provenance.file_sha256)
        if previous_load is not None:
            return FileResult(path=path, file_kind=None, rows_read=0, counts=LandedCounts(),
                              unchanged_since=previous_load)
        sink.begin_file(provenance)
        try:
            counts, file_kind, rows_read, notes = land_file(sink, path, provenance, options, allow_mix)
        except BaseException:
            sink.abort_file()
            raise
    except (UnreadableFileError, MixedDataError, pl.exceptions.PolarsError, duckdb.Error, OSError) as exc:
        if is_full_disk(exc):  # not this file's fault, and no other file would land: stop (the load was rolled back)
            raise
        # The file's load was rolled back; log the failure and let the other files land.
        problem = (exc.problem if isinstance(exc, UnreadableFileError)
                   else str(exc) if isinstance(exc, MixedDataError) else f"{type(exc).__name__}: {exc}")
        sink.record_failure(provenance, file_format(path), problem)
        return FileResult(path=path, file_kind=None, rows_read=0, counts=LandedCounts(), error=problem)
    return FileResult(path=path, file_kind=file_kind, rows_read=rows_read, counts=counts, notes=tuple(notes))


def unreadable_path(sink: LandingSink, path: Path, problem: str) -> FileResult:
    """The failure of a path found unusable before reading (e.g. a symlink loop), logged like any failed file."""
    provenance = Provenance(source_file=str(path), file_sha256="", loaded_at=datetime.now(), load_id=uuid.uuid4().hex)
    sink.record_failure(provenance, file_format(path), problem)
    return FileResult(path=path, file_kind=None, rows_read=0, counts=LandedCounts(), error=problem)


__all__ = ["FileResult", "ReadOptions", "empty_rejects", "file_sha256", "ingest_file", "open_records",
           "unreadable_path"]
