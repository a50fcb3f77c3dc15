"""Shared builds for the correction and audit tests, once per test run for every xdist worker (tests/conftest.py's
build_once); registered as a plugin by tests/conftest.py's `pytest_plugins`.

- `correction_sql(vars)`: the compiled SQL of the two correction models (what bench.correction_check's
  compiled_correction_sql returns) for any of the var sets in CORRECTION_VAR_SETS. A dbt compile is mostly the
  parse of the project (about 9 s of CPU here), and dbt parses again whenever --vars change; so every var set is
  compiled in ONE dbt process that parses once (dbt's Python API, dbtRunner with the parsed manifest) and then
  compiles each var set (about 1 s each). tests/test_shared_audit.py checks that the result is what a fresh
  `dbt compile` with those vars gives.
- `audit_with_vars(vars)`: the development audit (conftest's `audit_build`: every model at the default vars) copied
  and rebuilt, with `vars`, on the models that read one of those vars and everything downstream of them
  (models_reading): a warehouse as built with those vars from the start, without a second ingest or a full build.
  tests/test_shared_audit.py checks the selection against what dbt renders. Read-only; copy it to write.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
from conftest import build_once

from bench.correction_check import CORRECTION_MODELS, check_vars, checked_sql
from lfh.paths import project_root

# Every var set a test compiles the correction models with (tests/test_ppi_*.py). Another test that needs another
# set adds it here: the compile of every set happens once per run, in one dbt process.
CORRECTION_VAR_SETS: tuple[dict, ...] = (
    # tests/test_ppi_machine_mean.py: both machine means under both cell/pool rules
    {"ppi_machine_mean": "all_units", "ppi_cell_pool_rule": "switch"},
    {"ppi_machine_mean": "all_units", "ppi_cell_pool_rule": "composite"},
    {"ppi_machine_mean": "unlabeled", "ppi_cell_pool_rule": "switch"},
    {"ppi_machine_mean": "unlabeled", "ppi_cell_pool_rule": "composite"},
    # tests/test_ppi_stratified.py (both), tests/test_ppi_reference.py (unstratified), tests/test_ppi_composite.py
    {"ppi_stratify": True, "ppi_cell_pool_rule": "switch", "ppi_machine_mean": "unlabeled"},
    {"ppi_stratify": False, "ppi_cell_pool_rule": "switch", "ppi_machine_mean": "unlabeled"},
    {"ppi_stratify": False, "ppi_cell_pool_rule": "composite", "ppi_machine_mean": "unlabeled"},
)
# The var sets audit_with_vars rebuilds the audit with (tests/test_cleaning_audit.py). tests/test_shared_audit.py
# checks models_reading for each, so a test that asks audit_with_vars for another set adds it here.
AUDIT_VAR_SETS: tuple[dict, ...] = (
    {"gender_rule": "study", "name_rule": "study"},
)
CORRECTION_QUERIES = "correction_queries.json"
COMPILED_MODELS = "compiled_models.json"


def var_key(dbt_vars: dict) -> str:
    return json.dumps(dbt_vars, sort_keys=True)


def compile_in_one_process(folder: Path, jobs: Iterable[tuple[dict, list[str] | None]]) -> dict[str, dict]:
    """{var_key: {model: compiled SQL}} for each (vars, models) job (None: every model), from one dbt process that
    parses the project once; "relations" maps every model to its relation. An empty DuckDB file in `folder` stands
    for the warehouse (nothing is read from it)."""
    request = folder / "compile_request.json"
    request.write_text(json.dumps({"jobs": list(jobs), "folder": str(folder)}), encoding="utf-8")
    environment = {**os.environ, "LFH_DB": str(folder / "empty.duckdb"), "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
                   "DBT_LOG_PATH": str(folder / "logs"),
                   # the worker imports bench.correction_check, as the tests do (pytest's pythonpath: the root)
                   "PYTHONPATH": os.pathsep.join(filter(None, (str(project_root()), os.environ.get("PYTHONPATH"))))}
    done = subprocess.run([sys.executable, __file__, str(request)], capture_output=True, text=True, timeout=900,
                          env=environment, cwd=project_root(), check=False)
    if done.returncode != 0:
        raise RuntimeError(f"compiling in one dbt process failed: {done.stdout[-3000:]} {done.stderr[-3000:]}")
    return json.loads((folder / "compiled.json").read_text(encoding="utf-8"))


def _compile_worker(request_path: Path) -> None:
    """Run as a script (compile_in_one_process): dbt parse once, then dbt compile per var set on that manifest."""
    from dbt.cli.main import dbtRunner

    request = json.loads(request_path.read_text(encoding="utf-8"))
    folder, root = Path(request["folder"]), str(project_root())
    common = ["--project-dir", root, "--profiles-dir", root, "--target", "duckdb", "--quiet"]
    parsed = dbtRunner().invoke(["parse", "--target-path", str(folder / "target"), *common])
    if not parsed.success:
        raise SystemExit(f"dbt parse failed: {parsed.exception}")
    manifest = parsed.result
    models = {node.name: node for node in manifest.nodes.values() if node.resource_type == "model"}
    compiled: dict[str, dict] = {"relations": {name: node.relation_name for name, node in models.items()}}
    for dbt_vars, select in request["jobs"]:
        selected = select or sorted(models)
        # the manifest parsed without --vars: var() in a model's SQL is read again at compile time, with these
        result = dbtRunner(manifest=manifest).invoke(
            ["compile", "--select", *selected, "--vars", json.dumps(dbt_vars), "--no-write-json",
             "--target-path", str(folder / "target"), *common])
        if not result.success:
            raise SystemExit(f"dbt compile with {dbt_vars} failed: {result.exception}")
        codes = {item.node.name: item.node.compiled_code for item in result.result.results}
        compiled[var_key(dbt_vars)] = {name: codes[name] for name in selected}
    (folder / "compiled.json").write_text(json.dumps(compiled), encoding="utf-8")


def correction_queries(compiled: dict[str, dict], key: str) -> dict[str, str]:
    """compiled_correction_sql's result from one var set's compiled models (compiled with check_vars: each reads
    its units from bench.correction_check.UNITS)."""
    return {kind: checked_sql(model, compiled[key][model]) for kind, model in CORRECTION_MODELS.items()}


def _compiled_sql(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One dbt process per run: the correction models under each of CORRECTION_VAR_SETS (CORRECTION_QUERIES), and
    every model at the defaults and under each of AUDIT_VAR_SETS (COMPILED_MODELS, for tests/test_shared_audit.py's
    check of models_reading), sharing the one parse."""
    correction_models = list(CORRECTION_MODELS.values())

    def build(folder: Path) -> None:
        every_model = [{}, *AUDIT_VAR_SETS]
        compiled = compile_in_one_process(folder, [*((check_vars(dbt_vars), correction_models)
                                                     for dbt_vars in CORRECTION_VAR_SETS),
                                                   *((dbt_vars, None) for dbt_vars in every_model)])
        queries = {var_key(dbt_vars): correction_queries(compiled, var_key(check_vars(dbt_vars)))
                   for dbt_vars in CORRECTION_VAR_SETS}
        (folder / CORRECTION_QUERIES).write_text(json.dumps(queries), encoding="utf-8")
        kept = {key: compiled[key] for key in map(var_key, every_model)}
        (folder / COMPILED_MODELS).write_text(json.dumps(kept), encoding="utf-8")

    return build_once(tmp_path_factory, "compiled-sql", build)


