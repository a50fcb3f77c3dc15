"""The in-memory DuckDB connection the readers parse files with, bounded so a big file streams instead of filling
memory (DuckDB spills to a temporary folder beyond the limit; without one it would use `.tmp` in the current
folder)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa

from lfh.landing.errors import UnreadableFileError

READER_MEMORY_ENV_VAR = "LFH_INGEST_READER_MEMORY"
DEFAULT_READER_MEMORY = "256MB"


def reader_connection() -> duckdb.DuckDBPyConnection:
    spill = Path(tempfile.gettempdir()) / f"lfh-ingest-reader-{os.getpid()}"
    return duckdb.connect(config={"memory_limit": os.environ.get(READER_MEMORY_ENV_VAR, DEFAULT_READER_MEMORY),
                                  "temp_directory": str(spill)})


def arrow_frames(batches: pa.RecordBatchReader, path: Path, problem: Callable[[int, Exception], str],
                 errors: tuple[type[Exception], ...] = (duckdb.Error,)) -> Iterator[tuple[int, pl.DataFrame]]:
    """Each batch of a reader's result as (its first row's 1-based number, the batch as a polars frame). A read
    error midway is the file's fault: UnreadableFileError naming the path and `problem(first_row, error)`."""
    next_row = 1
    while True:
        try:
            batch = batches.read_next_batch()
        except StopIteration:
            return
        except errors as exc:
            raise UnreadableFileError(path, problem(next_row, exc)) from exc
        frame = pl.from_arrow(batch)
        assert isinstance(frame, pl.DataFrame)
        yield next_row, frame
        next_row += frame.height
