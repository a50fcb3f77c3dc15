"""Reading the project's Parquet files with pyarrow, streamed in row batches: values as text, each column's
Parquet type kept as its kind.

pyarrow hands text columns over without checking their UTF-8 (polars and DuckDB refuse the whole file on one bad
cell): each batch is checked, and a cell that is not valid UTF-8 becomes null with the row's problem named, so
that row is rejected and the rest of the file lands.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from lfh.landing.errors import UnreadableFileError
from lfh.landing.records import ROW_PROBLEM, RawRecords, RecordStream, kind_column, row_offsets


def _kind_of(dtype: pl.DataType) -> str:
    if dtype == pl.String:
        return "string"
    if dtype.is_integer():
        return "integer"
    if dtype.is_float() or dtype.is_decimal():
        return "number"
    if dtype == pl.Boolean:
        return "boolean"
    if dtype == pl.Null:
        return "null"
    return "other"


def _as_text(name: str, dtype: pl.DataType) -> pl.Expr:
    if dtype.is_nested():
        return pl.struct(pl.col(name)).struct.json_encode().alias(name)
    return pl.col(name).cast(pl.String).alias(name)


def _valid_text(column: pa.ChunkedArray | pa.Array, name: str) -> tuple[pa.Array, list[str | None]]:
    """(the column with cells that are not UTF-8 set to null, per row the problem or None)."""
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    try:
        array.validate(full=True)
        return array, [None] * len(array)
    except pa.ArrowInvalid:
        pass
    texts: list[str | None] = []
    problems: list[str | None] = []
    for value in array.cast(pa.large_binary() if pa.types.is_large_string(array.type) else pa.binary()).to_pylist():
        try:
            texts.append(None if value is None else value.decode("utf-8"))
            problems.append(None)
        except UnicodeDecodeError as exc:
            texts.append(None)
            problems.append(f"the '{name}' value is not valid UTF-8 text (bad byte 0x{value[exc.start]:02X} at "
                            f"position {exc.start})")
    return pa.array(texts, type=pa.large_string()), problems


def _checked_batch(batch: pa.RecordBatch) -> tuple[pa.Table, list[str | None] | None]:
    columns, row_problems = [], None
    for name, column in zip(batch.schema.names, batch.columns, strict=True):
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            column, problems = _valid_text(column, name)
            if any(problem is not None for problem in problems):
                row_problems = [first or second for first, second in
                                zip(row_problems or [None] * len(problems), problems, strict=True)]
        columns.append(column)
    return pa.Table.from_arrays(columns, names=batch.schema.names), row_problems


def _batches(path: Path, rows_per_batch: int) -> Iterator[RawRecords]:
    try:
        parquet = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise UnreadableFileError(path, f"not a readable Parquet file ({exc})") from exc
    columns = list(parquet.schema_arrow.names)
    next_row = 1
    try:
        for batch in parquet.iter_batches(batch_size=rows_per_batch):
            table, problems = _checked_batch(batch)
            frame = pl.from_arrow(table)
            assert isinstance(frame, pl.DataFrame)
            kinds = [pl.when(pl.col(name).is_null()).then(pl.lit("null")).otherwise(pl.lit(_kind_of(dtype)))
                     .alias(kind_column(name)) for name, dtype in frame.schema.items()]
            frame = frame.with_columns(kinds).with_columns([_as_text(name, frame.schema[name]) for name in columns])
            if problems is not None:
                frame = frame.with_columns(pl.Series(ROW_PROBLEM, problems, dtype=pl.String))
            frame = row_offsets(frame, next_row)
            next_row += frame.height
            yield RawRecords(frame=frame, columns=columns, source_kind="parquet")
    except (pa.ArrowException, OSError) as exc:
        raise UnreadableFileError(path, f"not a readable Parquet file near row {next_row} ({exc})") from exc


def read_parquet_stream(path: Path, rows_per_batch: int) -> RecordStream:
    return RecordStream(source_kind="parquet", batches=_batches(path, rows_per_batch))
