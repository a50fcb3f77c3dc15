"""Publishing the project's real marts: `lfh build` on the repo's small corpus (tests/fixtures/measures, the build
tests/test_measures_pipeline.py checks), then lfh publish, the Postgres load, and `dbt docs generate --static`,
all offline.

Checks that dbt's persist_docs descriptions reach the build warehouse, the published copy and Postgres, that
the manifest names the dbt invocation that built each mart, and that every mart reads the same through
DuckDB, Parquet and Postgres.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import psycopg
import pytest
from test_publish_helpers import comparable, free_port, private_base

from lfh.build.dbt import run_dbt
from lfh.serve.postgres_cluster import ensure_database, find_bin_dir, start, stop
from lfh.serve.postgres_load import load_marts
from lfh.serve.publish import Publication, publish_marts

pytestmark = pytest.mark.slow

CONTRACT_MARTS = [
    "dim_stories", "fct_characters", "fct_labeler_agreement", "fct_median_racialized_subordination",
    "fct_name_coverage", "fct_representation_ratios", "fct_sexual_orientation_ratios", "fct_subordination_ratios",
    "fct_top_names",
]
PASSWORD = "docs-test-pw"  # noqa: S105 (a throwaway cluster's password)


@pytest.fixture(scope="module")
def built(measures_build: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(warehouse, dbt target folder): a copy of the small corpus's `lfh build` (tests/conftest.py's measures_build,
    shared with tests/test_measures_pipeline.py), since publishing and `dbt docs generate` open it to write."""
    root = tmp_path_factory.mktemp("real_marts")
    shutil.copytree(measures_build / "target", root / "target")
    shutil.copyfile(measures_build / "lfh.duckdb", root / "lfh.duckdb")
    return root / "lfh.duckdb", root / "target"


@pytest.fixture(scope="module")
def publication(built: tuple[Path, Path]) -> Publication:
    warehouse, target = built
    return publish_marts(warehouse, warehouse.parent / "published", target)


def documented_columns(target: Path) -> dict[tuple[str, str], str]:
    """(mart, column) -> description, for every described column of every mart in dbt's manifest."""
    manifest = json.loads((target / "manifest.json").read_text(encoding="utf-8"))
    described = {}
    for node in manifest["nodes"].values():
        if node["resource_type"] == "model" and node["schema"] == "marts":
            for column in node["columns"].values():
                if column.get("description"):
                    described[(node["alias"], column["name"])] = column["description"]
    return described


def test_every_mart_is_published_with_the_run_that_built_it(built: tuple[Path, Path],
                                                            publication: Publication) -> None:
    _, target = built
    run_results = json.loads((target / "run_results.json").read_text(encoding="utf-8"))
    entries = {entry["mart"]: entry for entry in publication.manifest["marts"]}
    assert set(CONTRACT_MARTS) <= set(entries)
    for mart in CONTRACT_MARTS:
        assert entries[mart]["dbt"]["invocation_id"] == run_results["metadata"]["invocation_id"]
        assert entries[mart]["dbt"]["status"] == "success"
    assert publication.manifest["baseline_sets"][0]["name"] == "census_2022"
    assert {entry["table"] for entry in publication.manifest["lexicon"]} >= {"raw.custom_first_names"}


def test_column_descriptions_reach_the_warehouse_and_the_published_copy(built: tuple[Path, Path],
                                                                         publication: Publication) -> None:
    warehouse, target = built
    described = documented_columns(target)
    assert len(described) > 20, "the marts' YAML documents too few columns for this check to mean anything"
    query = (
        "select table_name, column_name, comment from duckdb_columns() "
        "where database_name = current_database() and schema_name = ?"
    )
    with duckdb.connect(str(warehouse), read_only=True) as build:
        in_build = {(table, column): comment for table, column, comment in build.execute(query, ["marts"]).fetchall()}
    with duckdb.connect(str(publication.serving_db), read_only=True) as copy:
        in_copy = {(table, column): comment for table, column, comment in copy.execute(query, ["main"]).fetchall()}
    missing_in_build = {key for key, text in described.items() if in_build.get(key) != text.strip()
                        and in_build.get(key) != text}
    assert not missing_in_build, f"persist_docs did not write these comments: {sorted(missing_in_build)}"
    assert in_copy == in_build


