"""The whole pipeline recovers what the simulator planted: simulate (small test lexicon) -> ingest -> dbt build,
then every mart cell with enough data is compared with the planted truth written next to the corpus.

Rule: the planted value lies inside the mart's 95% interval for at least 90% of the cells with enough
data, and no cell is off by more than its interval's width."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import polars as pl
import pytest
from conftest import PLANTED_TRUTH
from test_measures_pipeline import CHARACTER_COLUMNS, compare, fetch
from test_occupation_reference import occupation_ratios, read_occupations, read_workforce

from lfh.paths import project_root

pytestmark = pytest.mark.slow
MIN_EXPECTED_COUNT = 10.0  # expected numerator and expected (denominator - numerator) both at least this


@pytest.fixture(scope="module")
def built(simulated_build: Path) -> tuple[Path, dict]:
    """The shared simulated corpus (tests/conftest.py's simulated_build: 3 models, 20 stories a prompt, built with
    every model and data test), and what the simulator planted in it."""
    truth = json.loads((simulated_build / PLANTED_TRUTH).read_text(encoding="utf-8"))
    return simulated_build / "warehouse" / "lfh.duckdb", truth


def _mart(db_path: Path, name: str) -> pl.DataFrame:
    connection = duckdb.connect(str(db_path), read_only=True)
    try:
        return connection.sql(f"select * from marts.{name}").pl()
    finally:
        connection.close()


def _check(frame: pl.DataFrame, observed: str, planted: str, lower: str, upper: str, what: str) -> None:
    assert frame.height >= 20, f"{what}: only {frame.height} cells with enough data to compare"
    inside = frame.filter((pl.col(planted) >= pl.col(lower)) & (pl.col(planted) <= pl.col(upper)))
    share_inside = inside.height / frame.height
    far = frame.filter((pl.col(observed) - pl.col(planted)).abs() > (pl.col(upper) - pl.col(lower)))
    print(f"{what}: {frame.height} cells, planted value inside the interval in {share_inside:.1%}")
    assert share_inside >= 0.90, (
        f"{what}: planted value inside the 95% interval in only {share_inside:.1%} of {frame.height} cells; "
        f"misses:\n{frame.join(inside, on=frame.columns, how='anti').head(12)}")
    assert far.is_empty(), f"{what}: cells off by more than their interval's width:\n{far.head(12)}"


def _share_cells(mart: pl.DataFrame, planted: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """A share mart joined to the planted shares, where the expected numerator and its complement have enough data."""
    return mart.join(planted, on=keys, how="inner", nulls_equal=True).filter(
        (pl.col("expected_numerator") >= MIN_EXPECTED_COUNT)
        & (pl.col("expected_denominator") - pl.col("expected_numerator") >= MIN_EXPECTED_COUNT))


def _subordination_cells(db_path: Path, planted: pl.DataFrame) -> pl.DataFrame:
    """The subordination mart joined to the planted ratios, where both expected numerators have enough data."""
    mart = _mart(db_path, "fct_subordination_ratios")
    return mart.join(planted, on=["model", "domain", "race", "gender"], how="inner", nulls_equal=True).filter(
        (pl.col("expected_subordinate_numerator") >= MIN_EXPECTED_COUNT)
        & (pl.col("expected_dominant_numerator") >= MIN_EXPECTED_COUNT))


def test_marts_have_characters(built: tuple[Path, dict]) -> None:
    db_path, _truth = built
    characters = _mart(db_path, "fct_characters")
    assert characters.height > 0, "marts.fct_characters is empty: the cleaning models have not produced characters"


def test_representation_shares_recover_the_planted_truth(built: tuple[Path, dict]) -> None:
    db_path, truth = built
    planted = pl.DataFrame(truth["representation"]).rename({"expected_share": "planted_share"})
    mart = _mart(db_path, "fct_representation_ratios")
    joined = _share_cells(mart, planted, ["model", "domain", "condition", "race", "gender"])
    _check(joined, "observed_share", "planted_share", "share_ci_lower", "share_ci_upper", "representation shares")


def test_subordination_ratios_recover_the_planted_truth(built: tuple[Path, dict]) -> None:
    db_path, truth = built
    joined = _subordination_cells(db_path, pl.DataFrame(truth["subordination"]))
    _check(joined, "subordination_ratio", "expected_ratio", "ci_lower", "ci_upper", "subordination ratios")


def test_couple_types_recover_the_planted_shares(built: tuple[Path, dict]) -> None:
    db_path, truth = built
    planted = pl.DataFrame(truth["couples"]).rename({"expected_share": "planted_share"})
    mart = _mart(db_path, "fct_sexual_orientation_ratios")
    joined = mart.join(planted, on=["model", "couple_type"], how="inner").with_columns(
        (pl.col("planted_share") / pl.col("expected_share")).alias("planted_ratio"))
    assert joined.height == len(truth["couples"]), "a model or couple type is missing from the mart"
    # every couple type's planted ratio must sit inside the interval; too few rows for the 90% rule
    enough = joined.filter(pl.col("planted_share") * pl.col("denominator") >= MIN_EXPECTED_COUNT)
    outside = enough.filter(~pl.col("planted_ratio").is_between(pl.col("ci_lower"), pl.col("ci_upper")))
    assert outside.height <= max(1, enough.height // 10), f"couple types outside their interval:\n{outside}"


def test_name_coverage_matches_the_planted_naming_rate(built: tuple[Path, dict]) -> None:
    db_path, truth = built
    planted = pl.DataFrame(truth["coverage"])
    mart = _mart(db_path, "fct_name_coverage")
    joined = mart.join(planted, on=["model", "domain", "condition"], how="inner", suffix="_planted")
    assert joined.height > 0, "fct_name_coverage has no rows for the simulated models"
    p = pl.col("expected_matched_share")
    four_standard_errors = 4 * (p * (1 - p) / pl.col("characters")).sqrt()
    off = joined.filter((pl.col("matched_share") - p).abs() > four_standard_errors)
    assert off.is_empty(), f"matched-name share far from the planted naming rate:\n{off}"


def test_occupation_shares_recover_the_planted_truth(built: tuple[Path, dict]) -> None:
    """The occupation holders' female share (among female and male) and race shares recover what the
    simulator planted for the subject role of each Labor prompt."""
    db_path, truth = built
    planted = pl.DataFrame(truth["occupations"]).rename({"expected_share": "planted_share"})
    mart = _mart(db_path, "fct_occupation_representation_ratios")
    keys = ["model", "occupation", "condition", "race", "gender"]
    assert mart.join(planted, on=keys, how="anti", nulls_equal=True).is_empty(), "mart rows with no planted truth"
    joined = _share_cells(mart, planted, keys)
    _check(joined, "observed_share", "planted_share", "share_ci_lower", "share_ci_upper", "occupation shares")


def test_occupation_mart_matches_the_independent_computation(built: tuple[Path, dict]) -> None:
    db_path, _truth = built
    seeds = project_root() / "seeds"
    connection = duckdb.connect(str(db_path), read_only=True)
    try:
        characters = fetch(connection, f"select {CHARACTER_COLUMNS} from marts.fct_characters")
        mart_rows = fetch(connection, "select * from marts.fct_occupation_representation_ratios")
    finally:
        connection.close()
    expected = occupation_ratios(characters, read_occupations(seeds), read_workforce(seeds))
    # every Labor occupation x condition x compared group, for the 3 simulated models and 'All'
    assert len(expected) == 4 * 15 * 2 * 4
    problems = compare("fct_occupation_representation_ratios", mart_rows,
                       ("model", "occupation", "condition", "race", "gender"), expected)
    assert not problems, "\n".join(problems[:40])


def test_the_comparison_rejects_a_wrong_truth(built: tuple[Path, dict]) -> None:
    """Negative control: claiming 'no subordination at all' (every ratio 1) must fail the same rule."""
    db_path, truth = built
    joined = _subordination_cells(
        db_path, pl.DataFrame(truth["subordination"]).with_columns(pl.lit(1.0).alias("expected_ratio")))
    with pytest.raises(AssertionError):
        _check(joined, "subordination_ratio", "expected_ratio", "ci_lower", "ci_upper", "wrong truth")
