"""The DuckDB warehouse as a LandingSink: each file in one transaction, set-based INSERT ... SELECT with
anti-joins, so a file arriving again adds nothing and a grown file adds only its new rows; a crash leaves no part
of the file behind (DuckDB's write-ahead log drops an uncommitted transaction).

Memory: DuckDB's buffer pool for the ingest is capped (LFH_INGEST_MEMORY_LIMIT, default 512MB) and spills to a
temporary folder beside the warehouse, so a file of millions of rows does not grow the process with it.

Test hook: when LFH_INGEST_TEST_PAUSE_FILE names a path, the sink creates that file after the file's inserts and
before COMMIT, then sleeps, so a test can kill -9 the process mid-transaction. Never set it in real use.
"""

from __future__ import annotations

import os
import time
from datetime import datetime
from pathlib import Path

import duckdb
import polars as pl

from lfh.landing.schema import ensure_raw_schema
from lfh.landing.sink import PROVENANCE, TARGETS, LoadRecord, Provenance

PAUSE_ENV_VAR = "LFH_INGEST_TEST_PAUSE_FILE"
MEMORY_ENV_VAR = "LFH_INGEST_MEMORY_LIMIT"
DEFAULT_MEMORY_LIMIT = "512MB"


class DuckDBSink:
    def __init__(self, connection: duckdb.DuckDBPyConnection, database: Path | None = None) -> None:
        self.connection = connection
        self._provenance: Provenance | None = None
        connection.execute(f"set memory_limit = '{os.environ.get(MEMORY_ENV_VAR, DEFAULT_MEMORY_LIMIT)}'")
        if database is not None:
            spill = database.parent / f"{database.name}.ingest.tmp"
            connection.execute("set temp_directory = ?", [str(spill)])
        # Rows must land in file order for "the first by source_row wins"; DuckDB keeps it by default.
        connection.execute("set preserve_insertion_order = true")

    def prepare(self) -> None:
        ensure_raw_schema(self.connection)

    def loaded_before(self, source_file: str, sha256: str) -> datetime | None:
        row = self.connection.execute(
            "select max(started_at) from raw.load_log where source_file = ? and file_sha256 = ? and status = 'loaded'",
            [source_file, sha256],
        ).fetchone()
        return row[0] if row else None

    def begin_file(self, provenance: Provenance) -> None:
        self._provenance = provenance
        self.connection.execute("begin transaction")

    def insert_new(self, table: str, frame: pl.DataFrame) -> int:
        provenance = self._provenance
        assert provenance is not None, "begin_file first"
        columns, key = TARGETS[table]
        within_file_key = [name for name in key if name != "source_file"]
        if frame.select(within_file_key).is_duplicated().any():
            frame = frame.sort("source_row").unique(subset=within_file_key, keep="first", maintain_order=True)
        view = f"incoming_{table}"
        # polars' own string layout (Arrow string views) hands the frame to DuckDB without copying the texts
        self.connection.register(view, frame.to_arrow(compat_level=pl.CompatLevel.newest()))
        try:
            own = [name for name in columns if name not in PROVENANCE]
            selected = ", ".join(f"i.{name}" for name in own)
            match = " and ".join(f"t.{name} is not distinct from i.{name}" for name in key)
            statement = f"""
                insert into raw.{table} ({", ".join(own)}, {", ".join(PROVENANCE)})
                select {selected}, i.source_file, i.source_row, $sha, $loaded_at, $load_id
                from (select *, $source_file as source_file from {view}) as i
                where not exists (select 1 from raw.{table} as t where {match})
            """
            parameters = {"sha": provenance.file_sha256, "loaded_at": provenance.loaded_at,
                          "load_id": provenance.load_id, "source_file": provenance.source_file}
            inserted = self.connection.execute(statement, parameters).fetchone()
        finally:
            self.connection.unregister(view)
        return int(inserted[0]) if inserted else 0

    def finish_file(self, load: LoadRecord) -> None:
        provenance, counts = load.provenance, load.counts
        self.connection.execute(
            """insert into raw.load_log (load_id, source_file, file_sha256, file_kind, rows_read, rows_landed,
                   duplicates, rejected, stories_landed, label_responses_landed, hand_labels_landed, started_at,
                   finished_at, status, error)
               values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, current_timestamp::timestamp, 'loaded', null)""",
            [provenance.load_id, provenance.source_file, provenance.file_sha256, load.file_kind, load.rows_read,
             counts.landed, counts.duplicates, counts.rejected, counts.stories, counts.label_responses,
             counts.hand_labels, provenance.loaded_at],
        )
        _pause_for_crash_test()
        self.connection.execute("commit")
        self._provenance = None

    def abort_file(self) -> None:
        if self._provenance is not None:
            self._provenance = None
            self.connection.execute("rollback")

    def record_failure(self, provenance: Provenance, file_kind: str | None, error: str) -> None:
        self.connection.execute(
            """insert into raw.load_log (load_id, source_file, file_sha256, file_kind, rows_read, rows_landed,
                   duplicates, rejected, started_at, finished_at, status, error)
               values (?, ?, ?, ?, null, 0, 0, 0, ?, current_timestamp::timestamp, 'failed', ?)""",
            [provenance.load_id, provenance.source_file, provenance.file_sha256, file_kind, provenance.loaded_at,
             error],
        )

    def close(self) -> None:
        self.connection.close()


def _pause_for_crash_test() -> None:
    signal_file = os.environ.get(PAUSE_ENV_VAR)
    if signal_file:
        Path(signal_file).write_text("inside the transaction\n", encoding="utf-8")
        time.sleep(60)
