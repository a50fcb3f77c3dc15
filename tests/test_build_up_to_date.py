"""`lfh build` with nothing to do says so in one line and exits 0 without starting dbt: the same fingerprint, nothing
landed in the raw layer since the last complete build, and that build ran its data tests (lfh.build.up_to_date).
Anything landed or changed, a selection, a full refresh or --force runs dbt as before; an incremental build runs
only what descends from the landed rows. dbt is tests/fake_dbt.py; the
warehouse holds an int_stories_changed table so the build records its bookkeeping as a real one does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from test_build_cli import calls, install_fake_dbt, run_lfh

from lfh.build.fingerprint import LEXICON_TABLES, story_sources
from lfh.build.state import landed_signature
from lfh.build.up_to_date import build_record, nothing_to_do

NOTHING = "nothing to build:"


@pytest.fixture
def fake_dbt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_DBT_NODES", "3")
    return install_fake_dbt(tmp_path, monkeypatch)


@pytest.fixture
def built(warehouse: Path, fake_dbt: Path) -> Path:
    """A warehouse with one story and its changed-stories table, after one complete `lfh build`."""
    warehouse.parent.mkdir(parents=True)
    with duckdb.connect(str(warehouse)) as connection:
        connection.execute("create schema raw; create table raw.stories (story_id varchar, load_id varchar, "
                           "loaded_at timestamp); insert into raw.stories values ('s1', 'L1', '2026-01-01')")
        connection.execute("create schema intermediate; create table intermediate.int_stories_changed as "
                           "select story_id, loaded_at as last_loaded_at from raw.stories")
    result = run_lfh("build")
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(calls(fake_dbt)) == 1
    return warehouse


def test_a_build_with_nothing_to_do_says_so_in_one_line_without_dbt(built: Path, fake_dbt: Path) -> None:
    result = run_lfh("build")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(NOTHING) and "--force" in lines[0], result.stdout
    assert len(calls(fake_dbt)) == 1  # dbt did not start
    with duckdb.connect(str(built), read_only=True) as connection:  # the record stays: the next check agrees
        assert connection.execute("select count(*) from meta.build_fingerprint").fetchone()[0] == 1


def test_force_runs_dbt_anyway(built: Path, fake_dbt: Path) -> None:
    result = run_lfh("build", "--force")
    assert result.returncode == 0 and NOTHING not in result.stdout
    assert len(calls(fake_dbt)) == 2


@pytest.mark.parametrize("landing", [
    "insert into raw.stories values ('s2', 'L2', '2026-01-02')",
    "create table raw.hand_labels (story_id varchar, role varchar, gender varchar); "
    "insert into raw.hand_labels values ('s1', 'subject', 'Female')",
    "create table raw.label_responses (response_id varchar, story_id varchar, load_id varchar); "
    "insert into raw.label_responses values ('r1', 's1', 'L3')",
])
def test_anything_landed_builds(built: Path, fake_dbt: Path, landing: str) -> None:
    with duckdb.connect(str(built)) as connection:
        connection.execute(landing)
    result = run_lfh("build")
    assert result.returncode == 0 and NOTHING not in result.stdout, result.stdout
    assert len(calls(fake_dbt)) == 2
    assert run_lfh("build").stdout.startswith(NOTHING)  # and once built, nothing is left to do


@pytest.mark.parametrize("arguments", [("--var", "vote_threshold=0.6"), ("--select", "marts"), ("--full-refresh",)])
def test_a_changed_var_a_selection_or_a_full_refresh_builds(built: Path, fake_dbt: Path,
                                                             arguments: tuple[str, ...]) -> None:
    result = run_lfh("build", *arguments)
    assert result.returncode == 0 and NOTHING not in result.stdout, result.stdout
    assert len(calls(fake_dbt)) == 2


def test_after_a_build_without_data_tests_the_tests_still_run(built: Path, fake_dbt: Path) -> None:
    with duckdb.connect(str(built)) as connection:
        connection.execute("insert into raw.stories values ('s2', 'L2', '2026-01-02')")
    assert run_lfh("build", "--skip-tests").returncode == 0
    assert run_lfh("build", "--skip-tests").stdout.startswith(NOTHING)  # skipping tests again: nothing to do
    result = run_lfh("build")  # the new story's rows were never tested
    assert result.returncode == 0 and NOTHING not in result.stdout
    assert len(calls(fake_dbt)) == 3
    assert run_lfh("build").stdout.startswith(NOTHING)


def test_a_failed_build_leaves_the_next_one_to_build(built: Path, fake_dbt: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_DBT_ERROR", "boom")
    assert run_lfh("build", "--force").returncode != 0
    monkeypatch.delenv("FAKE_DBT_ERROR")
    result = run_lfh("build")
    assert result.returncode == 0 and NOTHING not in result.stdout
    assert len(calls(fake_dbt)) == 3


def test_the_check_imports_neither_dbt_nor_pandas(built: Path) -> None:
    """Cheap by construction: row counts, file listings and the project's files; no dbt, no dataframe library."""
    script = ("import sys; from lfh.build.dbt import nothing_to_build; print(nothing_to_build()); "
              "print(sorted(m for m in sys.modules if m.split('.')[0] in {'dbt', 'pandas', 'polars', 'pyarrow'}))")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    first, imported = result.stdout.strip().splitlines()
    assert first.startswith(NOTHING) and imported == "[]", result.stdout


