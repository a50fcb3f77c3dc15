"""`lfh build`: run dbt with the project's profile against the warehouse named by LFH_DB.

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
    clear_fingerprint,
    current_fingerprint,
    differences,
    store_fingerprint,
    stored_fingerprint,
)
from lfh.build.lock import stale_note, warehouse_lock
from lfh.build.runner import dbt_executable, run_dbt_process
from lfh.errors import BuildError
from lfh.paths import database_path

__all__ = ["BuildError", "build_warehouse", "dbt_executable", "run_dbt"]


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
            changed = differences(stored_fingerprint(connection), current)
            clear_fingerprint(connection)  # a build that stops half way is followed by a full one
        if changed and not full_refresh:
            say("full rebuild: " + "; ".join(changed))
            full_refresh = True
        elif not changed and not full_refresh:
            say("incremental build: only stories loaded since the last build are processed")
        selector = ["--select", selection] if selection else []
        refresh = ["--full-refresh"] if full_refresh else []
        commands = [["seed", *selector, *refresh], ["run", *selector, *refresh]] if skip_tests \
            else [["build", *selector, *refresh]]
        summary = ""
        for arguments in commands:
            outcome = run_dbt_process(arguments, target_db, dbt_vars, echo=echo, label=f"dbt {arguments[0]}")
            if outcome.returncode != 0:
                raise BuildError(f"dbt {arguments[0]} failed: " + explain(outcome.errors, outcome.stdout, target_db))
            summary = outcome.summary
        if not selection:  # a partial build leaves the fingerprint cleared: the next full build rebuilds all
            with duckdb.connect(str(target_db)) as connection:
                store_fingerprint(connection, current)
    return summary


