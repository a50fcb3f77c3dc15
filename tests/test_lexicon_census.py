"""The Census first-name reader: column mapping, aggregate row, fractions, suppressed cells."""

from __future__ import annotations

import io

import polars as pl
import pytest

from lfh.lexicon.census import read_census_first_names


def census_parquet(**overrides: list) -> bytes:
    """A three-row table shaped like census_2020_first_names.parquet (values invented, rows sum to 100)."""
    columns: dict[str, list] = {
        "name": ["JOHN", "MARIA", "ALL OTHER NAMES"],
        "rank": [1, 2, None],
        "count": [3000, 1500, 90000],
        "prop100k": [1.0, 0.5, 30.0],
        "cum_prop100k": [1.0, 1.5, 100000.0],
        "pctwhite": [80.0, 14.0, 25.0],
        "pctblack": [6.0, 1.0, 29.0],
        "pctapi": [2.0, 3.0, 23.0],
        "pctaian": [1.0, 0.5, 1.0],
        "pct2prace": [3.0, 0.5, 4.0],
        "pcthispanic": [8.0, 81.0, 18.0],
        "pctmale": [99.0, 1.0, 41.0],
        "pctfemale": [1.0, 99.0, 59.0],
    }
    columns.update(overrides)
    buffer = io.BytesIO()
    pl.DataFrame(columns).write_parquet(buffer)
    return buffer.getvalue()


def test_columns_are_mapped_and_aggregate_row_dropped() -> None:
    table = read_census_first_names(census_parquet(), "c.parquet")
    assert table.dropped_aggregate_rows == 1 and not table.scaled_from_fraction and table.suppressed_cells == 0
    assert table.frame.columns == ["first_name", "n_total", "pct_white", "pct_black", "pct_latine", "pct_asian",
                                   "pct_aian", "pct_multiracial", "pct_female", "pct_male", "source_row"]
    maria = table.frame.filter(pl.col("first_name") == "MARIA").row(0, named=True)
    assert maria == {"first_name": "MARIA", "n_total": 1500, "pct_white": 14.0, "pct_black": 1.0,
                     "pct_latine": 81.0, "pct_asian": 3.0, "pct_aian": 0.5, "pct_multiracial": 0.5,
                     "pct_female": 99.0, "pct_male": 1.0, "source_row": 2}


def test_fractions_are_scaled_to_percent() -> None:
    fractions = {
        "pctwhite": [0.8, 0.14, 0.25], "pctblack": [0.06, 0.01, 0.29], "pctapi": [0.02, 0.03, 0.23],
        "pctaian": [0.01, 0.005, 0.01], "pct2prace": [0.03, 0.005, 0.04], "pcthispanic": [0.08, 0.81, 0.18],
    }
    table = read_census_first_names(census_parquet(**fractions), "c.parquet")
    assert table.scaled_from_fraction
    john = table.frame.filter(pl.col("first_name") == "JOHN").row(0, named=True)
    assert john["pct_white"] == pytest.approx(80.0) and john["pct_latine"] == pytest.approx(8.0)
    assert john["pct_male"] == pytest.approx(99.0)  # given in percent: left as it is


def test_suppressed_cells_become_null_and_are_counted() -> None:
    table = read_census_first_names(
        census_parquet(pctaian=["(S)", "0.5", "1.0"], pct2prace=["3.0", "(S)", "4.0"]), "c.parquet"
    )
    assert table.suppressed_cells == 2
    assert table.frame["pct_aian"].to_list() == [None, 0.5]
    assert table.frame["pct_multiracial"].to_list() == [3.0, None]


def test_unreadable_cell_and_missing_column_name_the_file() -> None:
    with pytest.raises(ValueError, match=r"c\.parquet: row 2: column pctaian holds 'n/a'"):
        read_census_first_names(census_parquet(pctaian=["1.0", "n/a", "1.0"]), "c.parquet")
    buffer = io.BytesIO()
    pl.DataFrame({"name": ["JOHN"], "count": [1]}).write_parquet(buffer)
    with pytest.raises(ValueError, match=r"c\.parquet: missing column\(s\) pctwhite"):
        read_census_first_names(buffer.getvalue(), "c.parquet")


def test_percentages_outside_range_are_refused() -> None:
    with pytest.raises(ValueError, match=r"row 1 \(JOHN\) has a percentage outside 0-100"):
        read_census_first_names(census_parquet(pctwhite=[180.0, 14.0, 25.0]), "c.parquet")
