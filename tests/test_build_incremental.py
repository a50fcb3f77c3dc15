"""Incremental builds give the same tables as a full rebuild (docs/INCREMENTAL.md): stories and label responses landed
in several steps and orders (responses before their stories, a story re-labeled by a later run, which then counts),
and a changed var and a changed seed, which must trigger the full rebuild they need rather than leave stale rows.

The builds run on a copy of the project's dbt files (so the test can edit a seed): monkeypatched project_root."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import duckdb
import pytest
from fixtures_simulate import write_test_lexicon
from tolerance import same_double

from lfh.build import fingerprint, runner
from lfh.build.dbt import build_warehouse
from lfh.landing.ingest import ingest_paths
from lfh.paths import project_root
from lfh.simulate.config import load_config
from lfh.simulate.run import run_simulation

pytestmark = pytest.mark.slow
INCREMENTAL_MODELS = ("int_stories_placed", "int_labeling_runs_selected", "int_label_responses_keyed",
                      "int_label_responses_parsed", "int_stories_labeled", "int_references_voted",
                      "int_characters_named", "int_characters_joined", "dim_stories", "fct_characters")


# when and in which load a row landed differs between two warehouses by construction, and so do the times derived
# from it: int_model_versions_ranked places a run without a manifest in time by when its rows were loaded
LOAD_COLUMNS = {"loaded_at", "load_id", "last_loaded_at", "first_run_at", "version_at"}


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The project's dbt files copied, and the build pointed at the copy (its own target/ and logs/)."""
    root, copy = project_root(), tmp_path_factory.mktemp("project")
    for folder in ("models", "macros", "seeds", "tests/dbt", "configs"):
        shutil.copytree(root / folder, copy / folder)
    for name in ("dbt_project.yml", "profiles.yml"):
        shutil.copyfile(root / name, copy / name)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runner, "project_root", lambda: copy)
        patch.setattr(fingerprint, "project_root", lambda: copy)
        yield copy


