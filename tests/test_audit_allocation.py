"""The optimal hand-label allocation (`lfh audit-sample --allocate optimal`, lfh.audit.plan) checked by resampling
the study's development audit (every story hand-labeled), cheaply: the audit under the biased gender rule and the
correction models' compiled SQL are the run's shared ones (tests/fixtures_correction.py: conftest's audit build with
the rule's models rebuilt, and one compile; tests/test_correction_validation.py reads both), and everything else runs
in-process on a copy of that warehouse. A proportional pilot of PILOT stories keeps its hand labels; EXTRA more
stories are drawn by the optimal allocation for each selection of FLOORS (planned from the pilot alone) and by the
proportional one, DRAWS times each, and the correction models' compiled SQL runs on pilot + draw
(bench.correction_check). Most of its CPU is the planner itself (lfh.audit.plan.plan_allocation's greedy and
exchange steps over the strata), not dbt.

What it asserts: the corrected intervals still cover the whole-audit hand-label share on all-model and per-model
cells (≥ 93%: stratified PPI keeps them valid under unequal sampling rates), the plan predicts the half-width it gets
(within 20%) where the bench says it does, the optimal allocation is not wider than the proportional one for the
default selection, and it is 15% narrower for the selections where the bench shows it on average (CLAIMED, each at
the floor per stratum it was shown at); a strict expected failure, with the reason, where the bench shows it is not
(SHORT), so that a change either way shows. Every natural selection, with more pilots and draws, the planned gain,
the ceilings and the oracle: `python -m bench.bench_audit_allocation` and bench/results/correction.md ("Why the
broad selections do not reach 15%"). Skips without the study's data (docs/DATA.md)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from fixtures_correction import BIASED_RULE, biased_rule_audit, correction_queries  # noqa: F401 (fixtures, by name)
from fixtures_shared_audit import copy_warehouse

from bench.correction_check import allocation_summary, compare_selections_without_ceilings
from lfh.audit.plan import NATURAL_SELECTIONS, PlanSettings
from lfh.build.vars import project_var_defaults

pytestmark = pytest.mark.slow
# One pilot (the bench's first) and DRAWS draws per allocation: the gain differs much more between pilots than
# between draws (bench, 4 pilots: see CLAIMED), so more draws would buy little; the coverage is over >= 500
# cell-runs per level (binomial s.e. under 1% at 98%).
PILOT, EXTRA, PILOTS, DRAWS = 100, 200, 1, 3
DEFAULT = "gender and couple (default)"
# 15% narrower where the bench shows it on average over 4 pilots x 3 draws (docs/CORRECTION.md, summed half-width
# objective), with the floor per stratum (`--min-per-stratum`, for both allocations) it was shown at: learning 34.8%
# and labor 18.4% at audit-sample's default 3 (this test's pilot: 39%, 23%); couples 21.6% (every pilot 15-30%) at 1
# — at 3 the floor spends 90 of the 200 stories on the 30 strata, 24 of them outside Love (bench: 10.7%, 3% to 25%).
CLAIMED = {"learning": 3, "labor": 3, "couple": 1}
# Not reached on this audit, with the reason (docs/CORRECTION.md); strict: this test's pilot does not reach it either.
SHORT = {DEFAULT: "the plan, even knowing every stratum's labeler errors (bench --oracle), finds only 3.2% that any "
                  "allocation of 200 stories can gain over these 198 cells: a story narrows only its own stratum's "
                  "cells, and the selection spans all 30 (bench: 0.3% realised at floor 3, 0.5% at floor 1)"}
FLOORS = {**CLAIMED, DEFAULT: 3}
# Where the plan's half-width misses the realised one by more than 20%: none, the composite's tau2 being forecast
# from the expected between-model sum of squares (bench/results/correction.md, "The plan's prediction"; this test's
# pilot: couples -15% / -18%, learning +7% for the optimal allocation, love and non-binary within 16%).
PREDICTION_MISSES: tuple[str, ...] = ()


@pytest.fixture(scope="module")
def runs(biased_rule_audit: Path, correction_queries: dict[str, str],  # noqa: F811 (the imported fixtures)
         tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Per selection, its runs: the optimal allocation's under the selection's name and the proportional one's, at the
    selection's floor (one comparison per floor: the proportional draws serve every selection of that floor). The
    audit under the biased rule is the run's shared one (tests/test_correction_validation.py reads it too), copied:
    the draws are scored through a read-write connection (temp tables). The correction models' SQL does not read
    the gender rule (it acts upstream, in the units), so the run's one compile at the default vars serves."""
    queries = correction_queries
    folder = tmp_path_factory.mktemp("allocation")
    copy_warehouse(biased_rule_audit / "lfh.duckdb", folder / "lfh.duckdb")
    settings = PlanSettings.from_vars({**project_var_defaults(), "gender_rule": BIASED_RULE})
    by_selection = {}
    for floor in sorted(set(FLOORS.values())):
        selections = {name: NATURAL_SELECTIONS[name] for name, value in FLOORS.items() if value == floor}
        compared = compare_selections_without_ceilings(folder / "lfh.duckdb", queries, PILOT, EXTRA, DRAWS,
                                                       selections, PILOTS, floor, settings=settings)
        by_selection |= {name: {"optimal": compared[name], "proportional": compared["proportional"]}
                         for name in selections}
    return by_selection


def _summary(runs: dict, name: str, level: str | None = None) -> dict[str, float]:
    selection = NATURAL_SELECTIONS[name]
    selection = selection if level is None else dataclasses.replace(selection, levels=(level,))
    summary = allocation_summary(runs[name], selection)
    print(name, f"floor {FLOORS[name]}", level or "selected", {key: round(value, 4) for key, value in summary.items()})
    return summary


@pytest.mark.parametrize("name", list(FLOORS))
def test_corrected_intervals_still_cover_under_the_optimal_allocation(runs: dict, name: str) -> None:
    for level in NATURAL_SELECTIONS[name].levels:
        summary = _summary(runs, name, level)
        assert summary["optimal_coverage"] >= 0.93, (name, level, summary)
        assert summary["proportional_coverage"] >= 0.93, (name, level, summary)


@pytest.mark.parametrize("name", [name for name in FLOORS if name not in PREDICTION_MISSES])
def test_the_plan_predicts_the_half_width_it_gets(runs: dict, name: str) -> None:
    summary = _summary(runs, name)
    for allocation in ("optimal", "proportional"):
        predicted = summary[f"{allocation}_predicted_half_width"]
        realised = summary[f"{allocation}_realised_half_width"]
        assert abs(predicted / realised - 1) <= 0.20, (name, allocation, predicted, realised)


def test_optimal_is_not_wider_than_proportional(runs: dict) -> None:
    assert _summary(runs, DEFAULT)["narrower"] >= 0.0


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=SHORT[name])) if name in SHORT else name
    for name in FLOORS])
def test_optimal_is_fifteen_percent_narrower(runs: dict, name: str) -> None:
    summary = _summary(runs, name)
    assert summary["narrower"] >= 0.15, summary
