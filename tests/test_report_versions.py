"""The report's "What changed between versions" section (lfh.report.versions) on small hand-made marts."""

from __future__ import annotations

from datetime import datetime

import polars as pl

from lfh.report.html import render_page
from lfh.report.versions import DRIFT_ROWS, NO_DRIFT, versions_section


def _drift(rows: int) -> pl.DataFrame:
    return pl.DataFrame([{
        "model": "M", "model_version": "m-2024-06", "previous_version": "m-2024-01", "measure": "representation",
        "domain": "labor", "condition": "baseline", "race": None, "gender": "female", "couple_type": None,
        "previous_estimate": 0.25, "estimate": 0.5, "drift_ratio": 2.0, "drift_ci_lower": 1.27,
        "drift_ci_upper": 3.16, "drift_p_value": 0.003 + index / 1000, "drift_q_value": 0.01 + index / 100}
        for index in range(rows)])


def _runs() -> pl.DataFrame:
    return pl.DataFrame([{
        "run_id": "r1", "run_kind": "generate", "model": "M", "run_name": "wave-2", "model_versions": "m-2024-06",
        "labeler_versions": None, "started_at": datetime(2024, 6, 1), "finished_at": datetime(2024, 6, 2),
        "loaded_at": datetime(2024, 6, 3), "stories": 1200, "label_responses": 0, "lfh_version": "0.1.0",
        "git_commit": "abc123", "is_simulated": False, "is_synthesized": False}])


def test_the_section_shows_drift_and_runs_as_tables() -> None:
    section = versions_section({"fct_model_drift": _drift(DRIFT_ROWS + 5), "dim_runs": _runs()})
    page = render_page("t", None, [], [section], "f")
    assert '<section id="model-versions"><h2>What changed between versions</h2>' in page
    assert page.count("m-2024-01 → m-2024-06") == DRIFT_ROWS  # the smallest q-values, at most DRIFT_ROWS
    assert "2 [1.27, 3.16]" in page and 'id="table-runs"' in page and "wave-2" in page and "1,200" in page
    assert NO_DRIFT not in page


def test_one_version_per_model_says_so_and_still_lists_the_runs() -> None:
    section = versions_section({"fct_model_drift": pl.DataFrame(), "dim_runs": _runs()})
    page = render_page("t", None, [], [section], "f")
    assert NO_DRIFT in page and 'id="table-model-drift"' not in page and 'id="table-runs"' in page
