"""One writer at a time: a lock file beside the warehouse (`<warehouse>.lock`) held for a command's whole run.

`lfh build` holds it from its first dbt call to its last (DuckDB's own file lock is released between dbt's
commands, and other writers could land rows mid-build); `lfh ingest`, `lfh lexicon` and `lfh publish` take it
too. The lock is a kernel `flock` on the file, so it disappears with the last process holding it: a lock file
left by a killed command is stale by construction and the next command simply takes it over. The file's text
names the owner (pid, command, start time) so a refused command can say who holds the warehouse.
Re-entrant within one process (`lfh demo` ingests and builds while holding it).
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from lfh.errors import WarehouseError


class WarehouseBusy(WarehouseError):
    """Another process holds the warehouse's lock; the message names it and what to do."""


@dataclass
class HeldLock:
    path: Path
    fd: int
    depth: int
    stale_owner: dict | None  # the owner a stale lock file named, when this process took it over


_held: dict[Path, HeldLock] = {}


def lock_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".lock")


def read_owner(path: Path) -> dict | None:
    try:
        owner = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return owner if isinstance(owner, dict) else None


def _alive(pid: int) -> bool:
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


@contextmanager
def warehouse_lock(db_path: Path, purpose: str) -> Iterator[HeldLock]:
    """Hold the warehouse's lock for the block; raise WarehouseBusy at once when another process holds it."""
    db_path = db_path.resolve()
    held = _held.get(db_path)
    if held is not None:
        held.depth += 1
        try:
            yield held
        finally:
            held.depth -= 1
        return
    path = lock_path(db_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        owner = read_owner(path)
        raise WarehouseBusy(
            f"{db_path} is in use by {describe_owner(owner)}: cannot {purpose} now. Wait for it to finish"
            + (f", or stop it (kill {owner['pid']})." if owner and owner.get("pid") else ".")
        ) from None
    previous = read_owner(path)
    stale = previous if previous and previous.get("pid") != os.getpid() else None
    owner = {"pid": os.getpid(), "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]])[:200],
             "purpose": purpose, "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    os.ftruncate(fd, 0)
    os.pwrite(fd, (json.dumps(owner) + "\n").encode(), 0)
    held = HeldLock(path, fd, 1, stale)
    _held[db_path] = held
    try:
        yield held
    finally:
        del _held[db_path]
        os.ftruncate(fd, 0)  # leave an empty file: the next owner writes its own name
        os.close(fd)


def stale_note(held: HeldLock) -> str | None:
    """A line for the user when the lock was taken over from a process that died without releasing it."""
    owner = held.stale_owner
    if not owner or not owner.get("pid"):
        return None
    state = "still running, but no longer holds it" if _alive(int(owner["pid"])) else "no longer running"
    return f"note: took over a stale warehouse lock left by {describe_owner(owner)} ({state})"
