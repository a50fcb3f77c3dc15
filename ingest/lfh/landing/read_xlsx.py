"""Reading a study workbook: the first sheet, every cell as text (the study's columns mix types)."""

from __future__ import annotations

import re
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
    _refuse_repeated_headers(path, frame.columns)
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


def _refuse_repeated_headers(path: Path, names: list[str]) -> None:
    """A header given twice (two `Manual Subject Gender` columns) is refused: which of the two holds the labels is
    the person's to say. The reader renames a repeat `<name>_1`, so a name of that form whose base is also a column
    is checked against the sheet's own first row."""
    stripped = [name.strip() for name in names]
    suspects = [name for name in names if _REPEAT.fullmatch(name) and _REPEAT.fullmatch(name).group(1) in names]
    if suspects or len(set(stripped)) < len(stripped):
        try:
            header = pl.read_excel(path, engine="calamine", has_header=False, infer_schema_length=0,
                                   read_options={"n_rows": 1}).row(0)
        except Exception:  # noqa: BLE001 (the sheet was readable a moment ago; fall back to the names read)
            header = tuple(names)
        stripped = ["" if name is None else str(name).strip() for name in header]
    repeated = sorted({name for name in stripped if name and stripped.count(name) > 1})
    if repeated:
        columns = "; ".join(f"{name!r} in columns "
                            + " and ".join(column_letter(index) for index, value in enumerate(stripped)
                                           if value == name) for name in repeated)
        raise UnreadableFileError(path, f"a column header appears twice ({columns}): keep one of each (delete or "
                                        "rename the other) and ingest the workbook again")


_REPEAT = re.compile(r"(.+)_(\d+)")


def column_letter(index: int) -> str:
    """The spreadsheet's letters of the column at 0-based index (0 -> A, 26 -> AA)."""
    letters = ""
    index += 1
    while index:
        index, remainder = divmod(index - 1, 26)
        letters = chr(65 + remainder) + letters
    return letters


def formula_column(name: str) -> str:
    return f"{name}{FORMULA_SUFFIX}"
