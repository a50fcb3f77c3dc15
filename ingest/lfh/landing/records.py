"""What every reader returns: a file's records as text columns, with row numbers and a way back to the raw record."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

# A column "<name>:kind" (when present) says what JSON/Parquet type the value had: string, integer, number,
# boolean, null or other. Readers of text-only formats (CSV, xlsx) leave it out: every value there is text.
KIND_SUFFIX = ":kind"
RAW_RECORD = "__raw_record"
SOURCE_ROW = "source_row"


def kind_column(name: str) -> str:
    return f"{name}{KIND_SUFFIX}"


@dataclass(frozen=True)
class RawRecords:
    """frame: `source_row` (1-based data row) plus one String column per column/key of the file (named as in the
    file) and optional kind columns. describe_columns lists every column/key of the file for error messages
    (default: columns); load_raw_records(rows) returns source_row, __raw_record (the original text of those
    records, e.g. JSON lines) when the frame alone cannot rebuild them."""

    frame: pl.DataFrame
    columns: list[str]
    source_kind: str
    describe_columns: Callable[[], list[str]] | None = None
    load_raw_records: Callable[[list[int]], pl.DataFrame] | None = None

    def all_columns(self) -> list[str]:
        return self.describe_columns() if self.describe_columns is not None else list(self.columns)

    @property
    def rows_read(self) -> int:
        return self.frame.height

    def value_kind(self, name: str) -> pl.Expr:
        """The kind of each value of a column: from the reader's kind column, else string/null."""
        if kind_column(name) in self.frame.columns:
            return pl.col(kind_column(name))
        if name in self.frame.columns:
            return pl.when(pl.col(name).is_null()).then(pl.lit("null")).otherwise(pl.lit("string"))
        return pl.lit("null")

    def with_raw_records(self, rows: pl.DataFrame) -> pl.DataFrame:
        """rows (with source_row) joined to the JSON text of their original records, as `raw_record`."""
        if self.load_raw_records is not None:
            wanted_rows = sorted(rows[SOURCE_ROW].unique().to_list())
            originals = self.load_raw_records(wanted_rows).select(SOURCE_ROW, pl.col(RAW_RECORD).alias("raw_record"))
        else:
            wanted = self.frame.join(rows.select(SOURCE_ROW).unique(), on=SOURCE_ROW, how="semi")
            originals = wanted.select(
                SOURCE_ROW, pl.struct([pl.col(name) for name in self.columns]).struct.json_encode().alias("raw_record")
            )
        return rows.join(originals, on=SOURCE_ROW, how="left")
