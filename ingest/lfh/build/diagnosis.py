"""A failed build reduced to its cause and the next step, and the checks made before dbt starts."""

from __future__ import annotations

import re
import signal
from pathlib import Path

import duckdb

from lfh.build.memory import MEMORY_ENV_VAR, memory_limit
from lfh.errors import WarehouseError
from lfh.failures import check_warehouse_file

LOG_HINT = "Full dbt log: logs/dbt.log."
_LOCK_PID = re.compile(r"Conflicting lock is held in (\S+) \(PID (\d+)\)")


def process_command(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return " ".join(part.decode(errors="replace") for part in raw.split(b"\0") if part)[:160]


def lock_holder(message: str) -> str | None:
    """'pid N (its command)' from DuckDB's 'Conflicting lock is held in ... (PID N)'."""
    match = _LOCK_PID.search(message)
    if not match:
        return None
    pid = int(match.group(2))
    command = process_command(pid) or match.group(1)
    return f"pid {pid} ({command})"


def locked_message(db_path: Path, holder: str | None) -> str:
    return (f"{db_path} is open in another process{': ' + holder if holder else ''}.\n"
            "Close it (a notebook, a BI tool, a running build) and run `lfh build` again; BI tools should read "
            "the published copy (lfh publish).")


def no_ingest_message(db_path: Path) -> str:
    return (f"no stories in {db_path} yet: land some first with `lfh ingest PATH...` (your files or the study's "
            "workbooks), or run `lfh demo` for a simulated corpus.")


def check_ready(db_path: Path, stories_landed_in: Path | None = None) -> str | None:
    """None when the warehouse holds stories (or they are landed as Parquet under stories_landed_in: the build then
    reads them there) and no other process has it open; else the message saying why not."""
    if stories_landed_in is not None:
        if not any((stories_landed_in / "stories").glob("*.parquet")):
            return (f"no stories landed under {stories_landed_in}: land some first with `lfh ingest PATH "
                    f"--parquet-dir {stories_landed_in}`.")
        if not db_path.exists():
            return None
    elif not db_path.exists():
        return no_ingest_message(db_path)
    try:
        check_warehouse_file(db_path)
    except WarehouseError as exc:
        return str(exc)
    try:
        connection = duckdb.connect(str(db_path), read_only=True)
    except duckdb.IOException as exc:
        return locked_message(db_path, lock_holder(str(exc)))
    try:
        try:
            stories = connection.execute("select count(*) from raw.stories").fetchone()[0]
        except duckdb.CatalogException:
            stories = 0
    finally:
        connection.close()
    return None if stories or stories_landed_in is not None else no_ingest_message(db_path)


def killed_message(returncode: int) -> str | None:
    """When dbt itself was ended by a signal (killed from outside, or by the kernel for memory): say so, rather
    than repeat the last line it printed (Python's "leaked semaphore objects" warning from its dying workers)."""
    if returncode >= 0:
        return None
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    cause = " (possibly by the kernel for lack of memory: see `dmesg`, or lower LFH_MEMORY_LIMIT)" \
        if -returncode == signal.SIGKILL else ""
    return (f"dbt was killed by {name}{cause} before it finished; the warehouse keeps the tables finished so far. "
            f"Run `lfh build` again. {LOG_HINT}")


def explain(errors: list[str], stdout: str, db_path: Path, target: str = "duckdb", returncode: int = 1) -> str:
    """The first error dbt reported, as one or two lines, then the next step (or that dbt was killed)."""
    killed = killed_message(returncode)
    if killed is not None:
        return killed
    everything = "\n".join(errors) + "\n" + stdout
    if target == "spark":
        if "java.lang.OutOfMemoryError" in everything:
            return ("the Spark driver ran out of memory: raise LFH_SPARK_DRIVER_MEMORY (default 2g), e.g. "
                    f"LFH_SPARK_DRIVER_MEMORY=6g lfh build --target spark. {LOG_HINT}")
        first = _first_cause(errors) or _last_lines(stdout)
        return f"{first}\n{LOG_HINT} Fix the failing model, test or input above and run `lfh build` again."
    if "Out of Memory" in everything or "failed to allocate" in everything:
        return (f"the build ran out of memory under its limit ({MEMORY_ENV_VAR}={memory_limit()}).\n"
                f"Raise it, e.g. {MEMORY_ENV_VAR}=8GiB lfh build (DuckDB spills beyond the limit to "
                f"{db_path.name}.tmp/, but some steps need more). {LOG_HINT}")
    if "Could not set lock" in everything or "Conflicting lock" in everything:
        return locked_message(db_path, lock_holder(everything)) + " " + LOG_HINT
    if re.search(r"Table with name (stories|label_responses) does not exist", everything):
        return no_ingest_message(db_path) + " " + LOG_HINT
    first = _first_cause(errors) or _last_lines(stdout)
    return f"{first}\n{LOG_HINT} Fix the failing model, test or input above and run `lfh build` again."


def _first_cause(errors: list[str]) -> str:
    """The first lines of dbt's error messages, without its per-node status lines and summaries."""
    lines = []
    for message in errors:
        first = message.strip().splitlines()[0] if message.strip() else ""
        if not first or re.match(r"(Completed with|Done\.|\d+ of \d+ (ERROR|FAIL))", first):
            continue
        lines += [line.strip() for line in message.splitlines() if line.strip() and not line.strip().startswith(">")]
        if len(lines) >= 3:
            break
    return " ".join(lines[:3])[:400]


def _last_lines(stdout: str) -> str:
    lines = [line.strip() for line in stdout.splitlines() if line.strip()]
    return " ".join(lines[-2:])[:400] or "dbt failed without a message"
