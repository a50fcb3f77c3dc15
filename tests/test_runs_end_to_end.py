"""Audits over time, end to end: `lfh generate` and `lfh label` against the local OpenAI-compatible server, which
reports a dated model string, twice (the second time another dated string, as a new `--run`), then `lfh ingest`
and the dbt build: both versions are in marts.dim_runs and the second is measured against the first in
marts.fct_model_drift. Few prompts, few stories: the point is the path, not the numbers."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner, Result
from fixtures_simulate import write_test_lexicon
from openai_server import Behaviour, FakeOpenAI, write_models_file

from lfh.build.dbt import run_dbt
from lfh.cli import main

pytestmark = pytest.mark.slow

KEY = "sk-test-drift-93c1aa"
FIRST, SECOND = "fake-gen-2024-08-06", "fake-gen-2025-01-31"
LABELER = "fake-lab-2024-07-18"
PROMPTS = ("P001", "P002", "P031", "P032")  # two School and two Work prompts, one role each
STORIES_PER_PROMPT = 5


def lfh(*arguments: str) -> Result:
    result = CliRunner().invoke(main, list(arguments), catch_exceptions=False)
    assert result.exit_code == 0, f"lfh {' '.join(arguments)}: {result.output}"
    return result


def wave(server: FakeOpenAI, models: Path, landing: Path, version: str, *run: str) -> None:
    server.update(reported_model=version, system_fingerprint=f"fp_{version[-10:]}")
    prompt_options = [option for prompt in PROMPTS for option in ("--prompt-id", prompt)]
    lfh("generate", "--models", str(models), "--model", "gen", "-n", str(STORIES_PER_PROMPT), *prompt_options,
        "--out", str(landing), *run)
    server.update(reported_model=LABELER, system_fingerprint="fp_lab")
    lfh("label", "--models", str(models), "--labeler", "lab", "--out", str(landing))


def test_two_dated_versions_of_one_model_reach_dim_runs_and_drift(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    db_path = tmp_path / "warehouse" / "lfh.duckdb"
    monkeypatch.setenv("LFH_DB", str(db_path))
    monkeypatch.setenv("LFH_TEST_KEY", KEY)
    write_test_lexicon(db_path)
    landing = tmp_path / "landing"
    with FakeOpenAI(Behaviour(seed=3)) as server:
        models = write_models_file(tmp_path / "models.toml", server.base_url, gen={"temperature": 0.0})
        wave(server, models, landing, FIRST)
        wave(server, models, landing, SECOND, "--run", "2025-02")
    lfh("ingest", str(landing))
    run_dbt(["build", "--select", "+dim_runs", "+fct_model_drift"], db_path=db_path, capture=True)

    connection = duckdb.connect(str(db_path), read_only=True)
    try:
        runs = connection.execute(
            "select run_kind, run_name, model, model_versions, labeler_versions, reported_models, stories, "
            "base_url, has_manifest from marts.dim_runs order by run_kind, run_name nulls first").fetchall()
        drift = connection.execute(
            "select measure, model, model_version, previous_version, drift_ratio, drift_p_value "
            "from marts.fct_model_drift").fetchall()
    finally:
        connection.close()
    generated = [row for row in runs if row[0] == "generate"]
    assert [(row[1], row[2], row[3], json.loads(row[5]), row[6]) for row in generated] == [
        (None, "gen", FIRST, {FIRST: 2 * len(PROMPTS) + len(PROMPTS)}, STORIES_PER_PROMPT * len(PROMPTS)),
        ("2025-02", "gen", SECOND, {SECOND: 2 * len(PROMPTS) + len(PROMPTS)}, STORIES_PER_PROMPT * len(PROMPTS)),
    ]  # samples_per_call 2: three requests a prompt for five stories
    assert all(row[7] == server.base_url and row[8] for row in generated)
    labeled = [row for row in runs if row[0] == "label"]
    assert len(labeled) == 1 and labeled[0][4] == LABELER  # the second wave's labels resumed the one labeling run
    assert drift, "no drift rows for a model with two versions"
    assert {(row[1], row[2], row[3]) for row in drift} == {("gen", SECOND, FIRST)}
    assert {"representation"} <= {row[0] for row in drift}
    assert all(row[5] is None or 0 <= row[5] <= 1 for row in drift)
    written = [path for path in tmp_path.rglob("*") if path.is_file() and path.name != "models.toml"]
    assert all(KEY.encode() not in path.read_bytes() for path in written)
