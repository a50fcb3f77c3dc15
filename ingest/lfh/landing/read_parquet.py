"""Reading the project's Parquet files: values as text, each column's Parquet type kept as its kind."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from lfh.landing.errors import UnreadableFileError
from lfh.landing.records import SOURCE_ROW, RawRecords, kind_column


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


def read_parquet_records(path: Path) -> RawRecords:
    try:
        frame = pl.read_parquet(path)
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise UnreadableFileError(path, f"not a readable Parquet file ({exc})") from exc
    columns = list(frame.columns)
    kinds = [
        pl.when(pl.col(name).is_null()).then(pl.lit("null")).otherwise(pl.lit(_kind_of(dtype))).alias(kind_column(name))
        for name, dtype in frame.schema.items()
    ]
    frame = frame.with_columns(kinds).with_columns([_as_text(name, frame.schema[name]) for name in columns])
    frame = frame.with_row_index(SOURCE_ROW, offset=1).with_columns(pl.col(SOURCE_ROW).cast(pl.Int64))
    return RawRecords(frame=frame, columns=columns, source_kind="parquet")
