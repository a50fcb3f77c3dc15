"""One writer at a time, readers beside each other but never beside a writer: a lock file beside the warehouse
(`<warehouse>.lock`) held for a command's whole run.

Writers take it exclusively: `lfh build` from its first dbt call to its last (DuckDB's own file lock is released
between dbt's commands, and other writers could land rows mid-build); `lfh ingest` and `lfh lexicon` too. Readers
(`lfh report`, `lfh audit-sample`, `lfh publish`, `lfh label`, `lfh simulate`, `lfh demo`'s checks) take it shared:
they wait for a running writer (up to `wait` seconds, LFH_LOCK_WAIT by default), so a reader never opens the file
between two of dbt's connections (which made the build fail) nor sees a half-built warehouse. A writer that finds
only readers waits for them instead of failing; a writer that finds another writer is refused at once, naming it.
Writers queue through a second file (`<warehouse>.lock.queue`): while a writer waits, new readers wait behind it,
so a stream of readers cannot starve a build.

The lock is a kernel `flock` on the file, so it disappears with the last process holding it: a lock file left by
a killed command is stale by construction and the next command simply takes it over. The file's text names the
writer holding it (pid, command, start time) so a refused or waiting command can say who holds the warehouse.
Re-entrant within one process (`lfh demo` ingests and builds while holding it).
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from lfh.errors import WarehouseError

WAIT_ENV_VAR = "LFH_LOCK_WAIT"
DEFAULT_WAIT_SECONDS = 600.0
POLL_SECONDS = 0.1


class WarehouseBusy(WarehouseError):
    """Another process holds the warehouse's lock; the message names it and what to do."""


@dataclass
class HeldLock:
    path: Path
    fd: int | None  # None: a reader of a file whose lock cannot be created (a read-only published copy)
    depth: int
    stale_owner: dict | None  # the owner a stale lock file named, when this process took it over
    shared: bool = False


_held: dict[Path, HeldLock] = {}
# Where a command waiting for the lock says so (the CLI sets it to stderr; library code never prints).
_announce: Callable[[str], None] | None = None


def set_wait_announcer(announce: Callable[[str], None] | None) -> None:
    global _announce
    _announce = announce


def default_wait() -> float:
    """Seconds a command waits for the warehouse: LFH_LOCK_WAIT, else 600."""
    text = os.environ.get(WAIT_ENV_VAR, "").strip()
    try:
        return max(0.0, float(text)) if text else DEFAULT_WAIT_SECONDS
    except ValueError:
        raise WarehouseError(f"{WAIT_ENV_VAR}={text!r} is not a number of seconds; e.g. {WAIT_ENV_VAR}=60") from None


def lock_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".lock")


def queue_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".lock.queue")


def read_owner(path: Path) -> dict | None:
    try:
        owner = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return owner if isinstance(owner, dict) else None