@pytest.fixture(scope="session")
def correction_sql(tmp_path_factory: pytest.TempPathFactory) -> Callable[[dict], dict[str, str]]:
    """dbt_vars -> the two correction models' compiled SQL (as compiled_correction_sql returns it) under those vars
    (one of CORRECTION_VAR_SETS), all compiled once per run in one dbt process."""
    queries = json.loads((_compiled_sql(tmp_path_factory) / CORRECTION_QUERIES).read_text(encoding="utf-8"))

    def compiled(dbt_vars: dict) -> dict[str, str]:
        key = var_key(dbt_vars)
        if key not in queries:
            raise KeyError(f"no compiled correction SQL for {key}: add the var set to CORRECTION_VAR_SETS in "
                           "tests/fixtures_shared_audit.py")
        return dict(queries[key])

    return compiled


@pytest.fixture(scope="session")
def compiled_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    """{var_key: {model: compiled SQL}} of every model at the defaults ({}) and under each of AUDIT_VAR_SETS."""
    return json.loads((_compiled_sql(tmp_path_factory) / COMPILED_MODELS).read_text(encoding="utf-8"))


_MACRO = re.compile(r"\{%-?\s*macro\s+(\w+)\s*\((.*?)\{%-?\s*endmacro\s*-?%\}", re.DOTALL)


