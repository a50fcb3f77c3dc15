"""When the incremental layer must be rebuilt in full (ingest/lfh/build/fingerprint.py), on a copy of the project's
files: each var, seed, lexicon, SQL, dbt_project.yml, YAML config and engine version change is a reason, with a
message naming it, and lfh build's plan turns it into a full rebuild; a marts-only var, a description, a comment or a
unit test's change is not; the unit tests' own digest follows every file and var they read."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from lfh.build import fingerprint
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


def edit(path: Path, old: str, new: str) -> None:
    """Replace old by new in the file; old must be there (else the test would check an unchanged file)."""
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new), encoding="utf-8")


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


def test_a_seed_column_type_in_yaml_is_a_reason(project: Path, connection: duckdb.DuckDBPyConnection) -> None:
    """A seed's column_types decide its values (e.g. a code read as a number loses its leading zeros)."""
    before = current_fingerprint(connection, {}, project)
    edit(project / "seeds" / "_seeds.yml", "        total_employed_thousands: bigint\n",
         "        total_employed_thousands: double\n")
    after = current_fingerprint(connection, {}, project)
    assert differences(before, after) == ["a model, seed or source config in the YAML files changed"]


def test_a_model_config_in_yaml_is_a_reason_a_description_is_not(project: Path,
                                                                 connection: duckdb.DuckDBPyConnection) -> None:
    before = current_fingerprint(connection, {}, project)
    properties = project / "models" / "intermediate" / "cleaning" / "_int_cleaning__models.yml"
    edit(properties, 'description: "A story to rebuild."', 'description: "A story to rebuild (edited)."')
    assert differences(before, current_fingerprint(connection, {}, project)) == []
    edit(properties, "  - name: int_stories_changed\n",
         "  - name: int_stories_changed\n    config:\n      materialized: view\n")
    assert differences(before, current_fingerprint(connection, {}, project)) == [
        "a model, seed or source config in the YAML files changed"]


def test_dbt_project_config_is_a_reason_its_comments_are_not(project: Path,
                                                             connection: duckdb.DuckDBPyConnection) -> None:
    before = current_fingerprint(connection, {}, project)
    append(project / "dbt_project.yml", "\n# a comment\n")
    assert differences(before, current_fingerprint(connection, {}, project)) == []
    edit(project / "dbt_project.yml", "      +schema: intermediate\n      +materialized: table\n",
         "      +schema: intermediate\n      +materialized: view\n")
    assert differences(before, current_fingerprint(connection, {}, project)) == [
        "dbt_project.yml (besides its vars) changed"]


@pytest.mark.parametrize("package", ["duckdb", "dbt-core", "dbt-duckdb"])
def test_an_engine_upgrade_is_a_reason(project: Path, connection: duckdb.DuckDBPyConnection,
                                       monkeypatch: pytest.MonkeyPatch, package: str) -> None:
    """A new DuckDB, dbt-core or adapter may compute a function differently: stories built before are rebuilt."""
    before = current_fingerprint(connection, {}, project)
    installed = fingerprint.engine_versions()
    assert set(installed) == {"duckdb", "dbt-core", "dbt-duckdb"} and "absent" not in installed.values()
    monkeypatch.setattr(fingerprint, "engine_versions", lambda: {**installed, package: "99.0.0"})
    after = current_fingerprint(connection, {}, project)
    assert differences(before, after) == [f"{package} {installed[package]} -> 99.0.0"]


def test_each_reason_is_printed_and_forces_the_full_rebuild(project: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """lfh build's plan: a changed part passes --full-refresh and says why (the dbt run itself is not needed)."""
    from lfh.build import dbt as build_dbt

    db_path = tmp_path / "lfh.duckdb"
    monkeypatch.setattr(build_dbt, "check_ready", lambda *_args, **_kwargs: None)
    monkeypatch.setattr(fingerprint, "project_root", lambda: project)
    with duckdb.connect(str(db_path)) as connection:
        fingerprint.store_fingerprint(connection, current_fingerprint(connection, {}, project))
    messages: list[str] = []
    _current, _stored, full_refresh, _loads = build_dbt._plan_duckdb_build(db_path, {}, False, None, messages.append)
    assert not full_refresh and messages == [
        "incremental build: only stories loaded since the last build are processed"]
    with duckdb.connect(str(db_path)) as connection:
        fingerprint.store_fingerprint(connection, current_fingerprint(connection, {}, project))
    installed = fingerprint.engine_versions()
    monkeypatch.setattr(fingerprint, "engine_versions", lambda: {**installed, "duckdb": "0.0.1"})
    messages.clear()
    _current, _stored, full_refresh, _loads = build_dbt._plan_duckdb_build(db_path, {}, False, None, messages.append)
    assert full_refresh and messages == [f"full rebuild: duckdb {installed['duckdb']} -> 0.0.1"]


def test_the_fast_yaml_parser_reads_the_project_as_the_pure_python_one() -> None:
    """The fingerprint parses YAML with libyaml where PyYAML has it (fingerprint.YAML_LOADER): a warehouse built on
    a machine without it must get the same fingerprint, so every properties file parses to the same document."""
    import yaml

    root = project_root()
    paths = [root / "dbt_project.yml", *sorted(path for folder in ("models", "seeds")
                                             for path in (root / folder).rglob("*.yml"))]
    assert len(paths) > 10
    for path in paths:
        text = path.read_text(encoding="utf-8")
        assert fingerprint._load_yaml(text) == yaml.load(text, Loader=yaml.SafeLoader), path  # noqa: S506
