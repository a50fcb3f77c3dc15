"""Atomic replacement of a published folder.

Layout of a destination folder:

    versions/<id>/marts.duckdb, parquet/, manifest.json   one complete, never modified publication each
    versions/.building-<random>/                          a publication being written (never linked)
    current -> versions/<id>                              flipped with one rename(2): the atomic step
    marts.duckdb, parquet, manifest.json                  fixed links through `current`

Readers open the fixed names. A reader holding an old file keeps its open file (the old version stays on
disk until pruned, and an unlinked file stays readable through an open handle on POSIX); new opens see the
new version as soon as `current` flips. Nobody ever sees a half-written file, because nothing links to a
version before it is complete.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from lfh.serve.copy import PublishError

VERSIONS = "versions"
CURRENT = "current"
BUILDING_PREFIX = ".building-"
STABLE_NAMES = ("marts.duckdb", "parquet", "manifest.json")
LOCK_FILE = ".publish.lock"


@contextmanager
def publish_lock(destination: Path) -> Iterator[None]:
    """One publisher at a time per destination; a second one fails at once rather than waiting."""
    destination.mkdir(parents=True, exist_ok=True)
    with open(destination / LOCK_FILE, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise PublishError(
                f"another `lfh publish` is writing to {destination}; wait for it and run again"
            ) from exc
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def new_build_dir(destination: Path) -> Path:
    """A fresh folder on the destination's file system, so the final rename never copies."""
    versions = destination / VERSIONS
    versions.mkdir(parents=True, exist_ok=True)
    build_dir = versions / f"{BUILDING_PREFIX}{uuid.uuid4().hex}"
    build_dir.mkdir()
    return build_dir


def _fsync_dir(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _fsync_tree(root: Path) -> None:
    for path in sorted(root.rglob("*"), reverse=True):
        if path.is_file():
            with open(path, "rb") as handle:
                os.fsync(handle.fileno())
        elif path.is_dir():
            _fsync_dir(path)
    _fsync_dir(root)


def make_read_only(root: Path) -> None:
    """Files of a publication are never modified after it is linked; say so in their modes."""
    read_only = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
    for path in root.rglob("*"):
        if path.is_file():
            path.chmod(read_only)


def _check_stable_names(destination: Path) -> None:
    for name in STABLE_NAMES:
        path = destination / name
        expected = os.path.join(CURRENT, name)
        if path.is_symlink():
            if os.readlink(path) != expected:
                raise PublishError(f"{path} links to {os.readlink(path)}, not {expected}: remove it and publish again")
        elif path.exists():
            raise PublishError(
                f"{path} exists and is not a link made by `lfh publish`: move it away, or publish elsewhere with --to"
            )


def activate(destination: Path, build_dir: Path) -> Path:
    """Give build_dir its final name and make it current in one atomic rename. Returns the version folder."""
    _check_stable_names(destination)
    _fsync_tree(build_dir)
    version_id = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ") + "-" + uuid.uuid4().hex[:8]
    version_dir = destination / VERSIONS / version_id
    build_dir.rename(version_dir)
    staged_link = destination / f".{CURRENT}-{uuid.uuid4().hex}"
    staged_link.symlink_to(os.path.join(VERSIONS, version_id))
    os.replace(staged_link, destination / CURRENT)
    for name in STABLE_NAMES:
        link = destination / name
        if not link.is_symlink():
            link.symlink_to(os.path.join(CURRENT, name))
    _fsync_dir(destination)
    return version_dir


def current_version(destination: Path) -> Path | None:
    link = destination / CURRENT
    return (destination / os.readlink(link)) if link.is_symlink() else None


def _remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=False)


def prune(destination: Path, keep: int) -> list[Path]:
    """Delete leftover build folders and all but the newest `keep` versions (never the current one)."""
    versions = destination / VERSIONS
    if not versions.is_dir():
        return []
    current = current_version(destination)
    removed = []
    for leftover in versions.glob(f"{BUILDING_PREFIX}*"):
        _remove_tree(leftover)
        removed.append(leftover)
    finished = sorted((path for path in versions.iterdir() if not path.name.startswith(".")), reverse=True)
    for old in finished[max(keep, 1):]:
        if current is not None and old.resolve() == current.resolve():
            continue
        _remove_tree(old)
        removed.append(old)
    return removed
