"""lfh.atomic: a file or folder appears complete or not at all, and what a killed writer left aside is cleaned."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from lfh.atomic import remove_stale_partials, write_text, written_aside


def test_a_write_that_fails_leaves_the_previous_file_and_nothing_beside_it(tmp_path: Path) -> None:
    target = tmp_path / "plan.csv"
    write_text(target, "complete\n")
    with pytest.raises(OSError, match="No space"), written_aside(target) as partial:
        partial.write_text("half", encoding="utf-8")
        raise OSError(errno.ENOSPC, "No space left on device")
    assert target.read_text(encoding="utf-8") == "complete\n"
    assert [path.name for path in tmp_path.iterdir()] == ["plan.csv"]


def test_a_folder_replaces_the_previous_one_whole(tmp_path: Path) -> None:
    folder = tmp_path / "figures"
    folder.mkdir()
    (folder / "old.png").write_bytes(b"old")
    with written_aside(folder) as partial:
        partial.mkdir()
        (partial / "new.png").write_bytes(b"new")
        assert (folder / "old.png").exists()  # readers see the old folder until the end
    assert [path.name for path in folder.iterdir()] == ["new.png"]
    assert [path.name for path in tmp_path.iterdir()] == ["figures"]


def test_partials_of_a_dead_process_are_removed_and_a_live_ones_kept(tmp_path: Path) -> None:
    dead = tmp_path / ".index.html.partial-999999999"
    dead.write_text("half", encoding="utf-8")
    retired = tmp_path / ".figures.old-999999999"
    retired.mkdir()
    alive = tmp_path / f".index.html.partial-{os.getpid()}"
    alive.write_text("being written", encoding="utf-8")
    remove_stale_partials(tmp_path)
    assert sorted(path.name for path in tmp_path.iterdir()) == [alive.name]
