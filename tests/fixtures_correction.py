"""Fixtures shared by the correction checks (tests/test_correction_validation.py, tests/test_correction_simulation.py,
tests/test_audit_allocation.py): the correction models' compiled SQL, compiled once per test run for every module
(conftest.build_once), and the development audit's warehouse under the biased gender rule (`study`), built once per
run from the run's shared audit build (conftest.audit_build) by rebuilding only the models the gender rule changes.
Import the fixtures into the test module that uses them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import build_once, reuse_parse

from bench.correction_check import CHECK_SELECTION, compiled_correction_sql
from lfh.build.dbt import run_dbt

QUERIES_FILE = "correction_queries.json"
# The labeler the correction is validated on: docs/METHOD.md §4.4's rule is wrong in a systematic way on the
# development audit (Female-Male couples 0.77 against the hand labels' 0.94), the default `refined` rule far less.
BIASED_RULE = "study"
# The first model that reads var gender_rule (models/intermediate/characters/int_characters_gendered.sql): under
# another rule only it and what the check reads downstream of it change.
GENDER_RULE_MODEL = "int_characters_gendered"


@pytest.fixture(scope="session")
def correction_queries(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The compiled SQL of the correction models at the project's default vars (compiled_correction_sql), once per
    run. It does not depend on the gender rule (the rule acts upstream, in the units the SQL reads), so one compile
    serves the validation under both rules, the allocation and the simulation."""

    def compile_queries(folder: Path) -> None:
        reuse_parse(folder / "target")  # default vars and the usual file name: the worker's parse serves
        queries = compiled_correction_sql(folder / "lfh.duckdb", folder / "target")
        (folder / QUERIES_FILE).write_text(json.dumps(queries), encoding="utf-8")

    folder = build_once(tmp_path_factory, "correction-queries", compile_queries)
    return json.loads((folder / QUERIES_FILE).read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def biased_rule_audit(audit_build: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The development audit under BIASED_RULE (gender_rule_warehouse), once per run for every module that validates
    the correction on it: the folder holding lfh.duckdb. Read-only; a test that writes (even temp tables: a
    read-write connection) copies the file first."""
    return build_once(tmp_path_factory, f"audit-gender_rule={BIASED_RULE}",
                      lambda folder: gender_rule_warehouse(audit_build, folder, BIASED_RULE))


def gender_rule_warehouse(audit_build: Path, folder: Path, gender_rule: str) -> Path:
    """A copy of the run's shared audit warehouse (default vars) with the models the check reads rebuilt under
    `gender_rule` from GENDER_RULE_MODEL on (no data tests: the shared build ran them at the default rule)."""
    warehouse = folder / "lfh.duckdb"
    shutil.copyfile(audit_build / "lfh.duckdb", warehouse)
    rebuilt = [f"{GENDER_RULE_MODEL}+,{selected}" for selected in CHECK_SELECTION]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DBT_TARGET_PATH", str(folder / "target"))
        patch.setenv("DBT_LOG_PATH", str(folder / "logs"))
        run_dbt(["run", "--select", *rebuilt], db_path=warehouse, dbt_vars={"gender_rule": gender_rule},
                capture=True)
    return warehouse