def _any_call(functions: Iterable[str]) -> re.Pattern | None:
    """A call of one of `functions` (a macro, or `var` with one of the names as its first argument)."""
    names = "|".join(sorted(functions))
    return re.compile(rf"\b({names})\s*\(") if names else None


def models_reading(names: Iterable[str], root: Path | None = None) -> list[str]:
    """The models whose SQL reads one of the vars `names`, directly or through a macro (macros calling macros
    followed to the end), by name: the models a build with other values of those vars renders differently."""
    root = root or project_root()
    quoted = "|".join(re.escape(name) for name in names)
    reads = re.compile(rf"""\bvar\(\s*['"]({quoted})['"]""")
    macros = {match.group(1): match.group(2) for path in sorted((root / "macros").rglob("*.sql"))
              for match in _MACRO.finditer(path.read_text(encoding="utf-8"))}
    reading = {name for name, body in macros.items() if reads.search(body)}
    while calls := _any_call(reading):
        more = {name for name, body in macros.items() if name not in reading and calls.search(body)}
        if not more:
            break
        reading |= more
    calls = _any_call(reading)
    return sorted(path.stem for path in (root / "models").rglob("*.sql")
                  if reads.search(text := path.read_text(encoding="utf-8")) or (calls and calls.search(text)))


def copy_warehouse(source: Path, target: Path) -> None:
    """A DuckDB file and its write-ahead log, if one was left."""
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    wal = source.with_name(source.name + ".wal")
    if wal.exists():
        shutil.copyfile(wal, target.with_name(target.name + ".wal"))


@pytest.fixture(scope="session")
def audit_with_vars(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Callable[[dict], Path]:
    """dbt_vars -> a folder holding lfh.duckdb: conftest's audit_build (the development audit, the test lexicon,
    every model and data test at the default vars) copied, and the models reading one of `dbt_vars`
    (models_reading) rebuilt with them, with everything downstream and their data tests. Once per run per var
    set. Read-only."""
    from lfh.build.dbt import run_dbt

    def rebuilt(dbt_vars: dict) -> Path:
        if dbt_vars not in AUDIT_VAR_SETS:  # each listed set's selection is checked (tests/test_shared_audit.py)
            raise KeyError(f"{var_key(dbt_vars)}: add the var set to AUDIT_VAR_SETS in tests/fixtures_shared_audit.py")

        def build(folder: Path) -> None:
            warehouse = folder / "lfh.duckdb"
            audit_build = request.getfixturevalue("audit_build")  # asked here: a refused var set builds nothing
            copy_warehouse(audit_build / "lfh.duckdb", warehouse)
            selection = [f"{model}+" for model in models_reading(dbt_vars)]
            assert selection, f"no model reads any of {sorted(dbt_vars)}"
            with pytest.MonkeyPatch.context() as patch:
                patch.setenv("DBT_TARGET_PATH", str(folder / "target"))
                patch.setenv("DBT_LOG_PATH", str(folder / "logs"))
                run_dbt(["build", "--select", *selection], db_path=warehouse, dbt_vars=dbt_vars, capture=True)

        name = "audit-" + "-".join(f"{key}={value}" for key, value in sorted(dbt_vars.items()))
        return build_once(tmp_path_factory, name, build)

    return rebuilt


if __name__ == "__main__":
    _compile_worker(Path(sys.argv[1]))
