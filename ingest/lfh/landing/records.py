"""What every reader returns: a file's records in bounded batches, as text columns, with row numbers and a way
back to the raw record."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import polars as pl

# A column "<name>:kind" (when present) says what JSON/Parquet type the value had: string, integer, number,
# boolean, null or other. Readers of text-only formats (CSV, xlsx) leave it out: every value there is text.
KIND_SUFFIX = ":kind"
RAW_RECORD = "__raw_record"
SOURCE_ROW = "source_row"
# A reader that could read a record but not one of its values (e.g. a Parquet text cell that is not UTF-8) names
# the problem in this column; the row is rejected with it and the rest of the file lands.
ROW_PROBLEM = "__row_problem"

BATCH_ROWS_ENV_VAR = "LFH_INGEST_BATCH_ROWS"
DEFAULT_BATCH_ROWS = 50_000


def batch_rows() -> int:
    """Rows per batch read from a file: memory use grows with it, not with the file's size."""
    value = os.environ.get(BATCH_ROWS_ENV_VAR, "")
    return max(1, int(value)) if value.strip().isdigit() else DEFAULT_BATCH_ROWS


def kind_column(name: str) -> str:
    return f"{name}{KIND_SUFFIX}"


@dataclass(frozen=True)
class RawRecords:
    """One batch of a file's records. frame: `source_row` (1-based data row in the file) plus one String column per
    column/key of the file (named as in the file) and optional kind columns. describe_columns lists every
    column/key of the file for error messages (default: columns). raw_records_later: the batch cannot rebuild its
    original records (JSON lines): rejections get them from the file's RecordStream after the last batch."""

    frame: pl.DataFrame
    columns: list[str]
    source_kind: str
    describe_columns: Callable[[], list[str]] | None = None
    raw_records_later: bool = False

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
        """rows (with source_row) joined to the JSON text of their original records, as `raw_record` (null when
        raw_records_later: the stream fills it in)."""
        if self.raw_records_later:
            return rows.with_columns(pl.lit(None, dtype=pl.String).alias("raw_record"))
        wanted = self.frame.join(rows.select(SOURCE_ROW).unique(), on=SOURCE_ROW, how="semi")
        originals = wanted.select(
            SOURCE_ROW, pl.struct([pl.col(name) for name in self.columns]).struct.json_encode().alias("raw_record")
        )
        return rows.join(originals, on=SOURCE_ROW, how="left")


def _no_completion(rejects: pl.DataFrame) -> Iterator[pl.DataFrame]:
    yield rejects


@dataclass
class RecordStream:
    """A file opened for reading: its batches (read lazily, one at a time) and, for formats whose batches leave
    raw records for later, complete_rejects(rejects) -> the same rejects with raw_record (and a reason that only
    the raw text can tell, e.g. malformed JSON) filled in, in bounded frames."""

    source_kind: str
    batches: Iterator[RawRecords]
    complete_rejects: Callable[[pl.DataFrame], Iterator[pl.DataFrame]] = field(default=_no_completion)


def row_offsets(frame: pl.DataFrame, first_row: int) -> pl.DataFrame:
    """frame with source_row = first_row, first_row + 1, ... (rows are numbered across a file's batches)."""
    return frame.with_row_index(SOURCE_ROW, offset=0).with_columns(
        (pl.col(SOURCE_ROW).cast(pl.Int64) + first_row).alias(SOURCE_ROW)).select(
        SOURCE_ROW, *[name for name in frame.columns if name != SOURCE_ROW])
