"""The optimal hand-label allocation (`lfh audit-sample --allocate optimal`, lfh.audit.plan) checked by resampling
the study's development audit (every story hand-labeled): a proportional pilot of PILOT stories keeps its hand
labels, EXTRA more stories are drawn by the optimal allocation planned from the pilot alone and by the proportional
one, DRAWS times each, and the correction models' compiled SQL runs on pilot + draw
(lfh.build.correction_check.compare_allocations). The corrected intervals must still cover the whole-audit
hand-label share (stratified PPI keeps them valid under unequal sampling rates), the plan must predict the
half-width it will get, and the optimal allocation must not be wider than the proportional one. The issue's goal
of intervals 15% narrower is not reached on this audit (docs/CORRECTION.md says why): that test is an expected
failure, strict, so that reaching it shows up. `python -m bench.bench_audit_allocation` runs more pilots and draws.
Skips where ../shared is absent."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from conftest import SHARED_DATA

from lfh.build.correction_check import allocation_summary, compare_allocations, compiled_correction_sql
from lfh.build.dbt import run_dbt
from lfh.cli import main

pytestmark = pytest.mark.slow
PILOT, EXTRA, DRAWS = 100, 200, 6
BIASED_RULE = {"gender_rule": "study"}  # the labeler the correction is validated on (tests/test_correction_validation)
SELECTED = re.compile(r"^(gender|couple)/")


@pytest.fixture(scope="module")
def summaries(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, float]]:
    workbook = SHARED_DATA / "audit_dev.xlsx"
    if not workbook.is_file():
        pytest.skip(f"{workbook} not present")
    folder = tmp_path_factory.mktemp("allocation")
    warehouse = folder / "lfh.duckdb"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DBT_TARGET_PATH", str(folder / "target"))
        patch.setenv("DBT_LOG_PATH", str(folder / "logs"))
        result = CliRunner().invoke(main, ["ingest", str(workbook)], env={"LFH_DB": str(warehouse)})
        assert result.exit_code == 0, result.output
        run_dbt(["build", "--select", "+fct_representation_ratios", "+fct_sexual_orientation_ratios", "+dim_stories"],
                db_path=warehouse, dbt_vars=BIASED_RULE, capture=True)
        queries = compiled_correction_sql(warehouse, folder / "compiled", BIASED_RULE)
        runs = compare_allocations(warehouse, queries, PILOT, EXTRA, DRAWS)
    groups = {"selected": SELECTED, "all-model": re.compile(r"^(gender|couple)/All/"),
              "per-model": re.compile(r"^(gender|couple)/(?!All/)")}
    summaries = {name: allocation_summary(runs, pattern) for name, pattern in groups.items()}
    for name, summary in summaries.items():
        print(name, {key: round(value, 4) for key, value in summary.items()})
    return summaries


def test_corrected_intervals_still_cover_under_the_optimal_allocation(summaries: dict) -> None:
    for group in ("all-model", "per-model"):
        assert summaries[group]["cells"] >= 30
        assert summaries[group]["optimal_coverage"] >= 0.93, (group, summaries[group])
        assert summaries[group]["proportional_coverage"] >= 0.93, (group, summaries[group])


def test_the_plan_predicts_the_half_width_it_gets(summaries: dict) -> None:
    for allocation in ("optimal", "proportional"):
        predicted = summaries["selected"][f"{allocation}_predicted_half_width"]
        realised = summaries["selected"][f"{allocation}_realised_half_width"]
        assert abs(predicted / realised - 1) <= 0.20, (allocation, predicted, realised)


def test_optimal_is_not_wider_than_proportional(summaries: dict) -> None:
    assert summaries["selected"]["narrower"] >= 0.0, summaries["selected"]


@pytest.mark.xfail(strict=True, reason="on the dev audit most of a per-model cell's variance is the machine "
                   "labels' own sampling term, which no allocation of hand labels reduces (docs/CORRECTION.md)")
def test_optimal_is_fifteen_percent_narrower(summaries: dict) -> None:
    assert summaries["selected"]["narrower"] >= 0.15, summaries["selected"]
