"""`lfh build`: run dbt with the project's profile against the warehouse named by LFH_DB."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click

from lfh.paths import DB_ENV_VAR, database_path, project_root


def dbt_executable() -> str:
    candidate = Path(sys.executable).parent / "dbt"
    return str(candidate) if candidate.exists() else "dbt"


def run_dbt(arguments: list[str], db_path: Path | None = None, dbt_vars: dict | None = None,
            capture: bool = False) -> subprocess.CompletedProcess:
    """Run one dbt command in the project folder with the project-local profile. Raises on failure."""
    root = project_root()
    target_db = (db_path or database_path()).resolve()
    target_db.parent.mkdir(parents=True, exist_ok=True)
    command = [dbt_executable(), *arguments, "--project-dir", str(root), "--profiles-dir", str(root)]
    if dbt_vars:
        command += ["--vars", json.dumps(dbt_vars)]
    environment = {**os.environ, DB_ENV_VAR: str(target_db), "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
    result = subprocess.run(command, cwd=root, env=environment, text=True,
                            capture_output=capture, check=False)
    if result.returncode != 0:
        detail = (result.stdout or "")[-4000:] if capture else ""
        raise click.ClickException(
            f"dbt {' '.join(arguments)} failed (exit {result.returncode}) on {target_db}.\n{detail}"
            "Read the dbt log above (or logs/dbt.log) for the failing model or test."
        )
    return result


def _parse_var_value(value: str) -> object:
    """Numbers, booleans and lists as JSON; anything else (a baseline set name, a model) as text."""
    try:
        return json.loads(value)
    except ValueError:
        return value


@click.command()
@click.option("--select", "-s", "selection", default=None, help="dbt node selection, e.g. marts or +fct_characters")
@click.option("--var", "variables", multiple=True, metavar="NAME=VALUE",
              help="Override a dbt var, e.g. --var vote_threshold=0.6 (repeatable).")
@click.option("--skip-tests", is_flag=True, help="dbt run + seed instead of dbt build (no data or unit tests).")
def build(selection: str | None, variables: tuple[str, ...], skip_tests: bool) -> None:
    """Build every table with dbt (seeds, models, tests) in the warehouse."""
    dbt_vars: dict[str, object] = {}
    for item in variables:
        name, separator, value = item.partition("=")
        if not separator:
            raise click.BadParameter(f"{item!r}: write NAME=VALUE", param_hint="--var")
        dbt_vars[name] = _parse_var_value(value)
    selector = ["--select", selection] if selection else []
    if skip_tests:
        run_dbt(["seed", *selector], dbt_vars=dbt_vars)
        run_dbt(["run", *selector], dbt_vars=dbt_vars)
    else:
        run_dbt(["build", *selector], dbt_vars=dbt_vars)
    click.echo(f"built {database_path()}")
