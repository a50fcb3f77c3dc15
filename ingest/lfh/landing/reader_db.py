"""The in-memory DuckDB connection the readers parse files with, bounded so a big file streams instead of filling
memory (DuckDB spills to its temporary directory beyond the limit)."""

from __future__ import annotations

import os

import duckdb

READER_MEMORY_ENV_VAR = "LFH_INGEST_READER_MEMORY"
DEFAULT_READER_MEMORY = "256MB"


def reader_connection() -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect(config={"memory_limit": os.environ.get(READER_MEMORY_ENV_VAR,
                                                                       DEFAULT_READER_MEMORY)})
    return connection
