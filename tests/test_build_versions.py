"""`lfh build`'s lines about model and labeler versions (lfh.build.versions), on small hand-made tables."""

from __future__ import annotations

from pathlib import Path

import duckdb

from lfh.build.versions import version_notes


def _warehouse(path: Path, versions: list[tuple], labelers: list[str], checked: list[str]) -> Path:
    with duckdb.connect(str(path)) as connection:
        connection.execute("create schema intermediate")
        connection.execute("create schema marts")
        connection.execute("create table intermediate.int_model_versions_ranked (model varchar, model_version "
                           "varchar, version_number integer, versions_of_model integer, selection varchar)")
        for row in versions:
            connection.execute("insert into intermediate.int_model_versions_ranked values (?, ?, ?, ?, ?)", row)
        connection.execute("create table intermediate.int_story_labelers_assigned (story_id varchar, "
                           "labeler_version varchar)")
        for index, version in enumerate(labelers):
            connection.execute("insert into intermediate.int_story_labelers_assigned values (?, ?)",
                               [f"s{index}", version])
        connection.execute("create table marts.fct_labeler_agreement (labeler_version varchar, n bigint)")
        for version in checked:
            connection.execute("insert into marts.fct_labeler_agreement values (?, 3)", [version])
    return path


def test_one_version_per_model_and_a_checked_labeler_say_nothing(tmp_path: Path) -> None:
    db = _warehouse(tmp_path / "w.duckdb", [("M", "M", 1, 1, "latest"), ("N", "n-1", 1, 1, "latest")],
                    ["L"], ["L"])
    assert version_notes(db) == []


def test_a_model_with_two_versions_is_named_in_one_line(tmp_path: Path) -> None:
    db = _warehouse(tmp_path / "w.duckdb",
                    [("M", "m-2024-01", 1, 2, "not used"), ("M", "m-2024-06", 2, 2, "latest"),
                     ("N", "N", 1, 1, "latest")], ["L"], ["L"])
    notes = version_notes(db)
    assert len(notes) == 1
    assert "M answered as 2 versions (m-2024-01, m-2024-06; oldest first)" in notes[0]
    assert "the measures use m-2024-06 (its latest)" in notes[0]


def test_pooled_and_chosen_versions_are_said_so(tmp_path: Path) -> None:
    db = _warehouse(tmp_path / "w.duckdb",
                    [("M", "a", 1, 2, "pooled"), ("M", "b", 2, 2, "pooled"),
                     ("K", "k1", 1, 2, "chosen"), ("K", "k2", 2, 2, "not used")], ["L"], ["L"])
    notes = sorted(version_notes(db))
    assert "the measures use k1 (chosen by var model_version_selected)" in notes[0]
    assert "the measures use a, b (pooled by var model_version_selected)" in notes[1]


def test_an_unchecked_labeler_version_in_use_is_warned_of_once(tmp_path: Path) -> None:
    db = _warehouse(tmp_path / "w.duckdb", [("M", "M", 1, 1, "latest")],
                    ["labeler-2024-08", "labeler-2024-08", "labeler-2024-05"], ["labeler-2024-05"])
    notes = version_notes(db)
    assert len(notes) == 1
    assert notes[0].startswith("warning: the labeling in use comes from labeler version(s) labeler-2024-08 ")


def test_a_warehouse_not_built_yet_says_nothing(tmp_path: Path) -> None:
    path = tmp_path / "empty.duckdb"
    duckdb.connect(str(path)).close()
    assert version_notes(path) == []


def test_the_version_var_takes_a_mapping_of_model_to_version() -> None:
    import pytest

    from lfh.build.vars import BuildVarError, validate_vars

    assert validate_vars(["model_version_selected={gpt-4o: pooled, m: m-2024-01}"]) == {
        "model_version_selected": {"gpt-4o": "pooled", "m": "m-2024-01"}}
    with pytest.raises(BuildVarError, match="must be a mapping of text to text"):
        validate_vars(["model_version_selected=latest"])
