"""Opening the DuckDB warehouse."""

from __future__ import annotations

from pathlib import Path

import duckdb

from lfh.paths import database_path


def connect(path: Path | None = None, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open the warehouse (creating its folder). Raises a clear error when another process holds the write lock."""
    target = path or database_path()
    if not read_only:
        target.parent.mkdir(parents=True, exist_ok=True)
    try:
        return duckdb.connect(str(target), read_only=read_only)
    except duckdb.IOException as exc:
        raise SystemExit(
            f"cannot open {target}: {exc}\n"
            "Another process (a BI tool, a notebook, a running build) holds this file. Close it, "
            "or point BI tools at the published copy (lfh publish)."
        ) from exc
