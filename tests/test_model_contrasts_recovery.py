"""The model contrasts (docs/CONTRASTS.md) recover what the simulator planted between models. Three simulated models:
two identical (every contrast between them is planted equal) and one with planted differences in race and gender
shares (race_multiplier, gender_multiplier) and in who is cast as subordinate (the per-model condition_multiplier).

Rules: planted differences that the corpus can detect (the planted log ratio at least 4 standard errors from 0
at the planted expected counts) are found (q < 0.05) in the planted direction in at least 80% of the cells, and
no contrast is significant against its planted direction; planted-equal contrasts come out tied at about the
nominal rate (p < 0.05 in 1.5%–9% of them, q < 0.05 in at most 5%)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import duckdb
import polars as pl
import pytest
from conftest import PLANTED_TRUTH
from fixtures_simulate import planted_models

from lfh.simulate.config import load_config

pytestmark = pytest.mark.slow
Built = tuple[pl.DataFrame, dict, pl.DataFrame, pl.DataFrame]  # contrasts, planted truth, characters, rankings
SHARE_KEYS = ["domain", "condition", "race", "gender"]
RATIO_KEYS = ["domain", "race", "gender"]
DETECTABLE_Z = 4.0  # planted |ln ratio| / its standard error at the planted expected counts


@pytest.fixture(scope="module")
def built(simulated_build: Path) -> Built:
    """The shared simulated corpus (tests/conftest.py's simulated_build: planted_models, 20 stories a prompt)."""
    db_path = simulated_build / "warehouse" / "lfh.duckdb"
    connection = duckdb.connect(str(db_path), read_only=True)
    try:
        contrasts = connection.sql("select * from marts.fct_model_contrasts").pl()
        characters = connection.sql("select * from marts.fct_characters").pl()
        rankings = connection.sql("select * from marts.fct_model_rankings").pl()
    finally:
        connection.close()
    truth = json.loads((simulated_build / PLANTED_TRUTH).read_text(encoding="utf-8"))
    return contrasts, truth, characters, rankings


def _pair_sides(truth: pl.DataFrame, keys: list[str], value: str) -> tuple[pl.DataFrame, ...]:
    return tuple(truth.filter(pl.col("model") != "All").select(
        *keys, pl.col("model").alias(f"model_{side}"), pl.col(value).alias(f"planted_{side}"),
        pl.col("planted_log_variance").alias(f"planted_log_variance_{side}")) for side in ("a", "b"))


def planted_contrasts(contrasts: pl.DataFrame, truth: dict) -> pl.DataFrame:
    """The mart's contrasts with the planted log ratio, and the z-score the planted difference would have with the
    planted expected counts (binomial log variances 1/N - 1/D, conservative for race): how detectable it is."""
    representation = pl.DataFrame(truth["representation"]).with_columns(
        (1 / pl.col("expected_numerator") - 1 / pl.col("expected_denominator")).alias("planted_log_variance"))
    a, b = _pair_sides(representation, SHARE_KEYS, "expected_share")
    shares = contrasts.filter(pl.col("measure") == "representation") \
        .join(a, on=[*SHARE_KEYS, "model_a"], nulls_equal=True).join(b, on=[*SHARE_KEYS, "model_b"], nulls_equal=True)
    subordination = pl.DataFrame(truth["subordination"]).with_columns(
        (1 / pl.col("expected_subordinate_numerator") - 1 / pl.col("expected_subordinate_denominator")
         + 1 / pl.col("expected_dominant_numerator") - 1 / pl.col("expected_dominant_denominator"))
        .alias("planted_log_variance"))
    a, b = _pair_sides(subordination, RATIO_KEYS, "expected_ratio")
    ratios = contrasts.filter(pl.col("measure") == "subordination") \
        .join(a, on=[*RATIO_KEYS, "model_a"], nulls_equal=True).join(b, on=[*RATIO_KEYS, "model_b"], nulls_equal=True)
    columns = ["measure", *SHARE_KEYS, "model_a", "model_b", "log_ratio", "contrast_p_value", "contrast_q_value",
               "planted_a", "planted_b", "planted_log_variance_a", "planted_log_variance_b"]
    return pl.concat([shares.select(columns), ratios.select(columns)]).with_columns(
        (pl.col("planted_a") / pl.col("planted_b")).log().alias("planted_log_ratio")).with_columns(
        (pl.col("planted_log_ratio").abs()
         / (pl.col("planted_log_variance_a") + pl.col("planted_log_variance_b")).sqrt()).alias("planted_z"))


def detectable(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.filter(pl.col("planted_z") >= DETECTABLE_Z)


def planted_equal(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.filter(pl.col("planted_log_ratio").abs() < 1e-9)


def test_every_pair_and_group_is_compared(built: Built) -> None:
    contrasts, truth, _characters, _rankings = built
    frame = planted_contrasts(contrasts, truth)
    assert frame.height == contrasts.filter(pl.col("contrast_p_value").is_not_null()).height
    assert set(zip(frame["model_a"], frame["model_b"], strict=True)) == {
        ("Sim-A", "Sim-B"), ("Sim-A", "Sim-D"), ("Sim-B", "Sim-D")}


@pytest.mark.parametrize("measure", ["representation", "subordination"])
def test_planted_differences_are_found_in_the_planted_direction(built: Built, measure: str) -> None:
    contrasts, truth, _characters, _rankings = built
    frame = planted_contrasts(contrasts, truth).filter(pl.col("measure") == measure)
    planted = detectable(frame)
    assert planted.height >= 5, f"{measure}: only {planted.height} detectable planted differences"
    found = planted.filter((pl.col("contrast_q_value") < 0.05)
                           & (pl.col("log_ratio").sign() == pl.col("planted_log_ratio").sign()))
    share_found = found.height / planted.height
    print(f"{measure}: {found.height} of {planted.height} detectable planted differences found ({share_found:.0%})")
    assert share_found >= 0.80, planted.join(found, on=planted.columns, how="anti", nulls_equal=True)
    different = frame.filter(pl.col("planted_log_ratio").abs() >= 1e-9)
    wrong = different.filter((pl.col("contrast_q_value") < 0.05)
                             & (pl.col("log_ratio").sign() != pl.col("planted_log_ratio").sign()))
    assert wrong.is_empty(), f"{measure}: significant against the planted direction:\n{wrong}"


def test_planted_equal_models_tie_at_about_the_nominal_rate(built: Built) -> None:
    contrasts, truth, _characters, _rankings = built
    equal = planted_equal(planted_contrasts(contrasts, truth))
    assert equal.height >= 300, f"only {equal.height} planted-equal contrasts"
    assert set(equal["model_a"]) == {"Sim-A"} and set(equal["model_b"]) == {"Sim-B"}
    rejected = (equal["contrast_p_value"] < 0.05).mean()
    false_discoveries = (equal["contrast_q_value"] < 0.05).mean()
    print(f"planted-equal contrasts: {equal.height}, p < 0.05 in {rejected:.1%}, q < 0.05 in {false_discoveries:.1%}")
    assert 0.015 <= rejected <= 0.09, f"p < 0.05 in {rejected:.1%} of planted-equal contrasts (nominal 5%)"
    assert false_discoveries <= 0.05


def test_the_recovery_rule_rejects_a_wrong_truth(built: Built) -> None:
    """Negative control: claiming the planted-different model equal to the others must fail the tie rule."""
    contrasts, truth, _characters, _rankings = built
    frame = planted_contrasts(contrasts, truth)
    claimed_equal = frame.filter(pl.col("model_b") == "Sim-D")
    assert (claimed_equal["contrast_p_value"] < 0.05).mean() > 0.09


def test_the_default_simulation_plants_no_condition_difference_between_models() -> None:
    assert all(model.condition_multiplier == {} for model in load_config().models)


def test_a_per_model_condition_multiplier_changes_only_its_model() -> None:
    from lfh.simulate.design import build_design

    design = build_design(replace(load_config(), models=planted_models()))
    rows = design.rows.with_columns(pl.Series("white", design.pool_mix[:, 0]))
    white = {(model, condition): share for model, condition, share in
             rows.group_by("model", "condition").agg(pl.col("white").mean()).iter_rows()}
    for condition in ("baseline", "dominant", "subordinate"):
        assert white["Sim-A", condition] == white["Sim-B", condition]
    assert white["Sim-D", "subordinate"] < 0.6 * white["Sim-A", "subordinate"]
    assert white["Sim-D", "dominant"] > white["Sim-A", "dominant"]


GENDERS = ("female", "male", "nonbinary")
RACES = ("aian", "asian", "black", "latine", "mena", "nhpi", "white", "multiracial")


def independent_moments(characters: pl.DataFrame) -> pl.DataFrame:
    """N, D and Q (sum of squared per-character values) per model, domain, condition and group, straight from
    fct_characters in polars (docs/METHOD.md §6 denominators), without the SQL of int_group_moments_summed."""
    keys = ["model", "domain", "condition"]
    matched = characters.filter(pl.col("name_matched"))
    known = pl.col("gender").is_in(GENDERS)
    parts = []
    for race in RACES:
        weight = pl.col(f"weight_{race}").fill_null(0.0)
        parts.append(matched.group_by(keys).agg(
            pl.lit(race).alias("race"), pl.lit(None, pl.String).alias("gender"), weight.sum().alias("n"),
            pl.len().cast(pl.Float64).alias("d"), (weight * weight).sum().alias("q")))
        for gender in GENDERS:
            mine = (pl.col("gender") == gender).cast(pl.Float64)
            parts.append(matched.group_by(keys).agg(
                pl.lit(race).alias("race"), pl.lit(gender).alias("gender"), (weight * mine).sum().alias("n"),
                known.sum().cast(pl.Float64).alias("d"), (weight * weight * mine).sum().alias("q")))
    for gender in GENDERS:
        mine = (pl.col("gender") == gender).cast(pl.Float64)
        parts.append(characters.group_by(keys).agg(
            pl.lit(None, pl.String).alias("race"), pl.lit(gender).alias("gender"), mine.sum().alias("n"),
            known.sum().cast(pl.Float64).alias("d"), mine.sum().alias("q")))
    return pl.concat(parts)


def test_contrasts_match_an_independent_computation(built: Built) -> None:
    """Every representation contrast with both counts >= 1 (no epsilon): ratio (N_a/D_a) / (N_b/D_b) and
    Var(ln) = Q_a/N_a^2 - 1/D_a + Q_b/N_b^2 - 1/D_b recomputed from fct_characters."""
    contrasts, _truth, characters, _rankings = built
    moments = independent_moments(characters)
    keys = ["domain", "condition", "race", "gender"]
    a = moments.rename({"model": "model_a", "n": "n_a", "d": "d_a", "q": "q_a"})
    b = moments.rename({"model": "model_b", "n": "n_b", "d": "d_b", "q": "q_b"})
    mart = contrasts.filter((pl.col("measure") == "representation") & (pl.col("numerator_a") >= 1)
                            & (pl.col("numerator_b") >= 1))
    joined = mart.join(a, on=[*keys, "model_a"], nulls_equal=True).join(b, on=[*keys, "model_b"], nulls_equal=True)
    assert joined.height == mart.height > 500
    expected_ratio = (pl.col("n_a") / pl.col("d_a")) / (pl.col("n_b") / pl.col("d_b"))
    expected_variance = (pl.col("q_a") / pl.col("n_a") ** 2 - 1 / pl.col("d_a")
                         + pl.col("q_b") / pl.col("n_b") ** 2 - 1 / pl.col("d_b"))
    off = joined.filter(((pl.col("contrast_ratio") / expected_ratio - 1).abs() > 1e-9)
                        | ((pl.col("log_standard_error") ** 2 / expected_variance - 1).abs() > 1e-9))
    assert off.is_empty(), off


def test_identical_models_share_their_rank_range(built: Built) -> None:
    """The two identical models cannot be told apart in (nearly) every ranking: their rank ranges overlap."""
    _contrasts, _truth, _characters, rankings = built
    keys = ["measure", "domain", "condition", "race", "gender"]
    a = rankings.filter(pl.col("model") == "Sim-A").select(*keys, "rank_best", "rank_worst")
    b = rankings.filter(pl.col("model") == "Sim-B").select(*keys, "rank_best", "rank_worst")
    pairs = a.join(b, on=keys, nulls_equal=True, suffix="_b")
    assert pairs.height >= 300
    overlap = pairs.filter((pl.col("rank_best") <= pl.col("rank_worst_b"))
                           & (pl.col("rank_best_b") <= pl.col("rank_worst")))
    share = overlap.height / pairs.height
    print(f"identical models tied in {share:.1%} of {pairs.height} rankings")
    assert share >= 0.95
    assert (rankings["rank_best"] <= rankings["distance_rank"]).all()
    assert (rankings["distance_rank"] <= rankings["rank_worst"]).all()
