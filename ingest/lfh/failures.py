"""What a user is told when a command meets a problem no step foresaw: a warehouse file that is not one, a
relation or column the warehouse lacks (built by an older version of the project), a full disk. One line naming the
file, what is wrong and what to do next, never a traceback (lfh.cli.command turns these into messages)."""

from __future__ import annotations

import errno
import re
from pathlib import Path

import duckdb

from lfh.errors import WarehouseError

DUCKDB_MAGIC = b"DUCK"  # bytes 8-11 of every DuckDB database file (its header follows an 8-byte checksum)
UPDATE_COMMAND = "`lfh build`"
_MISSING = re.compile(r"(Table|View|Schema|Catalog) with name (\S+) does not exist|Catalog \"([^\"]+)\" does not exist"
                      r"|Referenced column \"?([^\"\s]+)\"? not found|Table \"?([^\"\s]+)\"? does not have a column")
_FULL_DISK = ("no space left on device", "disk is full", "could not write all bytes", "not enough space")


def check_warehouse_file(path: Path) -> None:
    """Raise WarehouseError when `path` exists but cannot be a DuckDB warehouse (a folder, an empty file, another
    kind of file). A missing path is fine: the commands that create a warehouse create it there."""
    if not path.exists():
        return
    if path.is_dir():
        raise WarehouseError(f"{path} is a folder, not a DuckDB warehouse file: point LFH_DB at the warehouse file "
                             "(e.g. warehouse/lfh.duckdb)")
    size = path.stat().st_size
    if size == 0:
        raise WarehouseError(f"{path} is empty (0 bytes), not a DuckDB warehouse: point LFH_DB at your warehouse, "
                             "or delete the empty file and run `lfh ingest` to start a new warehouse there")
    with path.open("rb") as handle:
        head = handle.read(12)
    if head[8:12] != DUCKDB_MAGIC:
        raise WarehouseError(f"{path} is not a DuckDB database (its first bytes are not DuckDB's): point LFH_DB at "
                             "your warehouse file, or move this file aside and run `lfh ingest` to start a new one")


def is_full_disk(error: BaseException) -> bool:
    if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    return isinstance(error, duckdb.Error) and any(text in str(error).lower() for text in _FULL_DISK)


def first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def explain(error: BaseException, warehouse: Path) -> str | None:
    """The one-line message for an error of DuckDB or of the file system met while a command ran on `warehouse`;
    None for any other error (a bug: its traceback is worth a report)."""
    if is_full_disk(error):
        where = getattr(error, "filename", None) or warehouse
        return (f"no space left on the device holding {where}: free some space and run the command again. "
                "Nothing already written is lost: the unfinished write was rolled back or left aside")
    if isinstance(error, duckdb.Error):
        detail = first_line(error)
        missing = _MISSING.search(detail)
        if missing and missing.group(3):
            return (f"{warehouse}: its views name the catalog \"{missing.group(3)}\", the file it was first built as "
                    f"(a warehouse built by an older version of lfh, then copied or renamed). Run {UPDATE_COMMAND} "
                    "on it once; from then on it works under any name")
        if missing:
            return (f"{warehouse} lacks what this version of lfh reads ({detail}): it was built by an older version "
                    f"of the project or never fully built. Run {UPDATE_COMMAND} to bring it up to date")
        return (f"{warehouse}: DuckDB could not complete the command ({detail}). If the file is damaged, restore "
                f"it from a copy, or rebuild it with `lfh ingest` and {UPDATE_COMMAND}")
    if isinstance(error, OSError):
        where = error.filename or warehouse
        return (f"{where}: {error.strerror or first_line(error)}. Check the path and its permissions, then run the "
                "command again")
    return None


# the project's schemas as the views name them after a catalog: `lfh.staging.`, `"lfh"."raw".`
_CATALOG_IN_VIEW = (r'(?i)(?:from|join)\s+"?([A-Za-z_][A-Za-z0-9_$-]*)"?\s*\.\s*'
                    r'"?(?:raw|staging|intermediate|reference|marts|meta)"?\s*\.')


def stale_views_note(connection: duckdb.DuckDBPyConnection, path: Path) -> str | None:
    """A warning when the warehouse's views name another catalog than the file's own (a warehouse built by an
    older version of the project, then copied or renamed): those views, and the SQL of anyone reading them, fail
    until `lfh build` writes them again. None when every view reads (and for a file without views)."""
    try:
        rows = connection.execute(
            "select distinct unnest(regexp_extract_all(sql, ?, 1)) from duckdb_views() "
            "where not internal and database_name = current_database()", [_CATALOG_IN_VIEW]).fetchall()
        own = connection.execute("select current_database()").fetchone()[0]
    except duckdb.Error:
        return None
    foreign = sorted({name for (name,) in rows if name and name.casefold() != str(own).casefold()})
    if not foreign:
        return None
    return (f"warning: {path}: its views name the catalog {', '.join(foreign)}, the file it was first built as (a "
            f"warehouse of an older version, copied or renamed): they fail to read until {UPDATE_COMMAND} "
            "writes them again")
