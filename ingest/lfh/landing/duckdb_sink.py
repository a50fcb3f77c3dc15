"""The DuckDB warehouse as a LandingSink.

Each batch is appended, in its own small commit, to the schema `ingest_incoming` (tables shaped like raw's, which
no model reads). finish_file then moves the file's rows into raw in ONE transaction with set-based INSERT ...
SELECT: the first row (by source_row) of each key, and only keys raw does not hold yet, so a file arriving again
adds nothing and a grown file adds only its new rows. That transaction also writes raw.load_log, so a file is
visible all or nothing; a crash at any point leaves no part of it in raw (leftovers in ingest_incoming are
cleared when the next `lfh ingest` starts: the warehouse has one writer at a time).

Why not append every batch inside the file's transaction: DuckDB keeps a transaction's many small appends in
memory beyond its memory_limit (measured: +1.2 KB of RSS per 1 KB story over a million stories), while one
INSERT ... SELECT of the same rows stays near the limit. Memory: the buffer pool is capped
(LFH_INGEST_MEMORY_LIMIT, default 512MB) and spills to a folder beside the warehouse.

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
from lfh.landing.sink import HISTORY_TABLES, PROVENANCE, TARGETS, LandedCounts, LoadRecord, Provenance

PAUSE_ENV_VAR = "LFH_INGEST_TEST_PAUSE_FILE"
MEMORY_ENV_VAR = "LFH_INGEST_MEMORY_LIMIT"
DEFAULT_MEMORY_LIMIT = "512MB"
INCOMING = "ingest_incoming"


class DuckDBSink:
    def __init__(self, connection: duckdb.DuckDBPyConnection, database: Path | None = None) -> None:
        self.connection = connection
        self._provenance: Provenance | None = None
        self._offered: dict[str, int] = {}
        self._in_transaction = False
        connection.execute(f"set memory_limit = '{os.environ.get(MEMORY_ENV_VAR, DEFAULT_MEMORY_LIMIT)}'")
        if database is not None:
            spill = database.parent / f"{database.name}.ingest.tmp"
            connection.execute("set temp_directory = ?", [str(spill)])
        # Rows must land in file order for "the first by source_row wins"; DuckDB keeps it by default.
        connection.execute("set preserve_insertion_order = true")

    def prepare(self) -> None:
        ensure_raw_schema(self.connection)
        # Fresh incoming tables every run: drops what a killed load left, follows columns added to raw tables.
        self.connection.execute(f"create schema if not exists {INCOMING}")
        for table in TARGETS:
            self.connection.execute(f"create or replace table {INCOMING}.{table} as select * from raw.{table} limit 0")

    def loaded_before(self, source_file: str, sha256: str) -> datetime | None:
        row = self.connection.execute(
            "select max(started_at) from raw.load_log where source_file = ? and file_sha256 = ? and status = 'loaded'",
            [source_file, sha256],
        ).fetchone()
        return row[0] if row else None

    def begin_file(self, provenance: Provenance) -> None:
        self._provenance = provenance
        self._offered = dict.fromkeys(TARGETS, 0)
        self._clear_incoming()

    def offer(self, table: str, frame: pl.DataFrame) -> None:
        provenance = self._provenance
        assert provenance is not None, "begin_file first"
        columns, _key = TARGETS[table]
        view = f"incoming_{table}"
        # polars' own string layout (Arrow string views) hands the frame to DuckDB without copying the texts
        self.connection.register(view, frame.to_arrow(compat_level=pl.CompatLevel.newest()))
        try:
            own = [name for name in columns if name not in PROVENANCE]
            self.connection.execute(
                f"""insert into {INCOMING}.{table} ({", ".join(own)}, {", ".join(PROVENANCE)})
                    select {", ".join(own)}, $source_file, source_row, $sha, $loaded_at, $load_id from {view}""",
                {"sha": provenance.file_sha256, "loaded_at": provenance.loaded_at, "load_id": provenance.load_id,
                 "source_file": provenance.source_file})
        finally:
            self.connection.unregister(view)
        self._offered[table] += frame.height

    def _move(self, table: str) -> int:
        """Insert into raw.<table> the first incoming row of each key raw does not hold yet."""
        columns, key = TARGETS[table]
        every = [*[name for name in columns if name not in PROVENANCE], *PROVENANCE]
        match = " and ".join(f"t.{name} is not distinct from i.{name}" for name in key)
        own_key = ", ".join(name for name in key)
        moved = self.connection.execute(
            f"""insert into raw.{table} ({", ".join(every)})
                select {", ".join(f"i.{name}" for name in every)} from {INCOMING}.{table} as i
                semi join (select {own_key}, min(source_row) as source_row from {INCOMING}.{table}
                           group by all) as first
                  on {" and ".join(f"first.{name} is not distinct from i.{name}" for name in key)}
                 and first.source_row = i.source_row
                where not exists (select 1 from raw.{table} as t where {match})"""
        ).fetchone()
        return int(moved[0]) if moved else 0

    def _move_hand_labels(self) -> tuple[int, int]:
        """Hand labels have a history (HISTORY_TABLES): insert the first incoming row of each key unless the latest
        held row of that key (by loaded_at, then load_id) has the same content. Returns (inserted, of which
        changed: their key held an earlier, different value, which stays in raw.hand_labels)."""
        columns, key = TARGETS["hand_labels"]
        every = [*[name for name in columns if name not in PROVENANCE], *PROVENANCE]
        content = [name for name in columns if name not in key]
        on_key = " and ".join(f"{{a}}.{name} is not distinct from {{b}}.{name}" for name in key)
        same = " and ".join(f"latest.{name} is not distinct from i.{name}" for name in content)
        self.connection.execute(f"""
            create or replace temp table hand_labels_moving as
            select {", ".join(f"i.{name}" for name in every)} from {INCOMING}.hand_labels as i
            semi join (select {", ".join(key)}, min(source_row) as source_row from {INCOMING}.hand_labels
                       group by all) as first
              on {on_key.format(a="first", b="i")} and first.source_row = i.source_row
            where not exists (
                select 1 from (
                    select * from raw.hand_labels
                    qualify row_number() over (partition by {", ".join(key)}
                                               order by loaded_at desc, load_id desc, source_row desc) = 1
                ) as latest
                where {on_key.format(a="latest", b="i")} and {same})""")
        changed = self.connection.execute(
            f"""select count(*) from hand_labels_moving as i
                where exists (select 1 from raw.hand_labels as t where {on_key.format(a="t", b="i")})""").fetchone()
        moved = self.connection.execute(
            f"insert into raw.hand_labels ({', '.join(every)}) select {', '.join(every)} from hand_labels_moving"
        ).fetchone()
        self.connection.execute("drop table hand_labels_moving")
        return (int(moved[0]) if moved else 0), (int(changed[0]) if changed else 0)

    def finish_file(self, load: LoadRecord) -> LandedCounts:
        provenance = load.provenance
        self.connection.execute("begin transaction")
        self._in_transaction = True
        landed, changed = {}, 0
        for table in TARGETS:
            if not self._offered[table]:
                landed[table] = 0
            elif table in HISTORY_TABLES:
                landed[table], changed = self._move_hand_labels()
            else:
                landed[table] = self._move(table)
        offered = sum(self._offered[table] for table in ("stories", "label_responses", "hand_labels"))
        counts = LandedCounts(stories=landed["stories"], label_responses=landed["label_responses"],
                              hand_labels=landed["hand_labels"],
                              duplicates=offered - landed["stories"] - landed["label_responses"]
                              - landed["hand_labels"], rejected=load.rejected, hand_labels_changed=changed,
                              runs=landed["runs"])
        self.connection.execute(
            """insert into raw.load_log (load_id, source_file, file_sha256, file_kind, rows_read, rows_landed,
                   duplicates, rejected, stories_landed, label_responses_landed, hand_labels_landed, runs_landed,
                   started_at, finished_at, status, error)
               values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, current_timestamp::timestamp, 'loaded', null)""",
            [provenance.load_id, provenance.source_file, provenance.file_sha256, load.file_kind, load.rows_read,
             counts.landed, counts.duplicates, counts.rejected, counts.stories, counts.label_responses,
             counts.hand_labels, counts.runs, provenance.loaded_at],
        )
        _pause_for_crash_test()
        self.connection.execute("commit")
        self._in_transaction = False
        self._provenance = None
        self._clear_incoming()
        return counts

    def abort_file(self) -> None:
        if self._in_transaction:
            self._in_transaction = False
            self.connection.execute("rollback")
        self._provenance = None
        self._clear_incoming()

    def _clear_incoming(self) -> None:
        for table in TARGETS:
            self.connection.execute(f"delete from {INCOMING}.{table}")

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
