"""Opening the DuckDB warehouse: writers under the exclusive warehouse lock (lfh.lock), readers through
`reading`, which takes it shared, so a reader waits for a running build instead of breaking it or seeing it half
done."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from lfh.build.fingerprint import unfinished_build_note
from lfh.errors import WarehouseError
from lfh.failures import check_warehouse_file, first_line, stale_views_note
from lfh.lock import WarehouseBusy, announce, warehouse_lock
from lfh.paths import database_path


def connect(path: Path | None = None, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open the warehouse (creating its folder). Raises WarehouseError for a file that is not a DuckDB warehouse,
    WarehouseBusy when another process holds DuckDB's own file
    lock (a BI tool or notebook; lfh's own commands queue on the warehouse lock instead)."""
    target = path or database_path()
    check_warehouse_file(target)
    if not read_only:
        target.parent.mkdir(parents=True, exist_ok=True)
    try:
        return duckdb.connect(str(target), read_only=read_only)
    except duckdb.IOException as exc:
        detail = first_line(exc)
        if "lock" not in detail.lower():
            raise WarehouseError(f"cannot open {target}: {detail}. Point LFH_DB at a warehouse lfh made, or restore "
                                 "this one from a copy") from None
        raise WarehouseBusy(
            f"cannot open {target}: {detail}. Another process (a BI tool, a notebook) holds this file: close it, "
            "or point BI tools at the published copy (lfh publish)."
        ) from None


@contextmanager
def reading(path: Path, purpose: str, wait: float | None = None,
            quiet: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection to the warehouse at `path`, under the shared warehouse lock: waits up to `wait`
    seconds (None: LFH_LOCK_WAIT, default 600) for a running build or ingest, raising WarehouseBusy after. A
    published copy (its file read-only, lfh publish) is a consistent snapshot already: read without the lock.
    When the last `lfh build` did not complete, or the views name another file's catalog, the reader is told
    (announce) before it reads, unless quiet."""
    snapshot = path.is_file() and not path.stat().st_mode & 0o222  # a publication: never written, never built
    with contextlib.nullcontext() if snapshot else warehouse_lock(path, purpose, shared=True, wait=wait):
        connection = connect(path, read_only=True)
        try:
            if not quiet:  # quiet: a second read of one command, whose first read already warned
                note = unfinished_build_note(connection)
                if note:
                    announce(f"{note} ({path})")
                stale = stale_views_note(connection, path)
                if stale:
                    announce(stale)
            yield connection
        finally:
            connection.close()
