"""lfh publish: the serving copy, its Parquet files and manifest, atomic replacement, read-only access."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import duckdb
import pytest
import sqlalchemy
from click.testing import CliRunner
from test_publish_helpers import AWKWARD_TEXT, comparable, make_build_warehouse, write_dbt_target

from lfh.cli import main
from lfh.serve.copy import PublishError, present_marts
from lfh.serve.publish import publish_marts

MARTS = ["dim_stories", "fct_name_coverage", "fct_representation_ratios"]


def build_rows(build_db: Path, mart: str) -> list[tuple]:
    with duckdb.connect(str(build_db), read_only=True) as connection:
        return comparable(connection.execute(f"select * from marts.{mart}").fetchall())


@pytest.fixture
def published(warehouse: Path, tmp_path: Path) -> tuple[Path, Path, Path]:
    """(build warehouse, publish folder, dbt target folder) after one publication."""
    make_build_warehouse(warehouse, generation=1)
    target = tmp_path / "target"
    write_dbt_target(target, "invocation-1", MARTS, warehouse=warehouse)
    destination = tmp_path / "published"
    publish_marts(warehouse, destination, target)
    return warehouse, destination, target


def test_copy_and_parquet_hold_every_mart_with_the_build_rows(published: tuple[Path, Path, Path]) -> None:
    warehouse, destination, _ = published
    with duckdb.connect(str(destination / "marts.duckdb"), read_only=True) as copy:
        names = [name for (name,) in copy.execute("select table_name from duckdb_tables() order by 1").fetchall()]
        assert names == MARTS
        for mart in MARTS:
            # `marts.<mart>` is the same name as in the build warehouse and in Postgres
            assert comparable(copy.execute(f"select * from marts.{mart}").fetchall()) == build_rows(warehouse, mart)
            parquet = destination / "parquet" / f"{mart}.parquet"
            parquet_rows = copy.execute("select * from read_parquet(?)", [str(parquet)]).fetchall()
            assert comparable(parquet_rows) == build_rows(warehouse, mart)
        text = copy.execute("select story_text from marts.dim_stories where story_id = 's1'").fetchone()[0]
        assert text == AWKWARD_TEXT
        types = dict(copy.execute("select column_name, data_type from duckdb_columns() "
                                  "where table_name = 'fct_representation_ratios'").fetchall())
        assert types["q_value"] == "DECIMAL(18,6)"
        assert types["labels"] == "VARCHAR[]"


def test_the_same_marts_are_found_in_the_build_warehouse_and_the_copy(published: tuple[Path, Path, Path]) -> None:
    warehouse, destination, _ = published
    with duckdb.connect(str(warehouse), read_only=True) as build:
        assert present_marts(build) == MARTS
    with duckdb.connect(str(destination / "marts.duckdb"), read_only=True) as copy:
        assert present_marts(copy) == MARTS


def test_comments_and_not_null_reach_the_copy(published: tuple[Path, Path, Path]) -> None:
    _, destination, _ = published
    with duckdb.connect(str(destination / "marts.duckdb"), read_only=True) as copy:
        comments = dict(copy.execute(
            "select table_name || '.' || column_name, comment from duckdb_columns() where comment is not null"
        ).fetchall())
        table_comment = copy.execute(
            "select comment from duckdb_tables() where table_name = 'fct_name_coverage'").fetchone()[0]
        nullable = dict(copy.execute("select column_name, is_nullable from duckdb_columns() "
                                     "where table_name = 'dim_stories'").fetchall())
    assert comments == {
        "fct_name_coverage.model": "Canonical model; 'All' aggregates.",
        "dim_stories.story_text": "The answer, exactly as given.",
    }
    assert table_comment == "Share of characters with a matched name."
    assert nullable["story_id"] is False
    assert nullable["story_text"] is True


def test_manifest_describes_marts_and_their_provenance(published: tuple[Path, Path, Path]) -> None:
    warehouse, destination, target = published
    manifest = json.loads((destination / "manifest.json").read_text())
    by_name = {entry["mart"]: entry for entry in manifest["marts"]}
    assert sorted(by_name) == MARTS
    assert by_name["fct_representation_ratios"]["rows"] == 50
    assert by_name["fct_name_coverage"]["rows"] == 3
    assert by_name["dim_stories"]["parquet"] == "parquet/dim_stories.parquet"
    columns = by_name["fct_name_coverage"]["columns"]
    assert [column["name"] for column in columns][:3] == ["model", "domain", "condition"]
    assert columns[0] == {"name": "model", "data_type": "VARCHAR", "nullable": False,
                          "description": "Canonical model; 'All' aggregates."}
    assert by_name["fct_name_coverage"]["description"] == "Share of characters with a matched name."
    assert by_name["fct_name_coverage"]["dbt"]["invocation_id"] == "invocation-1"
    assert by_name["fct_name_coverage"]["dbt"]["status"] == "success"
    assert by_name["fct_name_coverage"]["dbt"]["checksum"] == "sum-fct_name_coverage"
    assert manifest["dbt"]["last_run"]["invocation_id"] == "invocation-1"
    assert manifest["dbt"]["last_run"]["command"] == "build"
    assert manifest["dbt"]["unrecorded_marts"] == [] and manifest["dbt"]["note"] is None
    assert manifest["dbt"]["target_dir"] == str(target)
    assert manifest["dbt"]["vars"]["vote_threshold"] == 0.5  # from dbt_project.yml
    assert manifest["source_database"] == str(warehouse.resolve())
    assert manifest["simulated"] is False and manifest["simulated_stories"] == 0
    # the baseline set is read from the data; its sources from the seed, other sets left out
    assert manifest["baseline_sets"] == [{"name": "census_2022", "sources": [
        {"source": "US Census QuickFacts", "vintage": "2022-07-01", "rows": 2}]}]
    lexicon = {entry["table"]: entry for entry in manifest["lexicon"]}
    assert lexicon["raw.census_first_names"] == {"table": "raw.census_first_names", "rows": 2, "versions": [
        {"source": "census", "vintage": "2010", "rows": 2}]}
    assert lexicon["raw.custom_first_names"]["versions"] == [{"source": "team list", "mode": "add", "rows": 1}]
    assert lexicon["raw.census_surnames"]["versions"] == [{"source": "census surnames", "vintage": "2010", "rows": 1}]
    assert datetime.fromisoformat(manifest["published_at"]) >= datetime.fromisoformat(manifest["source_modified_at"])


def test_a_mart_not_built_by_a_recorded_run_has_no_invented_run(warehouse: Path, tmp_path: Path) -> None:
    """The target folder's last run (a docs run here; or another warehouse's build) is never taken for the run that
    built this warehouse: without a run recorded in the warehouse, no mart has one."""
    make_build_warehouse(warehouse)
    write_dbt_target(tmp_path / "target", "docs-run", [], command="generate")
    publication = publish_marts(warehouse, tmp_path / "published", tmp_path / "target")
    entry = next(mart for mart in publication.manifest["marts"] if mart["mart"] == "dim_stories")
    assert entry["dbt"] == {"unique_id": None, "checksum": None, "status": None, "built_at": None,
                            "invocation_id": None}
    assert publication.manifest["dbt"]["last_run"] is None
    assert publication.manifest["dbt"]["unrecorded_marts"] == MARTS
    assert "records no `lfh build` run" in publication.manifest["dbt"]["note"]
    write_dbt_target(tmp_path / "target", "another-warehouse", MARTS)  # a build of another warehouse
    other = publish_marts(warehouse, tmp_path / "published", tmp_path / "target")
    assert other.manifest["dbt"]["last_run"] is None and other.manifest["dbt"]["unrecorded_marts"] == MARTS
    assert other.manifest["dbt"]["vars"]["baseline_set"] == "census_2022"
    assert other.manifest["dbt"]["vars_from"] == "dbt_project.yml (no run recorded)"
    # a run recorded, then a docs run in the target folder: the marts keep the run that built them
    write_dbt_target(tmp_path / "target", "invocation-1", MARTS, warehouse=warehouse)
    write_dbt_target(tmp_path / "target", "docs-run", [], command="generate")
    recorded = publish_marts(warehouse, tmp_path / "published", tmp_path / "target")
    assert recorded.manifest["dbt"]["last_run"]["invocation_id"] == "invocation-1"
    assert recorded.manifest["dbt"]["unrecorded_marts"] == [] and recorded.manifest["dbt"]["note"] is None


def test_published_files_refuse_writes(published: tuple[Path, Path, Path]) -> None:
    _, destination, _ = published
    served = destination / "marts.duckdb"
    assert not os.access(served.resolve(), os.W_OK) or os.geteuid() == 0  # root ignores file modes
    assert oct(served.resolve().stat().st_mode & 0o777) == "0o444"
    with duckdb.connect(str(served), read_only=True) as copy:
        for statement in ["insert into marts.dim_stories values ('x', 'y', true, 1)",
                          "update marts.fct_name_coverage set characters = 0",
                          "create table marts.extra (a integer)"]:
            with pytest.raises(duckdb.Error, match="read-only"):
                copy.execute(statement)


def test_sqlalchemy_duckdb_engine_reads_every_mart_read_only(published: tuple[Path, Path, Path]) -> None:
    warehouse, destination, _ = published
    served = destination / "marts.duckdb"
    for engine in [sqlalchemy.create_engine(f"duckdb:///{served}?access_mode=read_only"),
                   sqlalchemy.create_engine(f"duckdb:///{served}", connect_args={"read_only": True})]:
        try:
            assert sorted(sqlalchemy.inspect(engine).get_table_names()) == MARTS
            with engine.connect() as connection:
                for mart in MARTS:
                    rows = connection.execute(sqlalchemy.text(f"select * from marts.{mart}")).fetchall()
                    assert comparable([tuple(row) for row in rows]) == build_rows(warehouse, mart)
                with pytest.raises(sqlalchemy.exc.DBAPIError, match="read-only"):
                    connection.execute(sqlalchemy.text("delete from marts.dim_stories"))
        finally:
            engine.dispose()


def test_a_reader_of_the_old_copy_keeps_a_consistent_view_while_a_new_one_is_published(
        published: tuple[Path, Path, Path]) -> None:
    warehouse, destination, target = published
    served = destination / "marts.duckdb"
    old = duckdb.connect(str(served), read_only=True)
    old_parquet = open(destination / "parquet" / "fct_representation_ratios.parquet", "rb")  # noqa: SIM115
    try:
        before = comparable(old.execute("select * from marts.fct_representation_ratios").fetchall())
        assert len(before) == 50
        make_build_warehouse(warehouse, generation=2)
        write_dbt_target(target, "invocation-2", MARTS, warehouse=warehouse)
        # Publish three times with keep=2: the version the old reader holds is deleted from disk meanwhile.
        for _ in range(3):
            publish_marts(warehouse, destination, target, keep=2)
        versions = sorted(path.name for path in (destination / "versions").iterdir())
        assert len(versions) == 2
        # The old connection still reads the old rows, every table from the same publication.
        assert comparable(old.execute("select * from marts.fct_representation_ratios").fetchall()) == before
        assert old.execute("select samples_received from marts.dim_stories where story_id = 's1'").fetchone() == (1,)
        assert old.execute("select count(*) from marts.fct_name_coverage").fetchone() == (3,)
        old_bytes = old_parquet.read()
        assert old_bytes[:4] == b"PAR1" and old_bytes[-4:] == b"PAR1"
        with duckdb.connect(str(served), read_only=True) as new:
            assert new.execute("select count(*) from marts.fct_representation_ratios").fetchone() == (100,)
            assert new.execute("select samples_received from marts.dim_stories where story_id = 's1'"
                               ).fetchone() == (2,)
        manifest = json.loads((destination / "manifest.json").read_text())
        assert manifest["dbt"]["last_run"]["invocation_id"] == "invocation-2"
    finally:
        old.close()
        old_parquet.close()


def test_a_failed_publication_leaves_the_previous_one_current(
        published: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    warehouse, destination, target = published
    current_before = os.readlink(destination / "current")
    manifest_before = (destination / "manifest.json").read_text()

    def failing_export(*args: object) -> None:
        raise OSError("disk full (simulated)")

    monkeypatch.setattr("lfh.serve.publish.export_parquet", failing_export)
    make_build_warehouse(warehouse, generation=2)
    with pytest.raises(OSError, match="simulated"):
        publish_marts(warehouse, destination, target)
    assert os.readlink(destination / "current") == current_before
    assert (destination / "manifest.json").read_text() == manifest_before
    assert [path.name for path in (destination / "versions").iterdir() if path.name.startswith(".")] == []
    with duckdb.connect(str(destination / "marts.duckdb"), read_only=True) as copy:
        assert copy.execute("select count(*) from marts.fct_representation_ratios").fetchone() == (50,)


HOLD_FILE = """
import sys, time, duckdb
connection = duckdb.connect(sys.argv[1], read_only=sys.argv[2] == "read")
print("holding", flush=True)
time.sleep(60)
"""


def _hold(path: Path, mode: str) -> subprocess.Popen:
    process = subprocess.Popen([sys.executable, "-c", HOLD_FILE, str(path), mode], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline().strip() == "holding"
    return process


def test_publishing_reads_the_build_file_beside_other_readers_and_releases_it(warehouse: Path,
                                                                               tmp_path: Path) -> None:
    make_build_warehouse(warehouse)
    reader = _hold(warehouse, "read")
    try:
        publish_marts(warehouse, tmp_path / "published", tmp_path / "target")
    finally:
        reader.kill()
        reader.wait()
    # Released: a build can take the write lock right after publishing returns.
    with duckdb.connect(str(warehouse)) as writer:
        writer.execute("create table marts.after_publish as select 1 as x")


def test_a_build_holding_the_write_lock_gives_a_clear_error(warehouse: Path, tmp_path: Path) -> None:
    make_build_warehouse(warehouse)
    writer = _hold(warehouse, "write")
    try:
        with pytest.raises(PublishError, match="holds it. Wait for it to finish"):
            publish_marts(warehouse, tmp_path / "published", tmp_path / "target")
    finally:
        writer.kill()
        writer.wait()
    assert not (tmp_path / "published" / "current").exists()


def test_a_warehouse_without_marts_is_refused(warehouse: Path, tmp_path: Path) -> None:
    with pytest.raises(PublishError, match="no warehouse there"):
        publish_marts(warehouse, tmp_path / "published", tmp_path / "target")
    warehouse.parent.mkdir(parents=True)
    duckdb.connect(str(warehouse)).close()
    with pytest.raises(PublishError, match="no tables in schema marts. Run `lfh build` first"):
        publish_marts(warehouse, tmp_path / "published", tmp_path / "target")


def test_a_foreign_file_at_a_published_name_is_not_replaced(warehouse: Path, tmp_path: Path) -> None:
    make_build_warehouse(warehouse)
    destination = tmp_path / "published"
    destination.mkdir()
    (destination / "marts.duckdb").write_text("someone's file")
    with pytest.raises(PublishError, match="not a link made by `lfh publish`"):
        publish_marts(warehouse, destination, tmp_path / "target")
    assert (destination / "marts.duckdb").read_text() == "someone's file"


def test_cli_publishes_beside_the_warehouse_by_default(warehouse: Path, tmp_path: Path) -> None:
    make_build_warehouse(warehouse)
    result = CliRunner().invoke(main, ["publish", "--target-dir", str(tmp_path / "target")])
    assert result.exit_code == 0, result.output
    assert "marts.fct_representation_ratios: 50 rows" in result.output
    assert (warehouse.parent / "published" / "manifest.json").is_file()
    other = CliRunner().invoke(main, ["publish", "--to", str(tmp_path / "elsewhere")])
    assert other.exit_code == 0, other.output
    assert (tmp_path / "elsewhere" / "parquet" / "dim_stories.parquet").is_file()
    missing_password = CliRunner().invoke(main, ["publish", "--postgres", "host=127.0.0.1"],
                                          env={"LFH_PG_PASSWORD": ""})
    assert missing_password.exit_code != 0
    assert "LFH_PG_PASSWORD" in missing_password.output


def test_root_is_told_the_file_mode_does_not_protect_the_copy(warehouse: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Mode 0444 does not stop root from a read-write open (which locks readers out): publish says so, and where
    to go for shared use."""
    make_build_warehouse(warehouse)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    as_root = CliRunner().invoke(main, ["publish", "--target-dir", str(tmp_path / "target")])
    assert as_root.exit_code == 0, as_root.output
    assert "running as root" in as_root.output and "lfh serve" in as_root.output
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    as_user = CliRunner().invoke(main, ["publish", "--target-dir", str(tmp_path / "target")])
    assert as_user.exit_code == 0 and "running as root" not in as_user.output
