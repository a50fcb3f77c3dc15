"""`lfh ingest PATH...`: land study workbooks and the project's JSONL/CSV/Parquet files in the raw schema.

Each file lands in its own transaction (all or nothing); a file already loaded with the same checksum is skipped.
A file that cannot be read at all is logged as failed and reported; the other files are still landed, and the
command then exits with status 1.
"""

from __future__ import annotations

from pathlib import Path

from lfh.db import connect
from lfh.landing.discovery import discover_files
from lfh.landing.duckdb_sink import DuckDBSink
from lfh.landing.ingest_file import FileResult, ReadOptions, ingest_file, unreadable_path
from lfh.landing.sink import LandingSink
from lfh.lock import warehouse_lock
from lfh.paths import database_path


def ingest_paths(paths: list[Path], db_path: Path | None = None, reread: bool = False,
                 options: ReadOptions | None = None, sink: LandingSink | None = None,
                 include_simulated: bool = True, allow_mix: bool = False) -> tuple[list[FileResult], list[Path]]:
    """Land every file under paths (in the warehouse, or the sink given); (results per file, files skipped for
    their extension). A path that cannot be read is that file's failure; the others still land."""
    files, skipped = discover_files(paths, include_simulated)
    if sink is not None:
        sink.prepare()
        return _ingest_files(sink, files, reread, options, allow_mix), skipped
    with warehouse_lock(db_path or database_path(), "ingest"):  # never lands rows in the middle of a build
        target = DuckDBSink(connect(db_path), db_path or database_path())
        try:
            target.prepare()
            return _ingest_files(target, files, reread, options, allow_mix), skipped
        finally:
            target.close()


def _ingest_files(target: LandingSink, files: list[tuple[Path, str | None]], reread: bool,
                  options: ReadOptions | None, allow_mix: bool) -> list[FileResult]:
    return [ingest_file(target, path, reread, options, allow_mix) if problem is None
            else unreadable_path(target, path, problem) for path, problem in files]
