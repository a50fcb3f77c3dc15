"""`lfh ingest PATH...`: land study workbooks and the project's JSONL/CSV/Parquet files in the raw schema.

Each file lands in its own transaction (all or nothing); a file already loaded with the same checksum is skipped.
A file that cannot be read at all is logged as failed and reported; the other files are still landed, and the
command then exits with status 1.
"""

from __future__ import annotations

from pathlib import Path

from lfh.build.lock import warehouse_lock
from lfh.db import connect
from lfh.landing.discovery import discover_files
from lfh.landing.ingest_file import FileResult, ingest_file
from lfh.landing.schema import ensure_raw_schema
from lfh.paths import database_path


def ingest_paths(paths: list[Path], db_path: Path | None = None, reread: bool = False,
                 include_simulated: bool = True, allow_mix: bool = False) -> tuple[list[FileResult], list[Path]]:
    """Land every file under paths in the warehouse; (results per file, files skipped for their extension or
    because they sit in a simulated subfolder and include_simulated is off)."""
    files, skipped = discover_files(paths, include_simulated)
    with warehouse_lock(db_path or database_path(), "ingest"):  # never lands rows in the middle of a build
        connection = connect(db_path)
        try:
            ensure_raw_schema(connection)
            return [ingest_file(connection, path, reread, allow_mix) for path in files], skipped
        finally:
            connection.close()
