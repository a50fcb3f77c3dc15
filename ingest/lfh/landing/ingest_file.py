"""Ingesting one file: checksum, read by format, normalise into a Batch, land it in one transaction.

A file whose path and checksum are already in raw.load_log as loaded is not read again (its rows would all be
duplicates); a file that changed, e.g. grew, has another checksum and is read. `reread=True` reads it anyway,
e.g. after the seeds changed so that rows rejected before (unknown prompt) can land now.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import duckdb
import polars as pl

from lfh.landing.batch import Batch
from lfh.landing.discovery import file_format
from lfh.landing.errors import UnreadableFileError
from lfh.landing.lander import LandedCounts, Provenance, land_batch, record_failure
from lfh.landing.parquet_sink import ParquetSink
from lfh.landing.project_formats import WANTED_KEYS, project_batch
from lfh.landing.read_csv import read_csv_records
from lfh.landing.read_json import read_json_records
from lfh.landing.read_parquet import read_parquet_records
from lfh.landing.read_xlsx import read_xlsx_records
from lfh.landing.study_workbook import study_batch


@dataclass(frozen=True)
class FileResult:
    path: Path
    file_kind: str | None
    rows_read: int
    counts: LandedCounts
    error: str | None = None
    unchanged_since: datetime | None = None  # set when the file was skipped: when its identical copy was loaded

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
        return (f"{self.path}: {self.rows_read} rows read, {landed}, {counts.duplicates} duplicates, "
                f"{counts.rejected} rejected")


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def loaded_at_before(connection: duckdb.DuckDBPyConnection, path: Path, sha256: str) -> datetime | None:
    """When this exact file (path and checksum) was fully loaded before, else None."""
    row = connection.execute(
        "select max(started_at) from raw.load_log where source_file = ? and file_sha256 = ? and status = 'loaded'",
        [str(path), sha256],
    ).fetchone()
    return row[0] if row else None


def read_batch(path: Path) -> Batch:
    """The file's rows normalised for landing; raises UnreadableFileError when the file cannot be used at all."""
    kind = file_format(path)
    if kind is None:
        raise UnreadableFileError(path, "unknown file type: expected .xlsx, .jsonl/.ndjson/.json, .csv or .parquet")
    if kind == "xlsx":
        return study_batch(path, read_xlsx_records(path))
    if kind == "json":
        records = read_json_records(path, WANTED_KEYS)
    elif kind == "csv":
        records = read_csv_records(path)
    else:
        records = read_parquet_records(path)
    return project_batch(path, records)


def ingest_file(connection: duckdb.DuckDBPyConnection | ParquetSink, path: Path, reread: bool = False) -> FileResult:
    """Land one file all-or-nothing. A file that cannot be used is logged as failed in raw.load_log; a file loaded
    before with the same checksum is skipped unless reread. connection: the warehouse, or a ParquetSink
    (`lfh ingest --parquet-dir`) with the same three operations."""
    if isinstance(connection, ParquetSink):
        return _ingest_file(path, reread, lambda path, sha: connection.loaded_before(str(path), sha),
                            connection.land_batch,
                            connection.record_failure)
    return _ingest_file(path, reread, lambda *args: loaded_at_before(connection, *args),
                        lambda *args: land_batch(connection, *args), lambda *args: record_failure(connection, *args))


def _ingest_file(path: Path, reread: bool, loaded_before, land, fail) -> FileResult:  # noqa: ANN001
    provenance = Provenance(source_file=str(path), file_sha256="", loaded_at=datetime.now(),
                            load_id=uuid.uuid4().hex)
    try:
        if not path.is_file():
            raise UnreadableFileError(path, "no such file")
        provenance = Provenance(source_file=str(path), file_sha256=file_sha256(path),
                                loaded_at=provenance.loaded_at, load_id=provenance.load_id)
        previous_load = None if reread else loaded_before(path, provenance.file_sha256)
        if previous_load is not None:
            return FileResult(path=path, file_kind=None, rows_read=0, counts=LandedCounts(),
                              unchanged_since=previous_load)
        batch = read_batch(path)
        counts = land(batch, provenance)
    except (UnreadableFileError, pl.exceptions.PolarsError, duckdb.Error, OSError) as exc:
        # The file's transaction was rolled back; log the failure and let the other files land.
        problem = exc.problem if isinstance(exc, UnreadableFileError) else f"{type(exc).__name__}: {exc}"
        fail(provenance, file_format(path), problem)
        return FileResult(path=path, file_kind=None, rows_read=0, counts=LandedCounts(), error=problem)
    return FileResult(path=path, file_kind=batch.file_kind, rows_read=batch.rows_read, counts=counts)
