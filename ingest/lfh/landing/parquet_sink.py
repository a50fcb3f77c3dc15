"""Landing into Parquet files instead of the DuckDB warehouse (`lfh ingest --parquet-dir DIR`), for engines that
read files (Spark: the dbt sources register DIR/<table> as raw.<table>; DuckDB reads the same files).

Layout: DIR/<table>/<load_id>-<n>.parquet, the parts of one load per raw table, with the columns and types of the
DuckDB raw tables (lfh.landing.schema). The guarantees of the DuckDB lander hold:
- per-file atomicity: every part is written under a hidden temporary name (Spark, DuckDB's glob and pyarrow skip
  names starting with '.') and renamed into place; the load's raw.load_log part is renamed last and is its commit
  record. Opening the sink deletes temporary files and parts whose load has no load_log part (a killed run), so a
  re-run lands that file again, whole.
- no duplicates on re-run: a row whose key is already landed (the same keys as the DuckDB lander) is a duplicate;
  a file unchanged since its load (path and checksum in load_log) is skipped.
- rejects: rows that cannot be used land in DIR/rejects with file, row and reason.
One writer at a time: the sink holds an exclusive lock on DIR/.lock while open.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from lfh.errors import InputError
from lfh.landing.schema import ensure_raw_schema
from lfh.landing.sink import LandedCounts, LoadRecord, Provenance

# table -> the key that makes a row a duplicate (as in the DuckDB lander)
_KEYS: dict[str, list[str]] = {
    "stories": ["story_id"],
    "label_responses": ["response_id"],
    "hand_labels": ["story_id", "role", "label_source"],
    "rejects": ["source_file", "source_row", "target_table", "reason", "detail"],
    "runs": ["run_id", "file_sha256"],
}
LANDED_TABLES = ("stories", "label_responses", "hand_labels", "rejects", "runs", "load_log")
# Tables with a history (lfh.landing.sink.HISTORY_TABLES): a row is a duplicate only when the latest landed row of
# its key has the same content, so these compare on key + content against the latest row of each key.
_HISTORY_CONTENT: dict[str, list[str]] = {"hand_labels": ["gender", "name", "name_raw", "reference_words"]}


def _compared(table: str) -> list[str]:
    return [*_KEYS[table], *_HISTORY_CONTENT.get(table, [])]


class ParquetSinkError(InputError):
    """The Parquet landing folder cannot be used (locked by another run, unwritable)."""


def raw_arrow_schemas() -> dict[str, pa.Schema]:
    """The raw tables' columns and types, from the same DDL the DuckDB warehouse uses."""
    connection = duckdb.connect()
    try:
        ensure_raw_schema(connection)
        return {table: connection.execute(f"select * from raw.{table} limit 0").arrow().schema
                for table in LANDED_TABLES}
    finally:
        connection.close()


def _parts(directory: Path, table: str) -> list[Path]:
    folder = directory / table
    return sorted(folder.glob("*.parquet")) if folder.is_dir() else []