@pytest.fixture(scope="module")
def parts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A small simulated corpus cut into landing files: three story parts with their labels, and a re-labeling."""
    root = tmp_path_factory.mktemp("incremental")
    config = replace(load_config(), stories_per_prompt=1, samples_per_story=2, seed=11)
    lexicon_db = root / "lexicon.duckdb"
    write_test_lexicon(lexicon_db)
    result = run_simulation(config, root / "landing", lexicon_db)
    stories = [json.loads(line) for line in result.stories_path.read_text().splitlines()]
    labels = [json.loads(line) for line in result.labels_path.read_text().splitlines()]
    thirds = [stories[index::3] for index in range(3)]
    files = {}
    for name, part in zip("abc", thirds, strict=True):
        ids = {story["story_id"] for story in part}
        files[f"stories_{name}"] = write_jsonl(root / "parts" / f"stories_{name}.jsonl", part)
        files[f"labels_{name}"] = write_jsonl(root / "parts" / f"labels_{name}.jsonl",
                                              [label for label in labels if label["story_id"] in ids])
    # a later labeling run for 20 stories of part a: gender words swapped, so their characters change
    relabeled_ids = {story["story_id"] for story in thirds[0][:20]}
    relabel = []
    for label in labels:
        if label["story_id"] in relabeled_ids:
            text = label["response_text"]
            swapped = text.replace(" he", " \0").replace(" she", " he").replace(" \0", " she")
            relabel.append({**label, "labeler_model": "relabeler-2", "response_text": swapped})
    files["relabel"] = write_jsonl(root / "parts" / "labels_relabel.jsonl", relabel)
    files["lexicon"] = lexicon_db
    return files


def new_warehouse(folder: Path, lexicon: Path) -> Path:
    db_path = folder / "warehouse" / "lfh.duckdb"
    db_path.parent.mkdir(parents=True)
    db_path.write_bytes(lexicon.read_bytes())
    return db_path


def land(db_path: Path, *paths: Path) -> None:
    results, _skipped = ingest_paths(list(paths), db_path)
    assert all(result.error is None for result in results), [result.summary() for result in results]


def changed_stories(db_path: Path) -> int:  # the stories the last build processed
    with duckdb.connect(str(db_path), read_only=True) as connection:
        return connection.execute("select count(*) from intermediate.int_stories_changed").fetchone()[0]


# DuckDB sums in parallel, so a double can differ in its last bits between two builds of the same rows (a Katz
# bound of 559801279.2998548 against ...567 in one CI run): doubles are compared with a relative tolerance, which
# neither an absolute round(x, 9) (wrong scale for 5e8) nor rounding to fixed digits (9.350770858015 falls on either
# side of a rounding boundary) is. Rows are put in the same order by their other columns first, then the doubles.
ABSOLUTE_TOLERANCE = 1e-9  # a variance that sums to 1e-17 in one build and to 0 in the other


def table_rows(connection: duckdb.DuckDBPyConnection, catalog: str, schema: str,
               table: str) -> list[tuple[tuple, tuple]]:  # (the other columns, the doubles) of each row
    columns = [(name, kind) for name, kind in connection.execute(
        "select column_name, data_type from information_schema.columns where table_catalog = ? and "
        "table_schema = ? and table_name = ? order by column_name", [catalog, schema, table]).fetchall()
        if name not in LOAD_COLUMNS]
    is_double = [kind in ("DOUBLE", "FLOAT") for _name, kind in columns]
    selected = ", ".join(f'"{name}"' for name, _kind in columns)
    rows = [(tuple(value for value, double in zip(row, is_double, strict=True) if not double),
             tuple(value for value, double in zip(row, is_double, strict=True) if double))
            for row in connection.execute(f"select {selected} from {catalog}.{schema}.{table}").fetchall()]
    return sorted(rows, key=repr)


def same_doubles(left: tuple, right: tuple) -> bool:
    return len(left) == len(right) and all(
        a == b or (isinstance(a, float) and isinstance(b, float) and same_double(a, b, ABSOLUTE_TOLERANCE))
        for a, b in zip(left, right, strict=True))


def assert_same_tables(incremental: Path, full: Path) -> None:
    with duckdb.connect() as connection:
        connection.execute(f"attach '{incremental}' as inc (read_only)")
        connection.execute(f"attach '{full}' as ful (read_only)")
        tables = connection.execute(
            "select table_schema, table_name from information_schema.tables where table_catalog = 'ful' and "
            "table_schema in ('marts', 'intermediate', 'staging') and table_type = 'BASE TABLE' "
            "and table_name <> 'int_stories_changed' order by 1, 2").fetchall()
        assert {name for _schema, name in tables} >= {*INCREMENTAL_MODELS, "fct_representation_ratios"}
        for schema, table in tables:
            built, rebuilt = (table_rows(connection, catalog, schema, table) for catalog in ("inc", "ful"))
            assert [exact for exact, _doubles in built] == [exact for exact, _doubles in rebuilt], \
                f"{schema}.{table} differs between the incremental and the full build"
            for (exact, left), (_exact, right) in zip(built, rebuilt, strict=True):
                assert same_doubles(left, right), \
                    f"{schema}.{table} differs between the incremental and the full build: {exact} {left} != {right}"


def most_kept_name(db_path: Path) -> str:
    with duckdb.connect(str(db_path), read_only=True) as connection:
        return connection.execute("select lower(name) from intermediate.int_name_candidates_filtered "
                                  "where is_kept and not is_unspecified "
                                  "group by 1 order by count(*) desc, 1 limit 1").fetchone()[0]


def kept_count(db_path: Path, name: str) -> int:
    with duckdb.connect(str(db_path), read_only=True) as connection:
        return connection.execute("select count(*) from intermediate.int_name_candidates_filtered "
                                  "where is_kept and lower(name) = ?", [name]).fetchone()[0]


def test_incremental_builds_equal_a_full_rebuild(project: Path, parts: dict[str, Path], tmp_path: Path) -> None:
    messages: list[str] = []
    incremental = new_warehouse(tmp_path / "incremental", parts["lexicon"])
    land(incremental, parts["stories_a"], parts["labels_a"])
    # the first build is a full one: its data tests are every full build's (tests/conftest.py's shared builds run
    # them). The next two incremental builds run theirs on the changed rows (macros/incremental/changed_tests.sql);
    # the last one builds the tables only, which is what is compared.
    build_warehouse(db_path=incremental, skip_tests=True, echo=messages.append)
    # responses that arrive before their stories, then the stories, with a third part
    land(incremental, parts["labels_b"])
    messages.clear()
    build_warehouse(db_path=incremental, echo=messages.append)
    assert any(message.startswith("incremental build") for message in messages), messages
    land(incremental, parts["stories_b"], parts["stories_c"], parts["labels_c"])
    messages.clear()
    build_warehouse(db_path=incremental, echo=messages.append)
    # the unit tests passed on this very project at the last build: not run again (the data tests are)
    assert any(message.startswith("unit tests and seeds: unchanged") for message in messages), messages
    stories_per_part = len(parts["stories_b"].read_text().splitlines())
    assert changed_stories(incremental) <= 2 * stories_per_part + 1  # only what was landed since the last build
    # a later labeling run for some stories of part a: it now counts for them
    land(incremental, parts["relabel"])
    build_warehouse(db_path=incremental, skip_tests=True, echo=messages.append)
    assert changed_stories(incremental) == 20

    full = new_warehouse(tmp_path / "full", parts["lexicon"])
    # another order, in one step (the re-labeling still lands after the run it replaces: the run loaded last counts)
    land(full, parts["stories_c"], parts["labels_c"], parts["labels_a"], parts["stories_b"], parts["labels_b"],
         parts["stories_a"], parts["relabel"])
    build_warehouse(db_path=full, full_refresh=True, skip_tests=True)  # the reference: its tables, not its tests
    assert_same_tables(incremental, full)

    # a var and a seed that change old rows: the incremental warehouse rebuilds in full by itself, saying why
    # (each change alone is a reason: tests/test_build_fingerprint.py); the most common name becomes a non-name
    name = most_kept_name(incremental)
    assert kept_count(incremental, name) > 0
    seed = project / "seeds" / "known_non_names.csv"
    newline = "\r\n" if seed.read_bytes().endswith(b"\r\n") else "\n"  # the seed's own line ends
    with seed.open("a", encoding="utf-8", newline="") as handle:
        handle.write(f"{name},a test: the most common name made a non-name{newline}")
    messages.clear()
    # (dbt run, not build: the project's unit tests fix their expected rows at the default threshold)
    build_warehouse(dbt_vars={"vote_threshold": 0.9}, skip_tests=True, db_path=incremental, echo=messages.append)
    assert any("full rebuild: var vote_threshold: 0.5 -> 0.9; the seeds (seeds/*.csv) changed" in message
               for message in messages), messages
    assert kept_count(incremental, name) == 0
    build_warehouse(dbt_vars={"vote_threshold": 0.9}, skip_tests=True, db_path=full, full_refresh=True)
    assert_same_tables(incremental, full)
