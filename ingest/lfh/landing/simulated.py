"""Keeping simulated stories apart from real ones.

`lfh simulate` writes a marker file (SIMULATED.txt) at the top of its output folder. Every file under a folder
holding the marker is simulated, and so is a file named as the simulator names its files (simulated_stories.*,
simulated_labels.*, so a copied file keeps its nature). `lfh ingest` skips marked folders found inside the paths it
searches unless asked to land simulated data, flags each simulated story in raw.stories.is_simulated, and refuses
to put simulated and real stories into one warehouse unless asked to.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl

MARKER = "SIMULATED.txt"
SIMULATED_STEMS = ("simulated_stories", "simulated_labels")
MARKER_TEXT = (
    "Everything under this folder was made by `lfh simulate` with planted biases (configs/simulate.default.toml).\n"
    "It says nothing about any real language model. `lfh ingest` skips this folder unless given --simulated,\n"
    "and refuses to land simulated stories in a warehouse holding real ones (or the reverse) without --mix.\n"
)


class MixedDataError(Exception):
    """Simulated and real stories would end up in one warehouse."""


def write_marker(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / MARKER
    marker.write_text(MARKER_TEXT, encoding="utf-8")
    return marker


def marked_folder(path: Path) -> Path | None:
    """The folder whose marker makes this file simulated, if any."""
    for parent in path.parents:
        if (parent / MARKER).is_file():
            return parent
    return None


def is_simulated_file(path: Path) -> bool:
    return path.stem in SIMULATED_STEMS or marked_folder(path) is not None


def warehouse_kinds(connection: duckdb.DuckDBPyConnection) -> set[bool]:
    """Which kinds of stories raw.stories holds: True = simulated, False = real."""
    rows = connection.execute("select distinct coalesce(is_simulated, false) from raw.stories").fetchall()
    return {bool(row[0]) for row in rows}


def _new_stories(connection: duckdb.DuckDBPyConnection, story_ids: pl.Series) -> int:
    """How many of these stories the warehouse does not hold yet."""
    connection.register("incoming_story_ids", pl.DataFrame({"story_id": story_ids}).to_arrow())
    try:
        row = connection.execute("select count(*) from incoming_story_ids anti join raw.stories using (story_id)"
                                 ).fetchone()
    finally:
        connection.unregister("incoming_story_ids")
    return int(row[0]) if row else 0


def check_not_mixing(connection: duckdb.DuckDBPyConnection, path: Path, simulated: bool,
                     story_ids: pl.Series) -> None:
    """Raises MixedDataError when the file brings stories of one kind into a warehouse holding the other kind.
    A file whose stories are all in the warehouse already (e.g. a filled audit-sample workbook of its own
    stories, landing hand labels) mixes nothing."""
    other = not simulated
    if other not in warehouse_kinds(connection) or _new_stories(connection, story_ids) == 0:
        return
    if simulated:
        raise MixedDataError(
            f"{path} holds SIMULATED stories and the warehouse holds real ones: refused, so that no measure mixes "
            "the two. Use a warehouse of its own (LFH_DB=warehouse/demo.duckdb lfh ingest ...), or pass --mix "
            "if you really mean to mix them (dim_stories.is_simulated tells them apart).")
    raise MixedDataError(
        f"{path} holds real stories and the warehouse holds SIMULATED ones (lfh demo / lfh simulate): refused, "
        "so that no measure mixes the two. Use a warehouse of its own (LFH_DB=warehouse/study.duckdb lfh ingest "
        "...), or pass --mix if you really mean to mix them (dim_stories.is_simulated tells them apart).")
