"""`lfh lexicon --parquet-dir DIR`: the lexicon tables as Parquet files, for engines that read files (Spark).

The tables are built exactly as for the warehouse (lexicon.write_tables, run on an in-memory DuckDB so the columns
and types are the warehouse's), then each replaces DIR/<table>/ whole: written into a hidden sibling folder,
swapped in by rename, the old folder removed. The load's raw.load_log rows land in DIR/load_log/ like ingest's.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path

import duckdb

from lfh.landing.parquet_sink import ParquetSink, write_part_atomically


def write_tables_parquet(directory: Path, built: list, clear: list[str],
                         write: Callable[[duckdb.DuckDBPyConnection, list, list[str]], None],
                         tables: Iterable[str]) -> None:
    """Replace the built tables' folders and empty the cleared ones (a folder holding one empty, typed file).
    write and tables: lexicon.load's write_tables and table names, passed in (load imports this module, not the
    other way round)."""
    connection = duckdb.connect()
    try:
        write(connection, built, clear)
        with ParquetSink(directory) as sink:
            # the folders of tables never built get their typed empty file, so every engine sees all three
            missing = [table for table in tables if not (sink.directory / table).is_dir()]
            for table in dict.fromkeys([item.table for item in built] + list(clear) + missing):
                rows = connection.execute(f"select * from raw.{table}").to_arrow_table()
                _swap_in(sink.directory, table, rows)
            log = connection.execute("select * from raw.load_log").to_arrow_table()
            if log.num_rows:
                write_part_atomically(log, sink.directory / "load_log" / f"{log['load_id'][0]}.parquet")
    finally:
        connection.close()


def _swap_in(directory: Path, table: str, rows) -> None:  # noqa: ANN001 - a pyarrow Table
    token = uuid.uuid4().hex
    staged = directory / f".{table}.{token}"
    write_part_atomically(rows, staged / f"{token}.parquet")
    target = directory / table
    retired = directory / f".{table}.old.{token}"
    if target.exists():
        target.rename(retired)
    staged.rename(target)
    shutil.rmtree(retired, ignore_errors=True)
