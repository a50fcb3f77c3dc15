"""`lfh build`: run dbt with the project's profile against the warehouse named by LFH_DB, or on Spark
(`--target spark`: reading the raw tables from landed Parquet files; docs/SCALE_OUT.md). One entry point,
build_warehouse, for both targets.

One build at a time holds the warehouse lock for its whole run; vars are checked before dbt starts; dbt's
progress is shown compactly and a failure ends with its cause and the next step (the full log is logs/dbt.log).
"""

from __future__ import annotations

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
    story_sources,
    unit_tests_digest,
    unit_tests_unchanged,
)
from lfh.build.provenance import record_run
from lfh.build.runner import DbtOutcome, dbt_executable, run_dbt_process
from lfh.build.state import landed_signature, loads_present, record_build, state_recorded
from lfh.build.unit_tests import all_passed, passed_at, record_passed, unit_tests_key
from lfh.build.up_to_date import build_record, nothing_to_do
from lfh.errors import BuildError
from lfh.lock import stale_note, warehouse_lock
from lfh.paths import database_path, dbt_target_dir, parquet_landing_dir, project_root, spark_dir

__all__ = ["TARGETS", "BuildError", "build_warehouse", "dbt_executable", "nothing_to_build", "raw_parquet_vars",
           "run_dbt"]

# The raw tables a landing folder may hold (lfh ingest / lfh lexicon --parquet-dir), one sub-folder each.
RAW_PARQUET_TABLES = ("stories", "label_responses", "hand_labels", "rejects", "load_log", "runs",
                      "census_first_names", "wikipedia_first_names", "custom_first_names", "census_surnames")


def run_dbt(arguments: list[str], db_path: Path | None = None, dbt_vars: dict | None = None,
            capture: bool = False, echo: Callable[[str], None] | None = None) -> subprocess.CompletedProcess:
    """Run one dbt command in the project folder with the project-local profile; its progress goes to echo (none:
    quiet; the library prints nothing). Raises BuildError on failure."""
    target_db = (db_path or database_path()).resolve()
    outcome = run_dbt_process(arguments, target_db, dbt_vars, echo=None if capture else echo,
                              label=f"dbt {arguments[0]}" if arguments else "dbt")
    if arguments and arguments[0] in RECORDED_COMMANDS:
        with warehouse_lock(target_db, "record the dbt run"):
            _record(target_db, outcome, dbt_vars)
    if outcome.returncode != 0:
        raise BuildError(f"dbt {' '.join(arguments)} failed on {target_db}: "
                         + explain(outcome.errors, outcome.stdout, target_db, returncode=outcome.returncode))
    return subprocess.CompletedProcess(arguments, outcome.returncode, outcome.stdout, "")


TARGETS = ("duckdb", "spark")
UNIT_TEST_CHOICES = ("unless_passed", "always", "never")
RECORDED_COMMANDS = ("build", "run", "seed")  # the dbt commands that build relations


def _record(target_db: Path, outcome: DbtOutcome, dbt_vars: dict | None) -> None:
    """Keep this run's record (lfh.build.provenance) in the warehouse it built, failed or not: the nodes it did
    build are its own either way. Under the warehouse lock the caller holds."""
    if not target_db.is_file():
        return
    try:
        with duckdb.connect(str(target_db)) as connection:
            record_run(connection, dbt_target_dir(), outcome.invocation_id, dbt_vars, project_root())
    except duckdb.Error:
        if outcome.returncode == 0:
            raise
        # dbt failed, perhaps because the file cannot be written: its own error is the one to report


