"""Stratified PPI (macros/stats/ppi_stratified.sql, docs/CORRECTION.md "Strata sampled at different rates") as
compiled into the gender correction model, against the estimator written out in numpy (Fisch et al. 2024,
StratPPI with lambda = 1: theta = sum_h w_h [mean f over the unlabeled + mean (y - f) over the labeled of stratum h],
Var = sum_h w_h^2 [Var_h f / N_h + Var_h (y - f) / n_h] with sample variances, w_h = the stratum's share of the
units), on random
characters of two models sampled at very different rates; and with equal rates, the same point estimate as the
unstratified estimator (tests/test_ppi_reference.py checks that one against ppi_py)."""

from __future__ import annotations

from collections.abc import Callable

import duckdb
import numpy as np
import pytest

from bench.correction_check import COUPLE_COLUMNS, run_on_characters, units_from_couples
from lfh.categories import GENDERS

pytestmark = pytest.mark.slow  # compiles the dbt project (once per run, shared): tests/tiers.py


@pytest.fixture(scope="module")
def queries(correction_sql: Callable[[dict], dict[str, str]]) -> dict[bool, dict[str, str]]:
    """Stratified and not (tests/fixtures_shared_audit.py: compiled once per run)."""
    return {stratify: correction_sql({"ppi_stratify": stratify, "ppi_cell_pool_rule": "switch",
                                      "ppi_machine_mean": "unlabeled"})
            for stratify in (True, False)}


def characters_of(rng: np.random.Generator, model: str, unlabeled: int, labeled: int, error: float) -> list[tuple]:
    """Characters of one model (one stratum); the labeler errs at `error` (to nonbinary or unspecified), so
    models that differ in error and in sampling rate make the unweighted pooled rectifier biased."""
    rows = []
    for index in range(unlabeled + labeled):
        hand = rng.choice(["female", "male", "nonbinary", "unspecified"], p=[0.45, 0.4, 0.05, 0.1])
        noise = rng.random()
        inferred = "nonbinary" if noise < error / 2 else "unspecified" if noise < error else hand
        is_labeled = index >= unlabeled
        rows.append((f"{model}-{index}", "subject", model, "labor", "baseline", None, "actor", inferred,
                     hand if is_labeled else None, is_labeled))
    return rows


def _run(query: str, rows: list[tuple]) -> dict[tuple, tuple]:
    result = run_on_characters(query, rows,
                               "model, gender, rectifier_source, corrected_share, corrected_share_variance")
    return {(model, gender): rest for model, gender, *rest in result}


def _stratum(rows: list[tuple], gender: str) -> dict[str, np.ndarray]:
    def indicators(selected: list[tuple], column: int) -> np.ndarray:
        return np.array([[row[column] == gender, row[column] in GENDERS] for row in selected], dtype=float)
    labeled = [row for row in rows if row[9]]
    return {"units": len(rows), "f_u": indicators([row for row in rows if not row[9]], 7),
            "d": indicators(labeled, 8) - indicators(labeled, 7)}


def _stratified(f_strata: list[dict], rectifier_strata: list[dict], f_ddof: int = 1,
                rectifier_ddof: int = 1) -> tuple[float, float]:
    """r and Var r: the f part over f_strata, the rectifier over rectifier_strata, each weighted by stratum size;
    sample variances within strata (ddof 1), population ones (ddof 0) for a part that is one cell's own."""
    f_total = sum(s["units"] for s in f_strata)
    d_total = sum(s["units"] for s in rectifier_strata)
    theta = sum(s["units"] / f_total * s["f_u"].mean(axis=0) for s in f_strata) + sum(
        s["units"] / d_total * s["d"].mean(axis=0) for s in rectifier_strata)
    r = theta[0] / theta[1]
    linear = np.array([1.0, -r])  # u = a - r b
    variance = sum((s["units"] / f_total) ** 2 * (s["f_u"] @ linear).var(ddof=f_ddof) / len(s["f_u"])
                   for s in f_strata)
    variance += sum((s["units"] / d_total) ** 2 * (s["d"] @ linear).var(ddof=rectifier_ddof) / len(s["d"])
                    for s in rectifier_strata)
    return r, variance / theta[1] ** 2


