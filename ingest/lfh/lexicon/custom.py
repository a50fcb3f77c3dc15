"""A user-supplied first-name lexicon (CSV or Parquet): `first_name` plus any of the pct_* columns.

Percentages are 0-100 like the Census table (`scale="fraction"` multiplies 0-1 values by 100). A pct column the
file does not have is null in raw.custom_first_names: downstream reads null as "this file says nothing".
Every problem is an error naming the file, the row (1-based data row; CSV line = row + 1) and the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from lfh.errors import LexiconError

NAME_COLUMN = "first_name"
PCT_COLUMNS: tuple[str, ...] = (
    "pct_white", "pct_black", "pct_latine", "pct_asian", "pct_aian", "pct_multiracial", "pct_mena", "pct_nhpi",
)
SCALES = ("percent", "fraction")


class CustomLexiconError(LexiconError, ValueError):
    """The custom lexicon file is unusable; the message names the file, row and reason."""


@dataclass(frozen=True)
class CustomTable:
    frame: pl.DataFrame  # first_name, every PCT_COLUMNS entry (null when absent), source_row
    provided_columns: list[str]
    warnings: list[str] = field(default_factory=list)


def _read_any(path: Path) -> pl.DataFrame:
    suffix = path.suffix.lower()
    if not path.is_file():
        raise CustomLexiconError(f"{path}: no such file")
    try:
        if suffix == ".csv":
            return pl.read_csv(path, infer_schema=False)
        if suffix in (".parquet", ".pq"):
            return pl.read_parquet(path)
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise CustomLexiconError(f"{path}: cannot be read as {suffix[1:]} ({exc})") from exc
    raise CustomLexiconError(f"{path}: unknown format {suffix or '(no suffix)'}; use .csv or .parquet")


def _first_bad_row(frame: pl.DataFrame, condition: pl.Expr) -> dict | None:
    hits = frame.filter(condition)
    return hits.row(0, named=True) if hits.height else None


def read_custom_lexicon(path: Path, scale: str = "percent") -> CustomTable:
    if scale not in SCALES:
        raise CustomLexiconError(f"scale {scale!r} is not one of {', '.join(SCALES)}")
    raw = _read_any(path)
    columns = [column.strip() for column in raw.columns]
    raw.columns = columns
    if NAME_COLUMN not in columns:
        raise CustomLexiconError(f"{path}: no {NAME_COLUMN!r} column (found: {', '.join(columns) or 'none'})")
    unknown = [column for column in columns if column != NAME_COLUMN and column not in PCT_COLUMNS]
    if unknown:
        raise CustomLexiconError(
            f"{path}: unknown column(s) {', '.join(unknown)}; allowed: {NAME_COLUMN}, {', '.join(PCT_COLUMNS)}"
        )
    provided = [column for column in PCT_COLUMNS if column in columns]
    if not provided:
        raise CustomLexiconError(f"{path}: no percentage column; give at least one of {', '.join(PCT_COLUMNS)}")
    if raw.height == 0:
        raise CustomLexiconError(f"{path}: has a header but no rows")

    frame = raw.with_row_index("source_row", offset=1).with_columns(
        pl.col(NAME_COLUMN).cast(pl.String).str.strip_chars()
    )
    blank = _first_bad_row(frame, pl.col(NAME_COLUMN).is_null() | (pl.col(NAME_COLUMN) == ""))
    if blank:
        raise CustomLexiconError(f"{path}: row {blank['source_row']}: empty {NAME_COLUMN}")
    duplicated = frame.filter(pl.col(NAME_COLUMN).is_duplicated()).sort("source_row")
    if duplicated.height:
        name = duplicated[NAME_COLUMN][0]
        rows = duplicated.filter(pl.col(NAME_COLUMN) == name)["source_row"].to_list()
        raise CustomLexiconError(f"{path}: rows {', '.join(map(str, rows))}: {NAME_COLUMN} {name!r} appears twice")

    for column in provided:
        text = pl.col(column).cast(pl.String).str.strip_chars()
        unreadable = _first_bad_row(
            frame, text.is_not_null() & (text != "") & text.cast(pl.Float64, strict=False).is_null()
        )
        if unreadable:
            raise CustomLexiconError(
                f"{path}: row {unreadable['source_row']}: {column} = {unreadable[column]!r} is not a number"
            )
        frame = frame.with_columns(
            pl.when(text == "").then(None).otherwise(text).cast(pl.Float64, strict=False).alias(column)
        )

    warnings: list[str] = []
    if scale == "fraction":
        frame = frame.with_columns([(pl.col(column) * 100.0).alias(column) for column in provided])
    else:
        largest = frame.select(pl.max_horizontal(provided).max()).item()
        if largest is not None and 0 < largest <= 1.0:
            warnings.append(f"{path}: every percentage is <= 1; if the file holds fractions, pass --custom-scale "
                            "fraction (lexicon percentages are 0-100)")
    for column in provided:
        outside = _first_bad_row(frame, (pl.col(column) < 0) | (pl.col(column) > 100))
        if outside:
            raise CustomLexiconError(
                f"{path}: row {outside['source_row']}: {column} = {outside[column]} is outside 0-100"
            )

    absent = [pl.lit(None, dtype=pl.Float64).alias(column) for column in PCT_COLUMNS if column not in provided]
    shaped = frame.with_columns(absent).select(
        NAME_COLUMN, *PCT_COLUMNS, pl.col("source_row").cast(pl.Int64)
    )
    return CustomTable(frame=shaped, provided_columns=provided, warnings=warnings)