def build_warehouse(selection: str | None = None, dbt_vars: dict | None = None, skip_tests: bool = False,
                    full_refresh: bool = False, db_path: Path | None = None,
                    echo: Callable[[str], None] | None = None, target: str = "duckdb",
                    parquet_dir: Path | None = None, check_up_to_date: bool = True,
                    unit_tests: str = "unless_passed") -> str:
    """Build the warehouse of a target (holding its lock throughout); returns dbt's summary line, or on DuckDB
    the line saying there is nothing to build (nothing_to_build; check_up_to_date=False runs dbt anyway).

    target "duckdb": the DuckDB file db_path (default LFH_DB), its raw tables the warehouse's own or, with
    parquet_dir, the landed Parquet files; incremental, with a full rebuild whenever the fingerprint changed.
    target "spark": the local Spark target (LFH_SPARK_DIR), its raw tables the landed Parquet files under
    parquet_dir (default parquet_landing_dir()); every model a full table (docs/SCALE_OUT.md), so no fingerprint.
    dbt's unit tests (UNIT_TEST_CHOICES): "unless_passed" runs them unless they all passed on this checkout with the
    same key (lfh.build.unit_tests), "always" runs them, "never" leaves them to `make test` (the demo).
    Raises BuildError (BuildInterrupted on Ctrl-C/SIGTERM), WarehouseBusy (a WarehouseError)."""
    if target not in TARGETS:
        raise BuildError(f"unknown target {target!r}: one of {', '.join(TARGETS)}")
    if unit_tests not in UNIT_TEST_CHOICES:
        raise BuildError(f"unknown unit_tests {unit_tests!r}: one of {', '.join(UNIT_TEST_CHOICES)}")
    say = echo or (lambda _text: None)
    if target == "spark" and parquet_dir is None:
        parquet_dir = parquet_landing_dir()
    if parquet_dir is not None:
        dbt_vars = {**raw_parquet_vars(parquet_dir), **(dbt_vars or {})}
    target_db = (db_path or database_path()).resolve()
    locked = spark_dir() if target == "spark" else target_db  # one build at a time per warehouse (Spark: per metastore)
    with warehouse_lock(locked, "build") as held:
        note = stale_note(held)
        if note:
            say(note)
        current = stored = None
        loads: list[str] = []
        landed: dict[str, str] = {}
        if target == "duckdb" and check_up_to_date:
            nothing = nothing_to_build(dbt_vars, skip_tests, full_refresh, selection, target_db, parquet_dir)
            if nothing:
                return nothing
        if target == "duckdb":
            current, stored, full_refresh, loads = _plan_duckdb_build(target_db, dbt_vars or {}, full_refresh,
                                                                      parquet_dir, say)
            landed = _landed(target_db, parquet_dir)
        selector = ["--select", selection] if selection else []
        refresh = ["--full-refresh"] if full_refresh else []
        # the unit tests passed at the last complete build on this very project and vars, and the seeds' tables
        # hold the same files: an incremental build neither runs those tests nor reloads the seeds (its data tests
        # still run, on the changed stories: macros/incremental/changed_tests.sql)
        skip_unit = current is not None and not full_refresh and not selection and unit_tests != "always" \
            and unit_tests_unchanged(stored, current)
        if skip_unit and not skip_tests:
            say("unit tests and seeds: unchanged since the last build (same SQL, tests, seeds and vars); not run "
                "again, nor the models that read only the lexicon and seeds")
        unit = ["--exclude-resource-type", "unit_test", "--exclude-resource-type", "seed"] if skip_unit else []
        # a build that runs every unit test, unless the checkout's record says they all passed under this key
        runs_every_unit_test = not (skip_unit or skip_tests or selection) and unit_tests != "never"
        unit_key = passed_before = None
        if runs_every_unit_test:
            digest = current[UNIT_TESTS] if current is not None else unit_tests_digest(dbt_vars or {})
            unit_key = unit_tests_key(digest, target)
            if unit_tests == "unless_passed":
                passed_before = passed_at(dbt_target_dir(), unit_key)
        if passed_before:
            say(f"unit tests: every one passed on this checkout ({passed_before}) with the same SQL, tests, seeds, "
                "vars and engine; not run again (`lfh build --force` runs them)")
        if passed_before or (unit_tests == "never" and not skip_unit):
            unit = ["--exclude-resource-type", "unit_test"]
        if skip_unit:  # and the nodes that read only the lexicon and seeds: the same rows as the last build's
            selector = ["--select", *[f"{source}+" for source in story_sources()]]
        # skip_tests: the seeds and models of `dbt build`, in one dbt process (as `dbt seed` then `dbt run` would
        # build them, without a second start and project parse)
        no_tests = ["--exclude-resource-type", "test", "--exclude-resource-type", "unit_test"]
        commands = [["build", *selector, *refresh, *(no_tests if skip_tests else unit)]]
        summary = ""
        for arguments in commands:
            outcome = run_dbt_process(arguments, target_db, dbt_vars, echo=echo, label=f"dbt {arguments[0]}",
                                      target=target)
            if target == "duckdb":
                _record(target_db, outcome, dbt_vars)
            if outcome.returncode != 0:
                where = spark_dir() if target == "spark" else target_db
                raise BuildError(f"dbt {arguments[0]} failed on {where}: "
                                 + explain(outcome.errors, outcome.stdout, target_db, target, outcome.returncode))
            summary = outcome.summary
        if unit_key is not None and not passed_before and all_passed(dbt_target_dir()):
            record_passed(dbt_target_dir(), unit_key)
        if current is not None and (skip_tests or unit_tests == "never") and not passed_before \
                and not unit_tests_unchanged(stored, current):
            current = {**current, UNIT_TESTS: None}  # they never passed on this project: run them next time
        if current is not None and not selection:  # a partial build leaves the fingerprint cleared: next is full
            with duckdb.connect(str(target_db)) as connection:
                connection.begin()  # the bookkeeping and the fingerprint: both or neither
                record_build(connection, loads, full_refresh)
                store_fingerprint(connection, build_record(current, landed, data_tests=not skip_tests))
                connection.commit()
    return summary