def process_alive(pid: int) -> bool:
    """Whether a process with this id runs (one of another user counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def describe_owner(owner: dict | None) -> str:
    if not owner:
        return "another process (its lock file names no owner)"
    pid = owner.get("pid")
    return f"pid {pid} (`{owner.get('command', '?')}`, since {owner.get('started', '?')})"


def _live_writer(path: Path) -> dict | None:
    """The writer the lock file names when that process still runs (else the holders are readers, or a dbt child
    finishing after its build died)."""
    owner = read_owner(path)
    if owner and owner.get("pid") and process_alive(int(owner["pid"])):
        return owner
    return None


def _try(fd: int, operation: int) -> bool:
    try:
        fcntl.flock(fd, operation | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _open_lock_file(path: Path, shared: bool) -> int | None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        if not shared:
            raise
    try:  # a reader of a read-only folder (a published copy): lock when the file exists, else nobody can build
        return os.open(path, os.O_RDONLY)
    except OSError:
        return None


def announce(text: str) -> None:
    """Leave a line for the user: the CLI renders it on stderr (set_wait_announcer); library code never prints."""
    if _announce is not None:
        _announce(text)


def _busy(db_path: Path, owner: dict | None, purpose: str, waited: float) -> WarehouseBusy:
    after = f" after waiting {waited:.0f}s" if waited >= 1 else ""
    return WarehouseBusy(
        f"{db_path} is in use by {describe_owner(owner)}: cannot {purpose} now{after}. Wait for it to finish"
        + (f", or stop it (kill {owner['pid']})" if owner and owner.get("pid") else "")
        + (", or wait longer (--wait SECONDS or LFH_LOCK_WAIT)." if waited >= 1 else ".")
    )


def _pass_queue(db_path: Path, purpose: str, deadline: float, wait: float) -> None:
    """A reader waits while a writer queues for the warehouse (so readers cannot starve it)."""
    path = queue_path(db_path)
    fd = _open_lock_file(path, shared=True)
    if fd is None:
        return
    try:
        announced = False
        while not _try(fd, fcntl.LOCK_SH):
            if time.monotonic() >= deadline:
                raise _busy(db_path, read_owner(path), purpose, wait)
            if not announced:
                announce(f"waiting for {describe_owner(read_owner(path))}, queued to write {db_path} "
                         f"(up to {wait:.0f}s; --wait to change)")
                announced = True
            time.sleep(POLL_SECONDS)
    finally:
        os.close(fd)


def _acquire_shared(db_path: Path, fd: int, path: Path, purpose: str, wait: float) -> None:
    deadline = time.monotonic() + wait
    _pass_queue(db_path, purpose, deadline, wait)
    announced = False
    while not _try(fd, fcntl.LOCK_SH):
        owner = read_owner(path)
        if time.monotonic() >= deadline:
            raise _busy(db_path, owner, purpose, wait)
        if not announced:
            announce(f"waiting for {describe_owner(owner)} to finish with {db_path} before reading it "
                     f"(up to {wait:.0f}s; --wait to change)")
            announced = True
        time.sleep(POLL_SECONDS)


def _acquire_exclusive(db_path: Path, fd: int, path: Path, purpose: str, wait: float) -> None:
    if _try(fd, fcntl.LOCK_EX):
        return
    writer = _live_writer(path)
    if writer is not None:
        raise _busy(db_path, writer, purpose, 0)
    # only readers hold it: queue (new readers now wait behind us) and wait for them to finish
    queue = os.open(queue_path(db_path), os.O_RDWR | os.O_CREAT, 0o644)
    if not _try(queue, fcntl.LOCK_EX):  # another writer already waits for these readers
        os.close(queue)
        raise _busy(db_path, read_owner(queue_path(db_path)), purpose, 0)
    try:
        me = _owner_record(purpose)
        os.ftruncate(queue, 0)
        os.pwrite(queue, (json.dumps(me) + "\n").encode(), 0)
        deadline = time.monotonic() + wait
        announced = False
        while not _try(fd, fcntl.LOCK_EX):
            writer = _live_writer(path)
            if writer is not None:
                raise _busy(db_path, writer, purpose, 0)
            if time.monotonic() >= deadline:
                raise WarehouseBusy(f"{db_path} is still being read after {wait:.0f}s: cannot {purpose} now. "
                                    "Close the readers (lfh report, audit-sample, publish, ...) or wait longer "
                                    f"({WAIT_ENV_VAR}=SECONDS).")
            if not announced:
                announce(f"waiting for the commands reading {db_path} to finish (up to {wait:.0f}s)")
                announced = True
            time.sleep(POLL_SECONDS)
    finally:
        os.ftruncate(queue, 0)
        os.close(queue)


def _owner_record(purpose: str) -> dict:
    return {"pid": os.getpid(), "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]])[:200],
            "purpose": purpose, "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}


@contextmanager
def _registered(db_path: Path, held: HeldLock) -> Iterator[HeldLock]:
    """This process holds db_path's lock for the block: a nested warehouse_lock reuses it."""
    _held[db_path] = held
    try:
        yield held
    finally:
        del _held[db_path]


@contextmanager
def warehouse_lock(db_path: Path, purpose: str, shared: bool = False,
                   wait: float | None = None) -> Iterator[HeldLock]:
    """Hold the warehouse's lock for the block. A writer (shared False) is refused at once (WarehouseBusy) when
    another writer holds it and waits up to `wait` seconds for readers; a reader (shared True) waits up to `wait`
    seconds for a writer. `wait` None: LFH_LOCK_WAIT (default 600)."""
    db_path = db_path.resolve()
    held = _held.get(db_path)
    if held is not None:
        if held.shared and not shared:
            raise WarehouseError(f"cannot {purpose}: this command reads {db_path} and cannot also write it")
        held.depth += 1
        try:
            yield held
        finally:
            held.depth -= 1
        return
    wait = default_wait() if wait is None else max(0.0, wait)
    path = lock_path(db_path)
    fd = _open_lock_file(path, shared)
    if fd is None:  # a reader of a folder nobody can build in
        with _registered(db_path, HeldLock(path, None, 1, None, shared=True)) as held:
            yield held
        return
    try:
        if shared:
            _acquire_shared(db_path, fd, path, purpose, wait)
        else:
            _acquire_exclusive(db_path, fd, path, purpose, wait)
    except BaseException:
        os.close(fd)
        raise
    stale = None
    if not shared:
        previous = read_owner(path)
        stale = previous if previous and previous.get("pid") != os.getpid() else None
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(_owner_record(purpose)) + "\n").encode(), 0)
    try:
        with _registered(db_path, HeldLock(path, fd, 1, stale, shared=shared)) as held:
            yield held
    finally:
        if not shared:
            os.ftruncate(fd, 0)  # leave an empty file: the next owner writes its own name
        os.close(fd)


def stale_note(held: HeldLock) -> str | None:
    """A line for the user when the lock was taken over from a process that died without releasing it."""
    owner = held.stale_owner
    if not owner or not owner.get("pid"):
        return None
    state = "still running, but no longer holds it" if process_alive(int(owner["pid"])) else "no longer running"
    return f"note: took over a stale warehouse lock left by {describe_owner(owner)} ({state})"
