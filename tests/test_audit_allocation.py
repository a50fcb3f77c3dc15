"""The optimal hand-label allocation (`lfh audit-sample --allocate optimal`, lfh.audit.plan) checked by resampling
the study's development audit (every story hand-labeled), cheaply: the audit is ingested and its models built once
for the module (seeds and models only; their data and unit tests run in `lfh build` and the dbt unit tests), the
correction models' queries come from that build's manifest, and everything else runs in-process on the one
warehouse. A proportional pilot of PILOT stories keeps its hand labels; EXTRA more stories are drawn by the optimal
allocation for each selection of FLOORS (planned from the pilot alone) and by the proportional one, DRAWS times each,
and the correction models' compiled SQL runs on pilot + draw (lfh.build.correction_check).

What it asserts: the corrected intervals still cover the whole-audit hand-label share on all-model and per-model
cells (≥ 93%: stratified PPI keeps them valid under unequal sampling rates), the plan predicts the half-width it gets
(within 20%) where the bench says it does, the optimal allocation is not wider than the proportional one for the
default selection, and it is 15% narrower for the selections where the bench shows it on average (CLAIMED, each at
the floor per stratum it was shown at); a strict expected failure, with the reason, where the bench shows it is not
(SHORT), so that a change either way shows. Every natural selection, with more pilots and draws, the planned gain,
the ceilings and the oracle: `python -m bench.bench_audit_allocation` and docs/CORRECTION.md ("Why the broad
selections do not reach 15%, measured"). Skips where ../shared is absent."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import SHARED_DATA

from lfh.audit.plan import NATURAL_SELECTIONS, PlanSettings
from lfh.build.correction_check import (
    allocation_summary,
    build_dev_audit_models,
    compare_selections_without_ceilings,
)
from lfh.build.vars import project_var_defaults

pytestmark = pytest.mark.slow
# One pilot (the bench's first) and DRAWS draws per allocation: the gain differs much more between pilots than
# between draws (bench, 4 pilots: see CLAIMED), so more draws would buy little; the coverage is over >= 500
# cell-runs per level (binomial s.e. under 1% at 98%).
PILOT, EXTRA, PILOTS, DRAWS = 100, 200, 1, 3
BIASED_RULE = {"gender_rule": "study"}  # the labeler the correction is validated on (tests/test_correction_validation)
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
# Where the plan's half-width misses the realised one by more than 20%: none since the composite's tau2 is forecast
# from the expected between-model sum of squares (docs/CORRECTION.md, "The plan's prediction"; this test's pilot:
# couples -22% -> -15% / -18%, learning +49% -> +7% for the optimal allocation, love and non-binary within 16%).
PREDICTION_MISSES: tuple[str, ...] = ()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Per selection, its runs: the optimal allocation's under the selection's name and the proportional one's, at the
    selection's floor (one comparison per floor: the proportional draws serve every selection of that floor)."""
    workbook = SHARED_DATA / "audit_dev.xlsx"
    if not workbook.is_file():
        pytest.skip(f"{workbook} not present")
    folder = tmp_path_factory.mktemp("allocation")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DBT_LOG_PATH", str(folder / "logs"))
        queries = build_dev_audit_models(workbook, folder / "lfh.duckdb", folder / "target", BIASED_RULE)
    settings = PlanSettings.from_vars({**project_var_defaults(), **BIASED_RULE})
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
