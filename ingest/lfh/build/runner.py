"""Running dbt as a child process: in its own process group (ended with `lfh build`, never orphaned), under the
warehouse lock and the memory limit, its progress shown compactly and its failure reduced to the cause.

dbt writes its JSON events to our pipe (`--log-format json`) and its text log to logs/dbt.log at level info: node
starts, results, warnings and errors. dbt's default for the file, debug, also writes every statement it sends and
every connection it opens (about 12 MB for a build of the demo corpus), which cost about 8% of a build's CPU (a
sampling profile of one build); DBT_LOG_LEVEL_FILE=debug in the environment brings that log back.

On DuckDB, dbt runs in the warehouse's folder and the profile gets the file's bare name (LFH_DB=lfh.duckdb; the
spill folder lfh.duckdb.tmp beside it follows). dbt reparses the whole project (8-10 s of CPU more than a reused
parse) whenever the profile's connection settings differ from the last parse's in the same target/ folder, and those
include the DuckDB path: with an absolute path every new warehouse (another LFH_DB, each test's own file) paid a full
parse; with the bare name two warehouses of the same file name share the parse. Nothing in the project reads a file
by a relative path, and relative DBT_LOG_PATH / DBT_TARGET_PATH stay relative to the project, as before.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from lfh.build.memory import MEMORY_ENV_VAR, memory_limit
from lfh.errors import BuildError
from lfh.lock import warehouse_lock
from lfh.paths import DB_ENV_VAR, SPARK_DIR_ENV_VAR, database_path, project_root, spark_dir

DBT_ENV_VAR = "LFH_DBT_EXECUTABLE"  # another dbt (tests use a stand-in that sleeps)
STOP_GRACE_SECONDS = 10.0
DBT_FILE_LOG_LEVEL_ENV_VAR = "DBT_LOG_LEVEL_FILE"  # dbt's own variable: the user's setting wins
DBT_FILE_LOG_LEVEL = "info"  # see the module's docstring


class BuildInterrupted(BuildError):
    """`lfh build` was interrupted (Ctrl-C, SIGTERM); dbt's process group has been ended."""


def dbt_executable() -> str:
    configured = os.environ.get(DBT_ENV_VAR)
    if configured:
        return configured
    candidate = Path(sys.executable).parent / "dbt"
    return str(candidate) if candidate.exists() else "dbt"