def test_stratified_shares_match_numpy(queries: dict) -> None:
    rng = np.random.default_rng(2024)
    m1 = characters_of(rng, "M1", 300, 150, error=0.05)   # sampled at 1/3, a good labeler
    m2 = characters_of(rng, "M2", 600, 12, error=0.40)    # sampled at 1/50, a bad one: pooled (12 < 20)
    measured = _run(queries[True]["gender"], m1 + m2)
    for gender in GENDERS:
        s1, s2 = _stratum(m1, gender), _stratum(m2, gender)
        expected = {"M1": _stratified([s1], [s1], 0, 0), "M2": _stratified([s2], [s1, s2], 0, 1),
                    "All": _stratified([s1, s2], [s1, s2])}
        for model, (r, variance) in expected.items():
            _, share, measured_variance = measured[(model, gender)]
            assert share == pytest.approx(min(1.0, max(0.0, r)), abs=1e-12), (model, gender)
            assert measured_variance == pytest.approx(variance, rel=1e-9), (model, gender)
    assert measured[("M2", "female")][0] == "pooled"
    unweighted = _run(queries[False]["gender"], m1 + m2)
    # the unweighted pool leans on M1's good labels (150 of 162) where M2's units are 2/3 of the cell
    assert abs(unweighted[("All", "nonbinary")][1] - measured[("All", "nonbinary")][1]) > 0.01


def test_equal_rates_give_the_unstratified_estimate(queries: dict) -> None:
    rng = np.random.default_rng(7)
    rows = characters_of(rng, "M1", 300, 100, error=0.05) + characters_of(rng, "M2", 600, 200, error=0.40)
    stratified, unstratified = _run(queries[True]["gender"], rows), _run(queries[False]["gender"], rows)
    assert stratified.keys() == unstratified.keys()
    for key, (_, share, variance) in stratified.items():
        assert share == pytest.approx(unstratified[key][1], abs=1e-12), key
        # less the between-strata spread, more each stratum's n / (n - 1): here the spread wins
        assert variance <= unstratified[key][2] + 1e-15, key


def love_couples(rng: np.random.Generator) -> tuple[list[tuple], list[tuple]]:
    """One model's romantic couples (rows of int_couples_typed) and their stories' domain and condition: 200
    power-neutral stories, 100 hand-labeled, a good labeler; 400 power-laden, 20 hand-labeled, a labeler that loses
    the couple's type half the time (sampling rates 1/2 and 1/20)."""
    couples, characters = [], []
    for condition, total, labeled, error in (("baseline", 200, 100, 0.05), ("dominant", 400, 20, 0.5)):
        for index in range(total):
            story = f"{condition}-{index}"
            hand = rng.choice(["female_male", "male_male", "female_female"], p=[0.8, 0.1, 0.1])
            inferred = None if rng.random() < error else hand  # the labeler loses the couple's type
            is_labeled = index < labeled
            couples.append((story, "M1", 2, inferred, hand if is_labeled else None, 1, is_labeled))
            characters.append((story, "love", condition))
    return couples, characters


def run_on_couples(query: str, couples: list[tuple], characters: list[tuple]) -> dict[tuple, tuple]:
    """The couple correction's compiled SQL on those couples: (model, couple_type) -> (share, variance)."""
    connection = duckdb.connect()
    connection.execute(f"create table couples ({', '.join(f'{name} {kind}' for name, kind in COUPLE_COLUMNS)})")
    # each couple with its story's prompt condition (a power-neutral story's characters are in the baseline one)
    connection.executemany("insert into couples values (?, ?, ?, ?, ?, ?)", [
        (story, model, "power_neutral" if condition == "baseline" else "power_laden", inferred, hand, is_labeled)
        for (story, model, _, inferred, hand, _, is_labeled), (_, _, condition) in zip(couples, characters,
                                                                                        strict=True)])
    units_from_couples(connection, "couples")
    return {(model, kind): (share, variance) for model, kind, share, variance in connection.execute(
        f"select model, couple_type, corrected_share, corrected_share_variance from ({query})").fetchall()}


def test_couple_cells_are_stratified_by_love_condition(queries: dict) -> None:
    """A model's couples come from power-neutral and power-laden Love stories (two strata of audit-sample): sampled
    at 1/2 and 1/20, the couple cell weights them by size, as the numpy estimator does."""
    couples, characters = love_couples(np.random.default_rng(11))
    measured = run_on_couples(queries[True]["couple"], couples, characters)
    def stratum(condition: str, kind: str) -> dict:
        rows = [row for row, (_, _, cond) in zip(couples, characters, strict=True) if cond == condition]
        def indicators(selected: list[tuple], column: int) -> np.ndarray:
            return np.array([[row[column] == kind, row[column] is not None] for row in selected], dtype=float)
        labeled = [row for row in rows if row[6]]
        return {"units": len(rows), "f_u": indicators([row for row in rows if not row[6]], 3),
                "d": indicators(labeled, 4) - indicators(labeled, 3)}

    for kind in ("female_male", "male_male"):
        strata = [stratum("baseline", kind), stratum("dominant", kind)]
        r, variance = _stratified(strata, strata)
        share, measured_variance = measured[("M1", kind)]
        assert share == pytest.approx(min(1.0, max(0.0, r)), abs=1e-12), kind
        assert measured_variance == pytest.approx(variance, rel=1e-9), kind