def test_the_record_compares_through_json() -> None:
    current = {"vars": {"ratio": 0.5, "list": ("a", "b")}, "code": "x"}
    landed = {"stories": "3"}
    stored = json.loads(json.dumps(build_record(current, landed, data_tests=True)))
    assert nothing_to_do(stored, current, landed, skip_tests=False, state_recorded=True)
    assert not nothing_to_do(stored, current, landed, skip_tests=False, state_recorded=False)
    assert not nothing_to_do(stored, {**current, "code": "y"}, landed, skip_tests=False, state_recorded=True)
    assert not nothing_to_do(stored, current, {"stories": "4"}, skip_tests=False, state_recorded=True)
    untested = json.loads(json.dumps(build_record(current, landed, data_tests=False)))
    assert not nothing_to_do(untested, current, landed, skip_tests=False, state_recorded=True)
    assert nothing_to_do(untested, current, landed, skip_tests=True, state_recorded=True)
    assert not nothing_to_do(None, current, landed, skip_tests=True, state_recorded=True)


def test_landed_parquet_files_are_listed_not_read(tmp_path: Path) -> None:
    landing = tmp_path / "landing"
    (landing / "stories").mkdir(parents=True)
    with duckdb.connect() as connection:
        connection.execute(f"copy (select 's1' as story_id) to '{landing / 'stories' / 'a.parquet'}'")
        before = landed_signature(connection, landing)
        assert list(before) == ["stories/a.parquet"]
        assert landed_signature(connection, landing) == before
        connection.execute(f"copy (select 's2' as story_id) to '{landing / 'stories' / 'b.parquet'}'")
        assert len(landed_signature(connection, landing)) == 2


def test_an_incremental_build_runs_only_what_descends_from_the_landed_rows(built: Path, fake_dbt: Path) -> None:
    """The nodes that read only the lexicon and the seeds (both in the fingerprint) keep the last build's rows:
    an incremental build selects the descendants of every other source, and a full build everything."""
    sources = story_sources()
    assert {"source:raw.stories", "source:raw.label_responses", "source:raw.hand_labels",
            "source:build_state.stories_built"} <= set(sources)
    assert not [source for source in sources if source.split(".")[-1] in LEXICON_TABLES]
    with duckdb.connect(str(built)) as connection:
        connection.execute("insert into raw.stories values ('s2', 'L2', '2026-01-02')")
    assert run_lfh("build").returncode == 0
    first, incremental = calls(fake_dbt)
    assert "--select" not in first and "--full-refresh" in first
    chosen = incremental[incremental.index("--select") + 1:incremental.index("--exclude-resource-type")]
    assert chosen == [f"{source}+" for source in sources]