def _die_with_parent() -> None:
    """In the child before exec: the kernel sends SIGTERM when `lfh build` dies, even by kill -9."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG (Linux)
    except (OSError, AttributeError):
        pass


@dataclass
class DbtOutcome:
    returncode: int
    stdout: str
    errors: list[str] = field(default_factory=list)
    summary: str = ""
    invocation_id: str | None = None  # dbt's, from its events: which run_results.json is this run's


class Progress:
    """One line rewritten in place when echo can rewrite its line (an echo with a `rewrite(text)` method: the CLI's
    on a terminal, lfh.cli.terminal); otherwise a line at every tenth of the nodes. Writes nothing itself."""

    def __init__(self, echo: Callable[[str], None] | None, label: str) -> None:
        self.echo = echo
        self.label = label
        self.rewrite: Callable[[str], None] | None = getattr(echo, "rewrite", None)
        self.tty = self.rewrite is not None
        self.started = time.perf_counter()
        self.last_decile = -1
        self.failed = 0
        self.done = 0

    def start(self) -> None:
        if self.echo is not None:
            self.echo(f"  {self.label}: starting (dbt reads the project first)")

    def update(self, total: int, name: str, ok: bool) -> None:
        """One node finished (dbt reports them out of order: count them rather than read their index)."""
        if self.echo is None or total <= 0:
            return
        self.done += 1
        done = self.done
        self.failed += 0 if ok else 1
        elapsed = time.perf_counter() - self.started
        fails = f", {self.failed} failed" if self.failed else ""
        if self.tty:
            width = 24
            filled = int(width * done / total)
            line = f"  {self.label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}{fails} " \
                   f"{elapsed:4.0f}s {name[:40]:40}"
            assert self.rewrite is not None and self.echo is not None
            self.rewrite(line)
            if done == total:
                self.echo("")  # line finished
                self.tty = False
                self.echo = None
            return
        decile = 10 * done // total
        if decile != self.last_decile or not ok:
            self.last_decile = decile
            self.echo(f"  {self.label} {done:>4}/{total} ({100 * done // total:3d}%) {elapsed:6.1f}s{fails}  "
                      f"{'FAILED ' if not ok else ''}{name}")

    def close(self) -> None:
        if self.tty and self.done and self.echo is not None:
            self.echo("")


_RESULT_EVENTS = {"LogModelResult", "LogTestResult", "LogSeedResult", "LogSnapshotResult", "LogNodeResult"}
_BAD_STATUSES = {"error", "fail", "runtime error"}
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _node_name(data: dict) -> str:
    info = data.get("node_info") or {}
    return str(info.get("node_name") or data.get("name") or data.get("description") or "")


def _consume(line: str, outcome: DbtOutcome, progress: Progress, text: list[str]) -> None:
    try:
        event = json.loads(line)
        info, data = event["info"], event.get("data") or {}
    except (ValueError, KeyError, TypeError):
        if line.strip():
            text.append(line.rstrip())
        return
    message = _ANSI.sub("", str(info.get("msg") or ""))
    text.append(message)
    outcome.invocation_id = outcome.invocation_id or info.get("invocation_id")
    name = info.get("name")
    # dbt names the node count `total` in model and seed results and `num_models` in test results
    total = data.get("total", data.get("num_models"))
    if name in _RESULT_EVENTS and total is not None:
        status = str(data.get("status", "")).lower()
        progress.update(int(total), _node_name(data), status not in _BAD_STATUSES)
    if info.get("level") == "error" and message.strip() and name not in {"RunResultErrorNoMessage"}:
        outcome.errors.append(message.strip())
    if name == "StatsLine":
        outcome.summary = message.strip()


def _invocation(arguments: list[str], target_db: Path, dbt_vars: dict | None,
                target: str) -> tuple[list[str], dict[str, str], Path]:
    """dbt's command line, environment and working folder for one command on a target. Every dbt process of lfh
    is started from here, so that they all see the same profile, vars and environment: dbt reuses a parse only
    when those are the same as when it was made."""
    root = project_root()
    target_db.parent.mkdir(parents=True, exist_ok=True)
    command = [dbt_executable(), *arguments, "--project-dir", str(root), "--profiles-dir", str(root),
               "--log-format", "json", "--log-format-file", "text", "--no-use-colors", "--target", target]
    if dbt_vars:
        command += ["--vars", json.dumps(dbt_vars)]
    environment = {DBT_FILE_LOG_LEVEL_ENV_VAR: DBT_FILE_LOG_LEVEL, **os.environ, DB_ENV_VAR: str(target_db),
                   MEMORY_ENV_VAR: memory_limit(), "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
    folder = root
    if target == "duckdb":  # the warehouse's folder and the file's bare name: see the module's docstring
        folder = target_db.parent
        environment[DB_ENV_VAR] = target_db.name
        log_path = environment.get("DBT_LOG_PATH")
        if log_path and not Path(log_path).is_absolute():  # dbt reads it from its working folder
            environment["DBT_LOG_PATH"] = str(root / log_path)
    if target == "spark":
        spark_dir().mkdir(parents=True, exist_ok=True)
        environment[SPARK_DIR_ENV_VAR] = str(spark_dir())  # the profile's paths, absolute whatever dbt's folder
    return command, environment, folder


class ParseAhead:
    """`dbt parse` of the project for a later command on the same warehouse, run beside other work.

    A fresh checkout's first build parses the whole project (about 10 s of CPU, most of a small build's fixed
    cost) before its first node; started early, on the other core, while the lexicon downloads say, that parse is
    done by the time the build starts, and the build reuses it (dbt's partial parsing: same profile, vars and
    environment, which _invocation guarantees). It reads the project and writes only dbt's target folder, so it
    takes no warehouse lock. Its output is discarded: if it fails, the build parses for itself and reports."""

    def __init__(self, db_path: Path | None = None, dbt_vars: dict | None = None) -> None:
        command, environment, folder = _invocation(["parse"], (db_path or database_path()).resolve(), dbt_vars,
                                                   "duckdb")
        self.process = subprocess.Popen(command, cwd=folder, env=environment, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, start_new_session=True,
                                        preexec_fn=_die_with_parent)

    def wait(self) -> bool:
        """Wait for the parse to end; whether it succeeded."""
        return self.process.wait() == 0

    def stop(self) -> None:
        """End the parse if it still runs (the work it was for was cut short)."""
        if self.process.poll() is None:
            _end_group(self.process)


def run_dbt_process(arguments: list[str], db_path: Path | None = None, dbt_vars: dict | None = None,
                    echo: Callable[[str], None] | None = None, label: str = "dbt",
                    target: str = "duckdb") -> DbtOutcome:
    """Run one dbt command in the project folder with the project-local profile, holding the lock of the warehouse
    it builds: the DuckDB file (db_path, default LFH_DB), or with target "spark" the local Spark folder
    (LFH_SPARK_DIR). Progress goes to echo (None: quiet). Returns the outcome (failed or not); raises
    BuildInterrupted."""
    target_db = (db_path or database_path()).resolve()
    command, environment, folder = _invocation(arguments, target_db, dbt_vars, target)
    locked = target_db
    if target == "spark":
        locked = spark_dir()
    outcome = DbtOutcome(returncode=-1, stdout="")
    text: list[str] = []
    progress = Progress(echo, label)
    progress.start()
    with warehouse_lock(locked, f"run dbt {arguments[0] if arguments else ''}".strip()) as held:
        process = subprocess.Popen(command, cwd=folder, env=environment, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, start_new_session=True,
                                   preexec_fn=_die_with_parent, pass_fds=(held.fd,) if held.fd is not None else ())
        try:
            with _terminate_raises():
                assert process.stdout is not None
                for line in process.stdout:
                    _consume(line, outcome, progress, text)
                outcome.returncode = process.wait()
        except BaseException:
            _end_group(process)
            progress.close()
            raise BuildInterrupted(f"interrupted: dbt (process group {process.pid}) was stopped; the warehouse keeps "
                                   "the tables finished so far. Run `lfh build` again.") from None
    progress.close()
    outcome.stdout = "\n".join(text)
    return outcome


class _Terminated(BaseException):
    pass


class _terminate_raises:
    """SIGTERM (and SIGHUP) to `lfh build` raise, so the dbt group is ended as on Ctrl-C (main thread only)."""

    def __enter__(self) -> None:
        self.saved: dict[int, object] = {}
        if sys.platform != "win32" and _in_main_thread():
            for number in (signal.SIGTERM, signal.SIGHUP):
                self.saved[number] = signal.signal(number, _raise_terminated)

    def __exit__(self, *exc: object) -> None:
        for number, handler in self.saved.items():
            signal.signal(number, handler)  # type: ignore[arg-type]


def _in_main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _raise_terminated(signum: int, frame: object) -> None:
    raise _Terminated(signum)


def _end_group(process: subprocess.Popen) -> None:
    """SIGINT to dbt's whole group (dbt cancels its queries), then SIGKILL whatever still runs after a grace."""
    for sig, grace in ((signal.SIGINT, STOP_GRACE_SECONDS), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            continue
        with contextlib.suppress(ProcessLookupError):  # the leader is gone; end any straggler of the group too
            os.killpg(process.pid, signal.SIGKILL)
        break
