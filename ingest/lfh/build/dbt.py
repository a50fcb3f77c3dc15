"""`lfh build`: run dbt with the project's profile against the warehouse named by LFH_DB, or on Spark
(`--target spark`, reading the raw tables from landed Parquet files; docs/SCALE_OUT.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from lfh.errors import BuildError
from lfh.paths import DB_ENV_VAR, SPARK_DIR_ENV_VAR, database_path, parquet_landing_dir, project_root, spark_dir

# The raw tables a landing folder may hold (lfh ingest / lfh lexicon --parquet-dir), one sub-folder each.
RAW_PARQUET_TABLES = ("stories", "label_responses", "hand_labels", "rejects", "load_log",
                      "census_first_names", "wikipedia_first_names", "custom_first_names")


def dbt_executable() -> str:
    candidate = Path(sys.executable).parent / "dbt"
    return str(candidate) if candidate.exists() else "dbt"


def raw_parquet_vars(directory: Path) -> dict[str, object]:
    """The vars that make the on-run-start hook register DIR/<table> as raw.<table> (macros/dialect/raw_parquet.sql)."""
    directory = directory.expanduser().resolve()
    tables = [table for table in RAW_PARQUET_TABLES
              if (directory / table).is_dir() and any((directory / table).glob("*.parquet"))]
    if not tables:
        raise BuildError(
            f"no landed Parquet files under {directory}: land them first with `lfh ingest PATH --parquet-dir "
            f"{directory}` and `lfh lexicon --parquet-dir {directory}`, or name the folder with --parquet-dir")
    return {"raw_parquet_dir": str(directory), "raw_parquet_tables": tables}


def run_dbt(arguments: list[str], db_path: Path | None = None, dbt_vars: dict | None = None,
            capture: bool = False, target: str | None = None) -> subprocess.CompletedProcess:
    """Run one dbt command in the project folder with the project-local profile. Raises on failure."""
    root = project_root()
    target_db = (db_path or database_path()).resolve()
    target_db.parent.mkdir(parents=True, exist_ok=True)
    command = [dbt_executable(), *arguments, "--project-dir", str(root), "--profiles-dir", str(root)]
    if target:
        command += ["--target", target]
    if dbt_vars:
        command += ["--vars", json.dumps(dbt_vars)]
    environment = {**os.environ, DB_ENV_VAR: str(target_db), "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
    if target == "spark":
        spark_dir().mkdir(parents=True, exist_ok=True)
        environment[SPARK_DIR_ENV_VAR] = str(spark_dir())
        target_db = spark_dir()
    result = subprocess.run(command, cwd=root, env=environment, text=True,
                            capture_output=capture, check=False)
    if result.returncode != 0:
        detail = (result.stdout or "")[-4000:] if capture else ""
        raise BuildError(
            f"dbt {' '.join(arguments)} failed (exit {result.returncode}) on {target_db}.\n{detail}"
            "Read the dbt log above (or logs/dbt.log) for the failing model or test."
        )
    return result


def parse_var_value(value: str) -> object:
    """Numbers, booleans and lists as JSON; anything else (a baseline set name, a model) as text."""
    try:
        return json.loads(value)
    except ValueError:
        return value


def build_warehouse(selection: str | None = None, dbt_vars: dict | None = None, skip_tests: bool = False,
                    db_path: Path | None = None, target: str = "duckdb", parquet_dir: Path | None = None) -> Path:
    """`dbt build` of the selection (everything by default), or `dbt seed` + `dbt run` without the tests, on the
    DuckDB warehouse or (target spark) the local Spark session reading the raw tables from parquet_dir (default:
    parquet_landing_dir()). Returns what was built (the warehouse file or the Spark folder). Raises BuildError
    when dbt fails."""
    dbt_vars = dict(dbt_vars or {})
    if target == "spark" and parquet_dir is None:
        parquet_dir = parquet_landing_dir()
    if parquet_dir is not None:
        dbt_vars = {**raw_parquet_vars(parquet_dir), **dbt_vars}
    selector = ["--select", selection] if selection else []
    dbt_target = target if target != "duckdb" else None
    if skip_tests:
        run_dbt(["seed", *selector], db_path, dbt_vars or None, target=dbt_target)
        run_dbt(["run", *selector], db_path, dbt_vars or None, target=dbt_target)
    else:
        run_dbt(["build", *selector], db_path, dbt_vars or None, target=dbt_target)
    return spark_dir() if target == "spark" else (db_path or database_path())
