"""Reading a study workbook: the first sheet, every cell as text (the study's columns mix types)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from lfh.landing.errors import UnreadableFileError
from lfh.landing.records import SOURCE_ROW, RawRecords
from lfh.landing.xlsx_formulas import uncached_formulas

FORMULA_SUFFIX = ":formula"


def read_xlsx_records(path: Path) -> RawRecords:
    try:
        frame = pl.read_excel(path, engine="calamine", infer_schema_length=0)
    except Exception as exc:  # fastexcel raises its own exception types for corrupt or non-xlsx files
        raise UnreadableFileError(path, f"not a readable .xlsx workbook ({type(exc).__name__}: {exc})") from exc
    frame = frame.rename({name: name.strip() for name in frame.columns if name != name.strip()})
    columns = list(frame.columns)
    frame = frame.with_row_index(SOURCE_ROW, offset=1).with_columns(pl.col(SOURCE_ROW).cast(pl.Int64))
    # a formula without a saved value reads as an empty cell: name it in a "<column>:formula" column (hand-label
    # cells are rejected with it rather than read as unlabeled)
    for name, rows in uncached_formulas(path).items():
        if name in frame.columns:
            frame = frame.with_columns(pl.col(SOURCE_ROW).replace_strict(rows, default=None, return_dtype=pl.String)
                                       .alias(formula_column(name)))
    return RawRecords(frame=frame, columns=columns, source_kind="study_xlsx")


def formula_column(name: str) -> str:
    return f"{name}{FORMULA_SUFFIX}"
