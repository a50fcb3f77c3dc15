"""Validation of a user's lexicon file: every problem names the file, the row and the reason."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from lfh.lexicon.custom import PCT_COLUMNS, CustomLexiconError, read_custom_lexicon


def write(tmp_path: Path, text: str, name: str = "mine.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_csv_with_some_columns(tmp_path: Path) -> None:
    path = write(tmp_path, "first_name,pct_white,pct_mena\nJohn,82.5,0.1\n Amira ,,61\n")
    table = read_custom_lexicon(path)
    assert table.provided_columns == ["pct_white", "pct_mena"]
    assert table.frame.columns == ["first_name", *PCT_COLUMNS, "source_row"]
    assert table.frame.select("first_name", "pct_white", "pct_mena", "pct_black", "source_row").rows() == [
        ("John", 82.5, 0.1, None, 1), ("Amira", None, 61.0, None, 2),
    ]
    assert table.warnings == []


def test_parquet_and_fraction_scale(tmp_path: Path) -> None:
    path = tmp_path / "mine.parquet"
    pl.DataFrame({"first_name": ["Sione"], "pct_nhpi": [0.66]}).write_parquet(path)
    assert read_custom_lexicon(path, scale="fraction").frame["pct_nhpi"].to_list() == [pytest.approx(66.0)]
    warned = read_custom_lexicon(path)
    assert warned.warnings and "--custom-scale fraction" in warned.warnings[0]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("name,pct_white\nJohn,80\n", r"mine\.csv: no 'first_name' column \(found: name, pct_white\)"),
        ("first_name,pct_hispanic\nJohn,8\n", r"mine\.csv: unknown column\(s\) pct_hispanic; allowed: first_name"),
        ("first_name\nJohn\n", r"mine\.csv: no percentage column"),
        ("first_name,pct_white\n", r"mine\.csv: has a header but no rows"),
        ("first_name,pct_white\nJohn,80\n,10\n", r"mine\.csv: row 2: empty first_name"),
        ("first_name,pct_white\nJohn,80\nAnn,abc\n", r"mine\.csv: row 2: pct_white = 'abc' is not a number"),
        ("first_name,pct_white\nJohn,180\n", r"mine\.csv: row 1: pct_white = 180.0 is outside 0-100"),
        ("first_name,pct_white\nJohn,-1\n", r"mine\.csv: row 1: pct_white = -1.0 is outside 0-100"),
        ("first_name,pct_white\nJohn,80\nAnn,1\nJohn,70\n", r"mine\.csv: rows 1, 3: first_name 'John' appears twice"),
    ],
)
def test_invalid_files(tmp_path: Path, content: str, message: str) -> None:
    with pytest.raises(CustomLexiconError, match=message):
        read_custom_lexicon(write(tmp_path, content))


def test_unreadable_or_unknown_files(tmp_path: Path) -> None:
    with pytest.raises(CustomLexiconError, match="no such file"):
        read_custom_lexicon(tmp_path / "absent.csv")
    with pytest.raises(CustomLexiconError, match=r"unknown format \.xlsx"):
        read_custom_lexicon(write(tmp_path, "x", name="mine.xlsx"))
    with pytest.raises(CustomLexiconError, match=r"mine\.parquet: cannot be read as parquet"):
        read_custom_lexicon(write(tmp_path, "not parquet", name="mine.parquet"))
