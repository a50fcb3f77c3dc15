"""When the incremental layer must be rebuilt in full (ingest/lfh/build/fingerprint.py), on a copy of the project's
files: each var, seed, lexicon and SQL change is a reason, with a message naming it; a marts-only var, a
description or a unit test's change is not; the unit tests' own digest follows every file and var they read."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from lfh.build.fingerprint import current_fingerprint, differences, unit_tests_unchanged
from lfh.paths import project_root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The files the fingerprint reads, copied."""
    root = project_root()
    copy = tmp_path / "project"
    for folder in ("models", "macros", "seeds", "tests/dbt", "configs"):
        shutil.copytree(root / folder, copy / folder)
    shutil.copyfile(root / "dbt_project.yml", copy / "dbt_project.yml")
    return copy


@pytest.fixture
def connection() -> duckdb.DuckDBPyConnection:
    with duckdb.connect() as connection:
        connection.execute("create schema raw")
        connection.execute("create table raw.census_first_names (name varchar, pct_white double)")
        connection.execute("insert into raw.census_first_names values ('Maria', 0.1), ('John', 0.9)")
        yield connection


def append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def test_nothing_changed_is_no_reason(project: Path, connection: duckdb.DuckDBPyConnection) -> None:
    before = current_fingerprint(connection, {}, project)
    assert differences(before, current_fingerprint(connection, {}, project)) == []
    assert unit_tests_unchanged(before, current_fingerprint(connection, {}, project))
    assert differences(None, before) == ["no complete build recorded in this warehouse"]


def test_a_var_that_changes_story_rows_is_named(project: Path, connection: duckdb.DuckDBPyConnection) -> None:
    before = current_fingerprint(connection, {}, project)
    after = current_fingerprint(connection, {"vote_threshold": 0.6}, project)
    assert differences(before, after) == ["var vote_threshold: 0.5 -> 0.6"]
    assert not unit_tests_unchanged(before, after)


def test_a_marts_only_var_rebuilds_nothing_but_runs_the_unit_tests(project: Path,
                                                                   connection: duckdb.DuckDBPyConnection) -> None:
    before = current_fingerprint(connection, {}, project)
    after = current_fingerprint(connection, {"wilson_z": 2.58}, project)
    assert differences(before, after) == []
    assert not unit_tests_unchanged(before, after)


def test_a_changed_seed_is_a_reason(project: Path, connection: duckdb.DuckDBPyConnection) -> None:
    before = current_fingerprint(connection, {}, project)
    append(project / "seeds" / "known_non_names.csv", "maria,a test\n")
    after = current_fingerprint(connection, {}, project)
    assert differences(before, after) == ["the seeds (seeds/*.csv) changed"]
    assert not unit_tests_unchanged(before, after)


def test_changed_sql_and_lexicon_are_reasons(project: Path, connection: duckdb.DuckDBPyConnection) -> None:
    before = current_fingerprint(connection, {}, project)
    append(project / "macros" / "text" / "text_rules.sql", "\n{# an edit #}\n")
    connection.execute("insert into raw.census_first_names values ('Wei', 0.0)")
    after = current_fingerprint(connection, {}, project)
    assert differences(before, after) == ["the lexicon (lfh lexicon) changed", "the models' or macros' SQL changed"]


def test_a_yml_edit_reruns_the_unit_tests_only(project: Path, connection: duckdb.DuckDBPyConnection) -> None:
    """A unit test's fixture or a description lives in yml: no story row changes, but the unit tests run again."""
    before = current_fingerprint(connection, {}, project)
    append(project / "models" / "intermediate" / "cleaning" / "_int_cleaning__models.yml", "\n# an edit\n")
    after = current_fingerprint(connection, {}, project)
    assert differences(before, after) == []
    assert not unit_tests_unchanged(before, after)
