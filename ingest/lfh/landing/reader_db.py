"""The in-memory DuckDB connection the readers parse files with, bounded so a big file streams instead of filling
memory (DuckDB spills to a temporary folder beyond the limit; without one it would use `.tmp` in the current
folder)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import duckdb

READER_MEMORY_ENV_VAR = "LFH_INGEST_READER_MEMORY"
DEFAULT_READER_MEMORY = "256MB"


def reader_connection() -> duckdb.DuckDBPyConnection:
    spill = Path(tempfile.gettempdir()) / f"lfh-ingest-reader-{os.getpid()}"
    return duckdb.connect(config={"memory_limit": os.environ.get(READER_MEMORY_ENV_VAR, DEFAULT_READER_MEMORY),
                                  "temp_directory": str(spill)})
