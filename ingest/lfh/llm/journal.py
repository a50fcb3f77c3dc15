"""Append-only JSON Lines output that doubles as the journal a resumed run reads.

Each record is written as one complete line and flushed to the kernel at once, so a process killed at any
moment (kill -9 included) loses at most the line it was writing; that torn last line is cut off when the file
is opened again. fsync runs on a short timer and at close (group commit), so a machine crash loses at most the
last `fsync_interval` seconds, and a run does not pay one disk flush per request.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any


def repair_tail(path: Path) -> int:
    """Cut a partial last line (no trailing newline, left by a kill). Returns the number of bytes removed."""
    if not path.exists():
        return 0
    size = path.stat().st_size
    if size == 0:
        return 0
    with open(path, "rb+") as handle:
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return 0
        # walk back to the last newline, in blocks
        position = size
        block = 65536
        keep = 0
        while position > 0:
            start = max(0, position - block)
            handle.seek(start)
            chunk = handle.read(position - start)
            index = chunk.rfind(b"\n")
            if index >= 0:
                keep = start + index + 1
                break
            position = start
        handle.truncate(keep)
        handle.flush()
        os.fsync(handle.fileno())
        return size - keep


def read_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) for each line; a line that is not a JSON object raises ValueError naming it."""
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not valid JSON ({exc.msg}); fix or remove that line") from None
            if not isinstance(record, dict):
                raise ValueError(f"{path}:{number}: expected a JSON object")
            yield number, record


class JournalWriter:
    """Appends records to one file; safe to call from one event loop, fsyncs from a timer thread."""

    def __init__(self, path: Path, fsync_interval: float = 0.2) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        repair_tail(path)
        self.path = path
        self._handle: IO[str] = open(path, "a", encoding="utf-8")  # noqa: SIM115 (closed in close())
        self._lock = threading.Lock()
        self._dirty = False
        self._closed = threading.Event()
        self._interval = fsync_interval
        self._syncer = threading.Thread(target=self._sync_loop, name=f"fsync {path.name}", daemon=True)
        self._syncer.start()

    def append(self, records: list[dict[str, Any]]) -> None:
        """Write the records as one block (one write call) and hand it to the kernel."""
        if not records:
            return
        block = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
        with self._lock:
            self._handle.write(block)
            self._handle.flush()
            self._dirty = True

    def _sync(self) -> None:
        with self._lock:
            if not self._dirty:
                return
            self._dirty = False
            descriptor = self._handle.fileno()
        os.fsync(descriptor)

    def _sync_loop(self) -> None:
        while not self._closed.wait(self._interval):
            self._sync()

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        self._syncer.join()
        self._sync()
        self._handle.close()

    def __enter__(self) -> JournalWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def count_records(path: Path) -> int:
    """Complete lines in a journal (after cutting a torn last line)."""
    if not path.exists():
        return 0
    repair_tail(path)
    with open(path, "rb") as handle:
        return sum(1 for line in handle if line.strip())


def keep_current(path: Path, first_new: int, still_failing: Callable[[dict[str, Any]], bool],
                 key: Callable[[dict[str, Any]], str]) -> int:
    """Rewrite a failure log to what is failing now: every record from line `first_new` + 1 on (this run's),
    and older records only where `still_failing` says so; one record per key, the latest. Atomic (rename), so a
    kill leaves the old or the new file. Returns the records kept."""
    if not path.exists():
        return 0
    latest: dict[str, dict[str, Any]] = {}
    for position, (_number, record) in enumerate(read_records(path)):
        if position >= first_new or still_failing(record):
            latest.pop(key(record), None)  # re-insert so the file keeps the order of the latest failure
            latest[key(record)] = record
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(record, ensure_ascii=False) + "\n" for record in latest.values()))
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    return len(latest)


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + f".{int(time.time() * 1000) % 1000:03d}Z"