def write_part_atomically(table: pa.Table, target: Path) -> None:
    """Write a Parquet file under a hidden temporary name in the same folder, then rename it into place."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = _temporary(target)
    pq.write_table(table, temporary)
    with open(temporary, "rb") as handle:
        os.fsync(handle.fileno())
    os.replace(temporary, target)


class ParquetSink:
    """A LandingSink (lfh.landing.sink) writing Parquet parts under one folder. Use as a context manager (it holds
    the folder's lock): `with ParquetSink(dir) as sink: ingest_paths(paths, sink=sink)`."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory.expanduser().resolve()
        self.schemas = raw_arrow_schemas()
        self._lock_handle = None
        self._keys: dict[str, pl.DataFrame] = {}
        self._load_log: pl.DataFrame | None = None
        self._provenance: Provenance | None = None
        self._staged: list[tuple[str, Path, pl.DataFrame]] = []
        self._offered: dict[str, int] = {}

    def __enter__(self) -> ParquetSink:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._lock_handle = open(self.directory / ".lock", "w")  # noqa: SIM115 - held until __exit__
            fcntl.flock(self._lock_handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise ParquetSinkError(f"{self.directory} is being written by another `lfh ingest`; wait for it") from exc
        except OSError as exc:
            raise ParquetSinkError(f"cannot write to {self.directory}: {exc}") from exc
        self.recover()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._lock_handle is not None:
            self._lock_handle.close()
            self._lock_handle = None

    # -- state -----------------------------------------------------------------------------------------------
    def load_log(self) -> pl.DataFrame:
        if self._load_log is None:
            parts = _parts(self.directory, "load_log")
            self._load_log = (pl.read_parquet(parts) if parts
                              else pl.from_arrow(self.schemas["load_log"].empty_table()))
        return self._load_log

    def recover(self) -> None:
        """Remove what a killed run left: temporary files, and parts of loads without a load_log part."""
        committed = set(self.load_log()["load_id"].to_list())
        for staged in self.directory.glob(".*"):  # a folder `lfh lexicon` was swapping in when it stopped
            if staged.is_dir():
                shutil.rmtree(staged, ignore_errors=True)
        for table in LANDED_TABLES:
            folder = self.directory / table
            if not folder.is_dir():
                continue
            for temporary in folder.glob(".*.tmp"):
                temporary.unlink()
            if table != "load_log":
                for part in _parts(self.directory, table):
                    if part.stem.split("-")[0] not in committed:  # <load_id>-<part number>
                        part.unlink()

    def _existing_keys(self, table: str) -> pl.DataFrame:
        if table not in self._keys:
            key = _compared(table)
            parts = _parts(self.directory, table)
            schema = pl.from_arrow(self.schemas[table].empty_table()).select(key).schema
            if parts and table in _HISTORY_CONTENT:  # the latest row of each key
                landed = pl.read_parquet(parts, columns=[*key, "loaded_at", "load_id", "source_row"])
                landed = landed.sort("loaded_at", "load_id", "source_row").unique(
                    subset=_KEYS[table], keep="last", maintain_order=True).select(key)
                self._keys[table] = landed.cast(schema)
            else:
                self._keys[table] = (pl.read_parquet(parts, columns=key).cast(schema) if parts
                                     else pl.DataFrame(schema=schema))
        return self._keys[table]

    # -- the landing-sink operations: one file's load at a time, all or nothing ---------------------------------
    def prepare(self) -> None:
        """Nothing to create: a table's folder appears with its first part."""

    def loaded_before(self, source_file: str, sha256: str) -> datetime | None:
        """When this exact file (path and checksum) was fully loaded before, else None."""
        log = self.load_log().filter((pl.col("source_file") == source_file) & (pl.col("file_sha256") == sha256)
                                     & (pl.col("status") == "loaded"))
        return log["started_at"].max() if log.height else None

    def begin_file(self, provenance: Provenance) -> None:
        self._provenance = provenance
        self._staged = []
        self._offered = {}

    def offer(self, table: str, frame: pl.DataFrame) -> None:
        """Stage one batch of a table's rows (LandingSink.offer): only keys not landed nor staged yet."""
        self._offered[table] = self._offered.get(table, 0) + frame.height
        self.insert_new(table, frame)

    def insert_new(self, table: str, frame: pl.DataFrame) -> int:
        """Stage the rows of frame whose key is not landed yet, nor staged earlier in this load (the first by
        source_row wins within the frame), as a hidden part; returns how many."""
        assert self._provenance is not None, "begin_file first"
        rows = self._new_rows(table, frame, self._provenance)
        staged_keys = [keys for staged_table, _, keys in self._staged if staged_table == table]
        if staged_keys:
            rows = rows.join(pl.concat(staged_keys).select(_KEYS[table]), on=_KEYS[table], how="anti",
                             nulls_equal=True)
        if rows.height:
            target = self.directory / table / f"{self._provenance.load_id}-{len(self._staged):05d}.parquet"
            target.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(self._to_arrow(table, rows), _temporary(target))
            self._staged.append((table, target, rows.select(_compared(table))))
        return rows.height

    def finish_file(self, load: LoadRecord) -> LandedCounts:
        """Rename the staged parts into place, then write the load_log part: the commit record."""
        landed = {table: 0 for table in ("stories", "label_responses", "hand_labels", "rejects", "runs")}
        for table, _, keys in self._staged:
            landed[table] += keys.height
        offered = sum(self._offered.get(table, 0) for table in ("stories", "label_responses", "hand_labels"))
        counts = LandedCounts(stories=landed["stories"], label_responses=landed["label_responses"],
                              hand_labels=landed["hand_labels"],
                              duplicates=offered - landed["stories"] - landed["label_responses"]
                              - landed["hand_labels"], rejected=load.rejected,
                              hand_labels_changed=self._changed("hand_labels"), runs=landed["runs"])
        for _, target, _ in self._staged:
            temporary = _temporary(target)
            with open(temporary, "rb") as handle:
                os.fsync(handle.fileno())
            os.replace(temporary, target)
        self._commit(self._load_row(load.provenance, load.file_kind, load.rows_read, counts, "loaded", None))
        for table, _, keys in self._staged:
            merged = pl.concat([self._existing_keys(table), keys])
            if table in _HISTORY_CONTENT:  # the new row is now the latest of its key
                merged = merged.unique(subset=_KEYS[table], keep="last", maintain_order=True)
            self._keys[table] = merged
        self._provenance, self._staged, self._offered = None, [], {}
        return counts

    def _changed(self, table: str) -> int:
        """Staged rows of a history table whose key already held an (earlier, different) row."""
        staged = [keys for staged_table, _, keys in self._staged if staged_table == table]
        if not staged:
            return 0
        return pl.concat(staged).join(self._existing_keys(table).select(_KEYS[table]).unique(), on=_KEYS[table],
                                      how="semi", nulls_equal=True).height

    def abort_file(self) -> None:
        for _, target, _ in self._staged:
            _temporary(target).unlink(missing_ok=True)
        self._provenance, self._staged, self._offered = None, [], {}

    def record_failure(self, provenance: Provenance, file_kind: str | None, error: str) -> None:
        self._commit(self._load_row(provenance, file_kind, None, LandedCounts(), "failed", error))

    def close(self) -> None:
        self.__exit__()

    # -- helpers ------------------------------------------------------------------------------------------------
    def _new_rows(self, table: str, frame: pl.DataFrame, provenance: Provenance) -> pl.DataFrame:
        """The rows of frame whose key is not landed yet (the first by source_row within the file), provenance added."""
        key = _KEYS[table]
        compared = _compared(table)
        rows = frame.with_columns(pl.lit(provenance.source_file).alias("source_file"),
                                  pl.lit(provenance.file_sha256).alias("file_sha256"),
                                  pl.lit(provenance.loaded_at).cast(pl.Datetime("us")).alias("loaded_at"),
                                  pl.lit(provenance.load_id).alias("load_id"))
        rows = rows.cast({name: dtype for name, dtype in self._existing_keys(table).schema.items()})
        if rows.select(key).is_duplicated().any():
            rows = rows.sort("source_row").unique(subset=key, keep="first", maintain_order=True)
        return rows.join(self._existing_keys(table), on=compared, how="anti", nulls_equal=True)

    def _to_arrow(self, table: str, rows: pl.DataFrame) -> pa.Table:
        schema = self.schemas[table]
        columns = [rows[name].to_arrow() if name in rows.columns else pa.nulls(rows.height)
                   for name in schema.names]
        return pa.Table.from_arrays([column.cast(field.type) for column, field in zip(columns, schema, strict=True)],
                                    schema=schema)

    def _load_row(self, provenance: Provenance, file_kind: str | None, rows_read: int | None,
                  counts: LandedCounts, status: str, error: str | None) -> pl.DataFrame:
        return pl.DataFrame([{
            "load_id": provenance.load_id, "source_file": provenance.source_file,
            "file_sha256": provenance.file_sha256 or None, "file_kind": file_kind, "rows_read": rows_read,
            "rows_landed": counts.landed, "duplicates": counts.duplicates, "rejected": counts.rejected,
            "stories_landed": counts.stories if status == "loaded" else None,
            "label_responses_landed": counts.label_responses if status == "loaded" else None,
            "hand_labels_landed": counts.hand_labels if status == "loaded" else None,
            "runs_landed": counts.runs if status == "loaded" else None,
            "started_at": provenance.loaded_at, "finished_at": datetime.now(), "status": status, "error": error,
        }])

    def _commit(self, load_row: pl.DataFrame) -> None:
        arrow = self._to_arrow("load_log", load_row)
        write_part_atomically(arrow, self.directory / "load_log" / f"{load_row['load_id'][0]}.parquet")
        self._load_log = pl.concat([self.load_log(), pl.from_arrow(arrow)], how="vertical_relaxed")


def _temporary(target: Path) -> Path:
    return target.with_name(f".{target.name}.tmp")


@contextmanager
def parquet_sink(directory: Path) -> Iterator[ParquetSink]:
    with ParquetSink(directory) as sink:
        yield sink
