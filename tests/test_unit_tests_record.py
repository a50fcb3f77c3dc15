"""dbt's unit tests run once per checkout (lfh.build.unit_tests): a build whose project, vars, target and versions
match a build in which every unit test passed leaves them out and says so; `--force` runs them; anything that can
change a unit test's outcome changes the key. dbt is replaced by tests/fake_dbt.py."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from test_build_cli import install_fake_dbt, run_lfh

from lfh.build.fingerprint import unit_tests_digest
from lfh.build.unit_tests import RECORD_NAME, all_passed, passed_at, record_passed, unit_tests_key
from lfh.build.vars import validate_vars

UNIT_TESTS = ["unit_test.laissez_faire.model_a.first", "unit_test.laissez_faire.model_b.second"]


def _dbt_results(target: Path, statuses: dict[str, str], unit_tests: list[str] = UNIT_TESTS) -> None:
    target.mkdir(parents=True, exist_ok=True)
    (target / "manifest.json").write_text(json.dumps({"unit_tests": dict.fromkeys(unit_tests, {})}))
    results = [{"unique_id": unique_id, "status": status} for unique_id, status in statuses.items()]
    (target / "run_results.json").write_text(json.dumps({"results": results}))


@pytest.mark.parametrize(("statuses", "expected"), [
    ({UNIT_TESTS[0]: "pass", UNIT_TESTS[1]: "pass", "model.laissez_faire.model_a": "success"}, True),
    ({UNIT_TESTS[0]: "pass", UNIT_TESTS[1]: "fail"}, False),
    ({UNIT_TESTS[0]: "pass"}, False),  # one left out (a selection, an exclusion): not every test passed
    ({"model.laissez_faire.model_a": "success"}, False),  # none ran
])
def test_every_unit_test_of_the_manifest_must_have_passed(tmp_path: Path, statuses: dict, expected: bool) -> None:
    _dbt_results(tmp_path, statuses)
    assert all_passed(tmp_path) is expected


def test_no_results_or_no_unit_tests_is_not_a_pass(tmp_path: Path) -> None:
    assert not all_passed(tmp_path)
    _dbt_results(tmp_path, {}, unit_tests=[])
    assert not all_passed(tmp_path)


def test_the_key_follows_vars_target_and_project(tmp_path: Path) -> None:
    key = unit_tests_key(unit_tests_digest({}), "duckdb")
    assert key == unit_tests_key(unit_tests_digest({}), "duckdb")
    assert key != unit_tests_key(unit_tests_digest({"vote_threshold": 0.6}), "duckdb")
    assert key != unit_tests_key(unit_tests_digest({}), "spark")
    project = tmp_path / "project"
    for folder in ("models", "macros", "seeds"):
        (project / folder).mkdir(parents=True)
    (project / "dbt_project.yml").write_text("name: p\n")
    (project / "models" / "m.sql").write_text("select 1 as x\n")
    before = unit_tests_key(unit_tests_digest({}, project), "duckdb")
    (project / "models" / "m.sql").write_text("select 2 as x\n")
    assert unit_tests_key(unit_tests_digest({}, project), "duckdb") != before


def test_a_record_is_kept_and_an_unreadable_one_is_none(tmp_path: Path) -> None:
    assert passed_at(tmp_path, "k1") is None
    record_passed(tmp_path, "k1")
    record_passed(tmp_path, "k2")
    assert passed_at(tmp_path, "k1") and passed_at(tmp_path, "k2") and passed_at(tmp_path, "k3") is None
    (tmp_path / RECORD_NAME).write_text("{not json")
    assert passed_at(tmp_path, "k1") is None
    record_passed(tmp_path, "k1")
    assert passed_at(tmp_path, "k1")


def _one_story_warehouse(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(path)) as connection:
        connection.execute("create schema if not exists raw; create or replace table raw.stories (story_id varchar); "
                           "insert into raw.stories values ('s1')")
    return path


def _last_call(fake_dbt: Path) -> list[str]:
    return json.loads((fake_dbt / "calls.jsonl").read_text().splitlines()[-1])


def test_a_new_warehouse_leaves_out_unit_tests_that_passed_on_this_checkout(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "target"
    monkeypatch.setenv("DBT_TARGET_PATH", str(target))
    monkeypatch.delenv("DBT_EXCLUDE_RESOURCE_TYPES", raising=False)
    fake_dbt = install_fake_dbt(tmp_path, monkeypatch)

    def build(warehouse: str, *arguments: str) -> tuple[list[str], str]:
        path = _one_story_warehouse(tmp_path / warehouse / "lfh.duckdb")
        result = run_lfh("build", *arguments, FAKE_DBT_NODES="3", LFH_DB=str(path))
        assert result.returncode == 0, result.stderr
        return _last_call(fake_dbt), result.stdout

    call, said = build("first")
    assert "unit_test" not in call and "unit tests: every one passed" not in said
    # as a build in which every unit test passed leaves it
    record_passed(target, unit_tests_key(unit_tests_digest(validate_vars([])), "duckdb"))
    call, said = build("second")
    assert "unit_test" in call and "seed" not in call, call  # only the unit tests go: the seeds still load
    assert "unit tests: every one passed on this checkout" in said
    call, _said = build("second", "--force")
    assert "unit_test" not in call  # --force runs them
    call, _said = build("third", "--var", "vote_threshold=0.6")
    assert "unit_test" not in call  # other vars: another key