def nothing_to_build(dbt_vars: dict | None = None, skip_tests: bool = False, full_refresh: bool = False,
                     selection: str | None = None, db_path: Path | None = None,
                     parquet_dir: Path | None = None) -> str | None:
    """On DuckDB: the line saying the build has nothing to do (lfh.build.up_to_date: same fingerprint, nothing
    landed since the last complete build, its data tests run), or None when dbt must run. Reads the warehouse
    read-only, starts no dbt. A selection or a full refresh always runs dbt."""
    if selection or full_refresh:
        return None
    if parquet_dir is not None:
        dbt_vars = {**raw_parquet_vars(parquet_dir), **(dbt_vars or {})}
    target_db = (db_path or database_path()).resolve()
    if not target_db.exists():
        return None
    try:  # no lock taken: a running build holds the file (the connection fails) or has cleared the fingerprint
        with duckdb.connect(str(target_db), read_only=True) as connection:
            stored = stored_fingerprint(connection)
            if stored is None or not state_recorded(connection):
                return None
            landed = landed_signature(connection, parquet_dir)
            current = current_fingerprint(connection, dbt_vars or {}, parquet_dir=parquet_dir)
            if not nothing_to_do(stored, current, landed, skip_tests, state_recorded=True):
                return None
            built_at = connection.execute("select max(built_at) from meta.build_fingerprint").fetchone()[0]
    except duckdb.Error:
        return None  # locked by another process, or not a warehouse: the build says why
    when = f" ({built_at:%Y-%m-%d %H:%M %Z})" if built_at else ""
    return (f"nothing to build: no stories, labels or hand labels have landed and nothing has changed since the last "
            f"complete build{when}; `lfh build --force` runs dbt anyway")


def _landed(target_db: Path, parquet_dir: Path | None) -> dict[str, str]:
    """The raw layer now, before dbt runs (lfh.build.state.landed_signature); empty for a warehouse not made yet."""
    if parquet_dir is None and not target_db.exists():
        return {}
    with duckdb.connect(str(target_db) if parquet_dir is None else ":memory:", read_only=parquet_dir is None) as \
            connection:
        return landed_signature(connection, parquet_dir)


def _plan_duckdb_build(target_db: Path, dbt_vars: dict, full_refresh: bool, parquet_dir: Path | None,
                       say: Callable[[str], None]) -> tuple[dict, dict | None, bool, list[str]]:
    """Check the warehouse is ready, compare the fingerprint, clear it; (the fingerprint to store after a complete
    build, the last complete build's, whether the build must be a full refresh, the loads present before dbt runs)."""
    problem = check_ready(target_db, stories_landed_in=parquet_dir)
    if problem:
        raise BuildError(problem)
    with duckdb.connect(str(target_db)) as connection:
        current = current_fingerprint(connection, dbt_vars, parquet_dir=parquet_dir)
        stored = stored_fingerprint(connection)
        changed = differences(stored, current)
        loads = loads_present(connection, parquet_dir)
        clear_fingerprint(connection)  # a build that stops half way is followed by a full one
    if changed and not full_refresh:
        say("full rebuild: " + "; ".join(changed))
        full_refresh = True
    elif not changed and not full_refresh:
        say("incremental build: only stories loaded since the last build are processed")
    return current, stored, full_refresh, loads


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