def test_every_real_mart_reads_the_same_in_parquet_and_postgres(built: tuple[Path, Path],
                                                                publication: Publication) -> None:
    if find_bin_dir() is None:
        pytest.skip("no PostgreSQL server binaries (apt-get install postgresql; make test installs them)")
    base = private_base()
    cluster = start(base / "data", "127.0.0.1", free_port())
    try:
        ensure_database(cluster, "lfh")
        load_marts(publication.serving_db, cluster.admin_conninfo("lfh"), "lfh_reader", PASSWORD,
                   lock_down_database=True)
        with duckdb.connect(str(publication.serving_db), read_only=True) as copy, \
                psycopg.connect(host="127.0.0.1", port=cluster.port, dbname="lfh", user="lfh_reader",
                                password=PASSWORD) as served:
            for entry in publication.manifest["marts"]:
                mart = entry["mart"]
                expected = comparable(copy.execute(f"select * from marts.{mart}").fetchall())
                parquet = publication.destination / entry["parquet"]
                assert comparable(copy.execute("select * from read_parquet(?)", [str(parquet)]).fetchall()) == expected
                assert comparable(served.execute(f"select * from marts.{mart}").fetchall()) == expected, mart
                comments = dict(served.execute(
                    "select attname, col_description(attrelid, attnum) from pg_attribute "
                    "where attrelid = %s::regclass and attnum > 0", [f"marts.{mart}"]).fetchall())
                for column in entry["columns"]:
                    assert comments[column["name"]] == column["description"], (mart, column["name"])
    finally:
        stop(cluster.data_dir)
        shutil.rmtree(base, ignore_errors=True)


def test_dbt_docs_generate_works_offline_and_shows_the_exposures(built: tuple[Path, Path]) -> None:
    warehouse, target = built
    docs_target = warehouse.parent / "docs_target"
    shutil.copytree(target, docs_target)  # reuse the parse of the build (partial parsing)
    run_dbt(["docs", "generate", "--static", "--target-path", str(docs_target),
             "--log-path", str(warehouse.parent / "logs")], db_path=warehouse, capture=True)
    page = (docs_target / "static_index.html").read_text(encoding="utf-8")
    assert "exposure.laissez_faire.published_marts" in page
    assert "exposure.laissez_faire.lfh_report" in page
    catalog = json.loads((docs_target / "catalog.json").read_text(encoding="utf-8"))
    characters = catalog["nodes"]["model.laissez_faire.fct_characters"]
    assert characters["metadata"]["comment"]  # the table description, read back from DuckDB


def _last_invocation(target: Path) -> str:
    return json.loads((target / "run_results.json").read_text(encoding="utf-8"))["metadata"]["invocation_id"]


def test_two_warehouses_built_from_one_checkout_each_publish_their_own_run(
        measures_build: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two warehouses built from this checkout with different vars: the measures build (vote_threshold 0.5, the
    default) and a copy rebuilt with vote_threshold 0.4 into the target folder both publications are then given.
    Each publication names its own warehouse's run and vars, though that folder holds the second build's run."""
    from click.testing import CliRunner

    from lfh.cli import main

    target = tmp_path / "target"
    monkeypatch.setenv("DBT_TARGET_PATH", str(target))
    study = tmp_path / "study" / "lfh.duckdb"
    refined = tmp_path / "refined" / "lfh.duckdb"
    for db in (study, refined):
        db.parent.mkdir()
        shutil.copyfile(measures_build / "lfh.duckdb", db)
    monkeypatch.setenv("LFH_DB", str(refined))
    result = CliRunner().invoke(main, ["build", "--select", "fct_name_coverage", "--skip-tests",
                                       "--var", "vote_threshold=0.4"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    original, rebuilt = _last_invocation(measures_build / "target"), _last_invocation(target)
    assert original != rebuilt
    for db, invocation, threshold, given in ((study, original, 0.5, {}),
                                             (refined, rebuilt, 0.4, {"vote_threshold": 0.4})):
        publish_marts(db, db.parent / "published", target)  # the checkout's target: the refined build's run
        manifest = json.loads((db.parent / "published" / "manifest.json").read_text(encoding="utf-8"))
        entries = {entry["mart"]: entry["dbt"] for entry in manifest["marts"]}
        assert entries["fct_name_coverage"]["invocation_id"] == invocation, db
        assert manifest["dbt"]["last_run"]["invocation_id"] == invocation, db
        assert manifest["dbt"]["vars"]["vote_threshold"] == threshold, db
        assert manifest["dbt"]["last_run"]["vars_given"] == given, db
        assert manifest["dbt"]["runs"][invocation]["vars"]["vote_threshold"] == threshold
        # a mart the refined selection did not build keeps the run that built it, with that run's vars
        assert entries["dim_stories"]["invocation_id"] == original, db
        assert manifest["dbt"]["runs"][original]["vars"]["vote_threshold"] == 0.5
