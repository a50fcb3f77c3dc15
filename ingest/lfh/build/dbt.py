"""`lfh build`: run dbt with the project's profile against the warehouse named by LFH_DB, or on Spark
(`--target spark`, build_spark: reading the raw tables from landed Parquet files; docs/SCALE_OUT.md).

One build at a time holds the warehouse lock for its whole run; vars are checked before dbt starts; dbt's
progress is shown compactly and a failure ends with its cause and the next step (the full log is logs/dbt.log).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import duckdb

from lfh.build.diagnosis import check_ready, explain
from lfh.build.fingerprint import (
    UNIT_TESTS,
    clear_fingerprint,
    current_fingerprint,
    differences,
    store_fingerprint,
    stored_fingerprint,
    unit_tests_unchanged,
)
from lfh.build.lock import stale_note, warehouse_lock
from lfh.build.runner import dbt_executable, run_dbt_process
from lfh.errors import BuildError
from lfh.paths import SPARK_DIR_ENV_VAR, database_path, parquet_landing_dir, spark_dir

__all__ = ["BuildError", "build_spark", "build_warehouse", "dbt_executable", "raw_parquet_vars", "run_dbt"]

# The raw tables a landing folder may hold (lfh ingest / lfh lexicon --parquet-dir), one sub-folder each.
RAW_PARQUET_TABLES = ("stories", "label_responses", "hand_labels", "rejects", "load_log",
                      "census_first_names", "wikipedia_first_names", "custom_first_names")


def _print(text: str) -> None:
    print(text, flush=True)


def run_dbt(arguments: list[str], db_path: Path | None = None, dbt_vars: dict | None = None,
            capture: bool = False, echo: Callable[[str], None] | None = None) -> subprocess.CompletedProcess:
    """Run one dbt command in the project folder with the project-local profile. Raises BuildError on failure."""
    target_db = (db_path or database_path()).resolve()
    outcome = run_dbt_process(arguments, target_db, dbt_vars, echo=None if capture else (echo or _print),
                              label=f"dbt {arguments[0]}" if arguments else "dbt")
    if outcome.returncode != 0:
        raise BuildError(f"dbt {' '.join(arguments)} failed on {target_db}: "
                         + explain(outcome.errors, outcome.stdout, target_db))
    return subprocess.CompletedProcess(arguments, outcome.returncode, outcome.stdout, "")


def build_warehouse(selection: str | None = None, dbt_vars: dict | None = None, skip_tests: bool = False,
                    full_refresh: bool = False, db_path: Path | None = None,
                    echo: Callable[[str], None] | None = None) -> str:
    """Build the warehouse (holding its lock throughout); returns dbt's summary line. Raises BuildError
    (BuildInterrupted on Ctrl-C/SIGTERM), WarehouseBusy (a WarehouseError)."""
    target_db = (db_path or database_path()).resolve()
    say = echo or (lambda _text: None)
    with warehouse_lock(target_db, "build") as held:
        note = stale_note(held)
        if note:
            say(note)
        problem = check_ready(target_db)
        if problem:
            raise BuildError(problem)
        with duckdb.connect(str(target_db)) as connection:
            current = current_fingerprint(connection, dbt_vars or {})
            stored = stored_fingerprint(connection)
            changed = differences(stored, current)
            clear_fingerprint(connection)  # a build that stops half way is followed by a full one
        if changed and not full_refresh:
            say("full rebuild: " + "; ".join(changed))
            full_refresh = True
        elif not changed and not full_refresh:
            say("incremental build: only stories loaded since the last build are processed")
        selector = ["--select", selection] if selection else []
        refresh = ["--full-refresh"] if full_refresh else []
        # the unit tests passed at the last complete build on this very project and vars, and the seeds' tables
        # hold the same files: an incremental build neither runs those tests nor reloads the seeds (its data tests
        # still run, on the changed stories: macros/incremental/changed_tests.sql)
        skip_unit = not full_refresh and not selection and unit_tests_unchanged(stored, current)
        if skip_unit and not skip_tests:
            say("unit tests and seeds: unchanged since the last build (same SQL, tests, seeds and vars); not run again")
        unit = ["--exclude-resource-type", "unit_test", "--exclude-resource-type", "seed"] if skip_unit else []
        commands = [["seed", *selector, *refresh], ["run", *selector, *refresh]] if skip_tests \
            else [["build", *selector, *refresh, *unit]]
        summary = ""
        for arguments in commands:
            outcome = run_dbt_process(arguments, target_db, dbt_vars, echo=echo, label=f"dbt {arguments[0]}")
            if outcome.returncode != 0:
                raise BuildError(f"dbt {arguments[0]} failed: " + explain(outcome.errors, outcome.stdout, target_db))
            summary = outcome.summary
        if skip_tests and not unit_tests_unchanged(stored, current):  # never passed on this project: run them next time
            current = {**current, UNIT_TESTS: None}
        if not selection:  # a partial build leaves the fingerprint cleared: the next full build rebuilds all
            with duckdb.connect(str(target_db)) as connection:
                store_fingerprint(connection, current)
    return summary


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


def build_spark(selection: str | None = None, dbt_vars: dict | None = None, skip_tests: bool = False,
                parquet_dir: Path | None = None, echo: Callable[[str], None] | None = None) -> str:
    """`lfh build --target spark`: dbt on the local Spark session (LFH_SPARK_DIR), reading the raw tables from the
    landed Parquet files under parquet_dir (default parquet_landing_dir()). Every model is built whole on Spark
    (no fingerprint, no incremental state: docs/SCALE_OUT.md). Returns dbt's summary line; raises BuildError."""
    dbt_vars = {**raw_parquet_vars(parquet_dir or parquet_landing_dir()), **(dbt_vars or {})}
    spark_dir().mkdir(parents=True, exist_ok=True)
    os.environ.setdefault(SPARK_DIR_ENV_VAR, str(spark_dir()))
    selector = ["--select", selection] if selection else []
    target = ["--target", "spark"]
    commands = [["seed", *selector, *target], ["run", *selector, *target]] if skip_tests \
        else [["build", *selector, *target]]
    summary = ""
    for arguments in commands:
        outcome = run_dbt_process(arguments, None, dbt_vars, echo=echo, label=f"dbt {arguments[0]} (spark)")
        if outcome.returncode != 0:
            raise BuildError(f"dbt {arguments[0]} --target spark failed on {spark_dir()}:\n"
                             + (outcome.stdout or "")[-4000:] + "\nRead logs/dbt.log for the failing model or test.")
        summary = outcome.summary
    return summary
