"""The optimal hand-label allocation (`lfh audit-sample --allocate optimal`, lfh.audit.plan) checked by resampling
the study's development audit (every story hand-labeled), cheaply: the audit is ingested and its models built once
for the module (seeds and models only; their data and unit tests run in `lfh build` and the dbt unit tests), the
correction models' queries come from that build's manifest, and everything else runs in-process on the one
warehouse. A proportional pilot of PILOT stories keeps its hand labels; EXTRA more stories are drawn by the optimal
allocation for each CHECKED selection (planned from the pilot alone) and by the proportional one, DRAWS times each,
and the correction models' compiled SQL runs on pilot + draw (lfh.build.correction_check).

What it asserts: the corrected intervals still cover the whole-audit hand-label share on all-model and per-model
cells (≥ 93%: stratified PPI keeps them valid under unequal sampling rates), the plan predicts the half-width it gets
(within 20%) where the bench says it does, the optimal allocation is not wider than the proportional one for the
default selection, and it is 15% narrower for the selections where the bench shows it on average (CLAIMED); a
strict expected failure, with the reason, where the bench shows it is not (SHORT), so that a change either way
shows; reported, not claimed, where it depends on the pilot (NOISY). Every natural selection, with more pilots and
draws, the planned gain, the ceilings and the oracle: `python -m bench.bench_audit_allocation` and
docs/CORRECTION.md ("Optimal against proportional on the development audit, per selection"). Skips where ../shared
is absent."""

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
# objective): learning 34.8%, labor 18.4%. This test's pilot: learning 39%, labor 23%.
CLAIMED = ("learning", "labor")
# Not reached on this audit, with the reason (docs/CORRECTION.md); strict: this test's pilot does not reach it either.
SHORT = {DEFAULT: "the plan, even knowing every stratum's labeler errors (bench --oracle), finds only a few percent "
                  "that any allocation of 200 stories (90 of them fixed by 3 per stratum) can gain over 198 cells: "
                  "what narrows one domain's cells takes stories from the others' (bench: 0.3% realised)"}
# Reached by some pilots and not by others: the bench's mean is below 15% (couple 10.7% over 4 pilots; 19.9% over
# last session's 6), this test's pilot gives 21%. Checked, reported, not claimed (not strict: it passes here).
NOISY = {"couple": "bench: 10.7% over 4 pilots x 3 draws (19.9% over 6 x 8 last session, variance objective); "
                   "the pilot decides, not the allocation rule"}
CHECKED = {name: NATURAL_SELECTIONS[name] for name in (*CLAIMED, *NOISY, *SHORT)}
# Where the plan's half-width misses the realised one by more than 20% in the bench (the composite's tau2 forecast
# from a 100-story pilot: couples -26%, learning +48% for the optimal allocation): not asserted.
PREDICTION_MISSES = ("couple", "learning")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    workbook = SHARED_DATA / "audit_dev.xlsx"
    if not workbook.is_file():
        pytest.skip(f"{workbook} not present")
    folder = tmp_path_factory.mktemp("allocation")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DBT_LOG_PATH", str(folder / "logs"))
        queries = build_dev_audit_models(workbook, folder / "lfh.duckdb", folder / "target", BIASED_RULE)
    settings = PlanSettings.from_vars({**project_var_defaults(), **BIASED_RULE})
    return compare_selections_without_ceilings(folder / "lfh.duckdb", queries, PILOT, EXTRA, DRAWS, CHECKED, PILOTS,
                                               settings=settings)


def _summary(runs: dict, name: str, level: str | None = None) -> dict[str, float]:
    selection = CHECKED[name] if level is None else dataclasses.replace(CHECKED[name], levels=(level,))
    summary = allocation_summary({"optimal": runs[name], "proportional": runs["proportional"]}, selection)
    print(name, level or "selected", {key: round(value, 4) for key, value in summary.items()})
    return summary


@pytest.mark.parametrize("name", list(CHECKED))
def test_corrected_intervals_still_cover_under_the_optimal_allocation(runs: dict, name: str) -> None:
    for level in CHECKED[name].levels:
        summary = _summary(runs, name, level)
        assert summary["optimal_coverage"] >= 0.93, (name, level, summary)
        assert summary["proportional_coverage"] >= 0.93, (name, level, summary)


@pytest.mark.parametrize("name", [name for name in CHECKED if name not in PREDICTION_MISSES])
def test_the_plan_predicts_the_half_width_it_gets(runs: dict, name: str) -> None:
    summary = _summary(runs, name)
    for allocation in ("optimal", "proportional"):
        predicted = summary[f"{allocation}_predicted_half_width"]
        realised = summary[f"{allocation}_realised_half_width"]
        assert abs(predicted / realised - 1) <= 0.20, (name, allocation, predicted, realised)


def test_optimal_is_not_wider_than_proportional(runs: dict) -> None:
    assert _summary(runs, DEFAULT)["narrower"] >= 0.0


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=SHORT[name])) if name in SHORT else
    pytest.param(name, marks=pytest.mark.xfail(strict=False, reason=NOISY[name])) if name in NOISY else name
    for name in CHECKED])
def test_optimal_is_fifteen_percent_narrower(runs: dict, name: str) -> None:
    summary = _summary(runs, name)
    assert summary["narrower"] >= 0.15, summary
