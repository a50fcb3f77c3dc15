"""Reading the project's CSV files: every cell as text (types are checked later, column by column)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from lfh.landing.errors import UnreadableFileError
from lfh.landing.records import SOURCE_ROW, RawRecords


def read_csv_records(path: Path) -> RawRecords:
    try:
        frame = pl.read_csv(path, infer_schema_length=0)
    except (pl.exceptions.PolarsError, OSError, UnicodeDecodeError) as exc:
        raise UnreadableFileError(path, f"not a readable CSV file with a header row ({exc})") from exc
    columns = list(frame.columns)
    frame = frame.with_row_index(SOURCE_ROW, offset=1).with_columns(pl.col(SOURCE_ROW).cast(pl.Int64))
    return RawRecords(frame=frame, columns=columns, source_kind="csv")
