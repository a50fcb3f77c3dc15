"""A reader of a warehouse whose last `lfh build` did not complete is told so before it reads (lfh.db.reading,
lfh.build.fingerprint.unfinished_build_note): the marts may then mix rows of two builds. A completed build, a
warehouse no `lfh build` made, and one without marts read silently."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from lfh.build.fingerprint import clear_fingerprint, store_fingerprint
from lfh.db import reading
from lfh.lock import set_wait_announcer


@pytest.fixture
def said() -> Iterator[list[str]]:
    lines: list[str] = []
    set_wait_announcer(lines.append)
    yield lines
    set_wait_announcer(None)


def warehouse(tmp_path: Path, marts: bool, fingerprint: str | None) -> Path:
    """fingerprint: None (never built by lfh build), 'cleared' (a build started and did not finish), 'stored'."""
    path = tmp_path / "lfh.duckdb"
    with duckdb.connect(str(path)) as connection:
        if marts:
            connection.execute("create schema marts")
            connection.execute("create table marts.fct_characters (story_id varchar)")
        if fingerprint is not None:
            clear_fingerprint(connection)
        if fingerprint == "stored":
            store_fingerprint(connection, {"vars": "{}"})
    return path


def read_once(path: Path) -> None:
    with reading(path, "read the marts") as connection:
        connection.execute("select 1").fetchall()


def test_a_reader_of_an_unfinished_build_is_warned(tmp_path: Path, said: list[str]) -> None:
    path = warehouse(tmp_path, marts=True, fingerprint="cleared")
    read_once(path)
    assert len(said) == 1
    assert "last build of this warehouse did not finish" in said[0]
    assert "lfh build" in said[0] and str(path) in said[0]


@pytest.mark.parametrize(("marts", "fingerprint"), [(True, "stored"), (True, None), (False, "cleared")],
                         ids=["completed build", "never built by lfh build", "no marts yet"])
def test_other_warehouses_read_silently(tmp_path: Path, said: list[str], marts: bool, fingerprint: str | None) -> None:
    read_once(warehouse(tmp_path, marts, fingerprint))
    assert said == []
