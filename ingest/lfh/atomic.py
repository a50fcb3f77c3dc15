"""Files that appear complete or not at all: written aside (a hidden sibling), flushed to disk, then moved into
place with one rename (os.replace). A write that fails half way (a full disk, a kill) leaves the previous file, or
none, never a truncated one that looks whole; the partial sibling is removed on failure."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lfh.lock import process_alive

PARTIAL_MARK = ".partial-"
RETIRED_MARK = ".old-"  # a folder being replaced, between its two renames


def partial_path(path: Path) -> Path:
    """Where `path` is written before it is moved into place (same folder: the rename stays on one file system)."""
    return path.with_name(f".{path.name}{PARTIAL_MARK}{os.getpid()}")


def _sync(path: Path) -> None:
    if path.is_dir():
        for child in path.rglob("*"):
            if child.is_file():
                _sync(child)
        return
    with path.open("rb") as handle:
        os.fsync(handle.fileno())


@contextmanager
def written_aside(path: Path) -> Iterator[Path]:
    """Yield the path to write instead of `path` (a file, or a folder the block creates); on success it replaces
    `path` in one rename (a folder replaces an existing folder of that name), on failure it is removed."""
    partial = partial_path(path)
    _remove(partial)
    try:
        yield partial
        _sync(partial)
        if partial.is_dir() and path.is_dir():
            retired = path.with_name(f".{path.name}{RETIRED_MARK}{os.getpid()}")
            os.replace(path, retired)
            os.replace(partial, path)
            shutil.rmtree(retired, ignore_errors=True)
        else:
            os.replace(partial, path)
    except BaseException:
        _remove(partial)
        raise


def write_text(path: Path, text: str) -> None:
    with written_aside(path) as partial:
        partial.write_text(text, encoding="utf-8")


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def remove_stale_partials(folder: Path) -> None:
    """Remove partial files or folders left in `folder` by a process that no longer runs (killed mid-write)."""
    if not folder.is_dir():
        return
    for entry in folder.iterdir():
        mark = next((mark for mark in (PARTIAL_MARK, RETIRED_MARK) if mark in entry.name), None)
        if mark is None or not entry.name.startswith("."):
            continue
        pid = entry.name.rsplit(mark, 1)[1]
        if pid.isdigit() and not process_alive(int(pid)):
            _remove(entry)
