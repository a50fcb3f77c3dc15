"""The machine-label mean over all units of a cell (var ppi_machine_mean = all_units; macros/stats/ppi_machine_mean.sql,
docs/CORRECTION.md "The machine-label mean over all units"):

    theta = lam * mean of f over the T units of the cell + the rectifier (own, pooled, stratified)

checked three ways: (1) its superpopulation variance [Var(y) - Var(y - lam f)] / T + Var(y - lam f) / n, by
simulation; (2) the compiled gender and couple correction SQL on random units against a numpy statement written
straight from the definition (every unit's coefficient in theta, the variance summed over the groups of iid units:
a stratum's unlabeled and its hand-labeled units); (3) an own cell of one stratum against ppi_py with lam N / T
(the estimator is plain PPI with that lam)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl
import pytest
from scipy.stats import norm
from test_ppi_stratified import characters_of, love_couples, run_on_couples

from bench.correction_check import run_on_characters
from lfh.audit.plan import MACHINE_MEANS, PlanSettings, build_plan, cell_variance
from lfh.categories import GENDERS


def test_the_variance_formula_by_simulation() -> None:
    """T units (y, f) drawn from a fixed joint law, n of them hand-labeled at random: the spread of
    lam mean_T(f) + mean_n(y - lam f) over 40,000 draws matches [Var y - Var(y - lam f)] / T + Var(y - lam f) / n,
    and never grows with n."""
    rng = np.random.default_rng(20)
    # joint law of (y, f): a binary share with a labeler that errs both ways
    law = np.array([[0.50, 0.06], [0.10, 0.34]])  # rows y = 0, 1; columns f = 0, 1
    outcomes = np.array([(y, f) for y in (0, 1) for f in (0, 1)], dtype=float)
    p = law.reshape(-1)
    T, draws = 60, 40_000
    for lam in (1.0, 0.6):
        d = outcomes[:, 0] - lam * outcomes[:, 1]
        var_y = p @ outcomes[:, 0] ** 2 - (p @ outcomes[:, 0]) ** 2
        var_d = p @ d**2 - (p @ d) ** 2
        formulas = []
        for n in (10, 30, 50):
            units = outcomes[rng.choice(4, size=(draws, T), p=p)]
            labeled = units[:, :n]  # the first n of an iid sample are a random subsample
            theta = lam * units[:, :, 1].mean(axis=1) + (labeled[:, :, 0] - lam * labeled[:, :, 1]).mean(axis=1)
            formula = (var_y - var_d) / T + var_d / n
            assert theta.var() == pytest.approx(formula, rel=0.04), (lam, n)
            # the same as plain PPI with lam N / T on the N unlabeled units
            c = lam * (T - n) / T
            var_f = p @ outcomes[:, 1] ** 2 - (p @ outcomes[:, 1]) ** 2
            dc = outcomes[:, 0] - c * outcomes[:, 1]
            assert c * c * var_f / (T - n) + (p @ dc**2 - (p @ dc) ** 2) / n == pytest.approx(formula, rel=1e-12)
            formulas.append(formula)
        assert formulas == sorted(formulas, reverse=True)


# ------------------------------------------------------------------ the compiled SQL against the definition


def _units(rows: list[tuple], gender: str) -> list[dict]:
    """(stratum = model, f_a, f_b, y_a, y_b, labeled) of every character."""
    def indicators(value: str | None) -> tuple[float, float]:
        return float(value == gender), float(value in GENDERS)
    return [{"stratum": row[2], "f": indicators(row[7]), "y": indicators(row[8]), "labeled": row[9]} for row in rows]


def definition(units: list[dict], cell: set[str], source: set[str], lam: float, f_ddof: int,
               rectifier_ddof: int) -> tuple[float, float, float]:
    """r and Var r of theta = lam * (sum of f over the cell's units) / T_c + sum_h w'_h mean_{n_h}(y - lam f) over
    the source strata with a hand label (w'_h = T_h / their total), from every unit's coefficients: Var = sum over
    the groups of iid units (a stratum's unlabeled, its labeled) of size * Var(coefficient . values), linearised at
    r; f_ddof for the unlabeled groups, rectifier_ddof for the labeled ones. Also the estimate of b."""
    strata = {unit["stratum"] for unit in units}
    size = {h: sum(u["stratum"] == h for u in units) for h in strata}
    labeled_n = {h: sum(u["stratum"] == h and u["labeled"] for u in units) for h in strata}
    t_cell = sum(size[h] for h in cell)
    t_labeled = sum(size[h] for h in source if labeled_n[h] > 0)
    groups: dict[tuple, list[np.ndarray]] = {}
    theta = np.zeros(2)
    for unit in units:
        h = unit["stratum"]
        f, y = np.array(unit["f"]), np.array(unit["y"])
        coefficient_f = lam / t_cell if h in cell else 0.0
        coefficient_y = 0.0
        if unit["labeled"] and h in source:
            weight = size[h] / t_labeled / labeled_n[h]
            coefficient_f -= lam * weight
            coefficient_y = weight
        value = coefficient_f * f + coefficient_y * y
        theta += value
        groups.setdefault((h, unit["labeled"]), []).append(value)
    r = theta[0] / theta[1]
    variance = 0.0
    for (_, labeled), values in groups.items():
        linear = np.array(values) @ np.array([1.0, -r]) / theta[1]
        if len(linear) > 1 and np.any(linear != 0):
            variance += len(linear) * linear.var(ddof=rectifier_ddof if labeled else f_ddof)
    return r, variance, theta[1]


RULES = ("switch", "composite")  # var ppi_cell_pool_rule; the definition below states the switch's rectifiers


@pytest.fixture(scope="module")
def compiled(correction_sql: Callable[[dict], dict[str, str]]) -> dict[tuple[str, str], dict[str, str]]:
    """The correction SQL under each machine mean and rule (tests/fixtures_shared_audit.py: compiled once per run)."""
    return {(mode, rule): correction_sql({"ppi_machine_mean": mode, "ppi_cell_pool_rule": rule})
            for mode in MACHINE_MEANS for rule in RULES}


@pytest.fixture(scope="module")
def queries(compiled: dict[tuple[str, str], dict[str, str]]) -> dict[str, str]:
    return compiled[("all_units", "switch")]


@pytest.mark.slow
def test_gender_cells_match_the_definition(queries: dict[str, str]) -> None:
    """An own cell (M1, 150 of 450 hand-labeled), a pooled cell (M2, 12 of 612: the pool's rectifier, and its own
    12 units in both terms) and the 'All' cell (strata M1, M2 sampled at 1/3 and 1/50)."""
    rng = np.random.default_rng(2026)
    rows = characters_of(rng, "M1", 300, 150, error=0.05) + characters_of(rng, "M2", 600, 12, error=0.40)
    measured = {(model, gender): rest for model, gender, *rest in run_on_characters(
        queries["gender"], rows, "model, gender, rectifier_source, corrected_share, corrected_share_variance")}
    for gender in GENDERS:
        units = _units(rows, gender)
        expected = {"M1": definition(units, {"M1"}, {"M1"}, 1.0, 0, 0),
                    "M2": definition(units, {"M2"}, {"M1", "M2"}, 1.0, 0, 1),
                    "All": definition(units, {"M1", "M2"}, {"M1", "M2"}, 1.0, 1, 1)}
        for model, (r, variance, _) in expected.items():
            _, share, measured_variance = measured[(model, gender)]
            assert share == pytest.approx(min(1.0, max(0.0, r)), abs=1e-12), (model, gender)
            assert measured_variance == pytest.approx(variance, rel=1e-9), (model, gender)
    assert measured[("M2", "female")][0] == "pooled" and measured[("M1", "female")][0] == "cell"


@pytest.mark.slow
def test_an_own_cell_is_ppi_python_with_lambda_n_over_t(queries: dict[str, str]) -> None:
    ppi_py = pytest.importorskip("ppi_py")
    rng = np.random.default_rng(5)
    rows = characters_of(rng, "M1", 80, 40, error=0.2)
    measured = {(gender,): rest for model, gender, *rest in run_on_characters(
        queries["gender"], rows, "model, gender, corrected_share, corrected_share_variance") if model == "M1"}
    lam = 80 / 120
    for gender in GENDERS:
        units = _units(rows, gender)
        f_u = np.array([u["f"] for u in units if not u["labeled"]])
        f_l = np.array([u["f"] for u in units if u["labeled"]])
        y = np.array([u["y"] for u in units if u["labeled"]])
        theta = [float(np.squeeze(ppi_py.ppi_mean_pointestimate(y[:, k], f_l[:, k], f_u[:, k], lam=lam)))
                 for k in (0, 1)]
        r = theta[0] / theta[1]
        linear = [(array[:, 0] - r * array[:, 1]) / theta[1] for array in (y, f_l, f_u)]
        lower, upper = ppi_py.ppi_mean_ci(*linear, alpha=0.05, lam=lam)
        # ppi_py's interval is the mean -/+ z(0.975) sd
        variance = ((float(np.squeeze(upper)) - float(np.squeeze(lower))) / (2 * norm.ppf(0.975))) ** 2
        share, measured_variance = measured[(gender,)]
        assert share == pytest.approx(min(1.0, max(0.0, r)), abs=1e-12), gender
        assert measured_variance == pytest.approx(variance, rel=1e-9), gender


@pytest.mark.slow
def test_couple_cells_over_two_love_strata_match_the_definition(queries: dict[str, str]) -> None:
    """A model's couples from power-neutral and power-laden Love stories (two strata, sampled at 1/2 and 1/20;
    tests/test_ppi_stratified.py's)."""
    couples, characters = love_couples(np.random.default_rng(11))
    conditions = {story: condition for story, _, condition in characters}
    measured = run_on_couples(queries["couple"], couples, characters)
    for kind in ("female_male", "male_male"):
        units = [{"stratum": conditions[row[0]], "f": (float(row[3] == kind), float(row[3] is not None)),
                  "y": (float(row[4] == kind), float(row[4] is not None)), "labeled": row[6]} for row in couples]
        r, variance, _ = definition(units, {"baseline", "dominant"}, {"baseline", "dominant"}, 1.0, 1, 1)
        share, measured_variance = measured[("M1", kind)]
        assert share == pytest.approx(min(1.0, max(0.0, r)), abs=1e-12), kind
        assert measured_variance == pytest.approx(variance, rel=1e-9), kind


@pytest.mark.slow
@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("machine_mean", MACHINE_MEANS)
def test_the_plan_predicts_the_marts_variance(compiled: dict, machine_mean: str, rule: str) -> None:
    """lfh.audit.plan mirrors the marts' estimator: with the pilot's own moments (no prior), linearised where the
    marts' estimate is, at today's hand labels its variance is the mart's (own cell M1, pooled M2, the 'All' cell
    over two strata sampled at 1/3 and 1/50; under the composite rule both per-model cells are composites of their
    own and the pool's rectifier, linearised at the pooled row's estimate), under either machine mean."""
    rng = np.random.default_rng(2026)
    rows = characters_of(rng, "M1", 300, 150, error=0.05) + characters_of(rng, "M2", 600, 12, error=0.40)
    measured = {(model, gender): (share, variance) for model, gender, share, variance in run_on_characters(
        compiled[(machine_mean, rule)]["gender"], rows, "model, gender, corrected_share, corrected_share_variance")}
    frame = pl.DataFrame([(row[0], row[2], [row[2], "labor", "power_neutral"], ["labor", "baseline"], row[7], row[8],
                           row[9]) for row in rows], orient="row",
                         schema={"story_id": pl.String, "model": pl.String, "stratum": pl.List(pl.String),
                                 "key": pl.List(pl.String), "machine": pl.String, "hand": pl.String,
                                 "is_hand_labeled": pl.Boolean})
    stories = pl.DataFrame([(row[0], row[2], "labor", "power_neutral", True if row[9] else None) for row in rows],
                           orient="row", schema={"story_id": pl.String, "model": pl.String, "domain": pl.String,
                                                 "prompt_condition": pl.String, "hand": pl.Boolean})
    at = {}
    for gender in GENDERS:
        units = _units(rows, gender)
        sources = {"M1": ({"M1"}, {"M1"}, 0, 0), "M2": ({"M2"}, {"M1", "M2"}, 0, 1),
                   "All": ({"M1", "M2"}, {"M1", "M2"}, 1, 1)}
        if rule == "composite":  # the composite's pieces are at the pooled row's estimate
            sources["M1"] = ({"M1"}, {"M1", "M2"}, 0, 1)
        for model, (cell, source, f_ddof, rectifier_ddof) in sources.items():
            lam_cell = cell if machine_mean == "all_units" else set()
            # the estimate the marts linearise at (r, b); the definition's under this machine mean
            r, _, b = definition(units, cell, source, 1.0, f_ddof, rectifier_ddof) if lam_cell else \
                _unlabeled_estimate(units, cell, source)
            at[("gender", model, "labor", "baseline", gender)] = (r, b)
    settings = PlanSettings(prior_units=0.0, machine_mean=machine_mean, cell_pool_rule=rule)
    plan = build_plan({"gender": frame}, stories, settings, linearise_at=at)
    today = plan.labeled_now()
    checked = 0
    for cell in plan.cells:
        share, variance = measured[(cell.model, cell.key[-1])]
        if variance == 0:
            continue
        if rule == "switch" or cell.model == "All":
            assert cell.share == pytest.approx(share, abs=1e-12), cell.name
        assert cell_variance(cell, today, settings) == pytest.approx(variance, rel=1e-9), cell.name
        checked += 1
    assert checked == 9


def _unlabeled_estimate(units: list[dict], cell: set[str], source: set[str]) -> tuple[float, float, float]:
    """r and b of docs/METHOD.md §9's estimator: f over the cell's unlabeled units weighted by stratum size, the
    source's stratified rectifier."""
    strata = {unit["stratum"] for unit in units}
    size = {h: sum(u["stratum"] == h for u in units) for h in strata}
    t_cell = sum(size[h] for h in cell)
    labeled_strata = [h for h in source if any(u["stratum"] == h and u["labeled"] for u in units)]
    t_labeled = sum(size[h] for h in labeled_strata)
    theta = np.zeros(2)
    for h in cell:
        f = np.array([u["f"] for u in units if u["stratum"] == h and not u["labeled"]])
        theta += size[h] / t_cell * f.mean(axis=0)
    for h in labeled_strata:
        d = np.array([np.subtract(u["y"], u["f"]) for u in units if u["stratum"] == h and u["labeled"]])
        theta += size[h] / t_labeled * d.mean(axis=0)
    return theta[0] / theta[1], 0.0, theta[1]
