"""The warehouse is a file: copied, moved or renamed it works as the original (every view reads, every command runs),
and a file that is no warehouse (empty, not DuckDB) or a warehouse built by an older version of the project ends
every command in one line naming the file and what to do, never in a traceback. Reads conftest's measures build
(copied: it is shared) and builds only the repair of the older warehouse (its views, one dbt call)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner, Result
from test_publish_helpers import free_port, private_base

from lfh.cli import main
from lfh.failures import explain
from lfh.report.data import read_marts
from lfh.serve.postgres_cluster import find_bin_dir

pytestmark = pytest.mark.slow  # copies of the measures build, one dbt build of the views: tests/tiers.py

PG_PASSWORD = "Copy-pw-5d1a"  # noqa: S105 (a throwaway test cluster)
MEASURES = Path(__file__).parent / "fixtures" / "measures"
SCHEMAS = ("raw", "staging", "intermediate", "reference", "marts")


def _no_traceback(result: Result, arguments: list[str]) -> None:
    crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
    assert not crashed, f"lfh {' '.join(arguments)} ended in a traceback: {result.exception!r}\n{result.output}"


def run(arguments: list[str], db: Path, ok: bool = True, **env: str) -> Result:
    """One command on the warehouse `db`; ok: it must succeed, else fail with one `Error:` line naming `db`."""
    result = CliRunner().invoke(main, arguments, env={"LFH_DB": str(db), **env})
    _no_traceback(result, arguments)
    if ok:
        assert result.exit_code == 0, f"lfh {' '.join(arguments)} on {db}: {result.output}"
    else:
        errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
        assert result.exit_code != 0 and len(errors) == 1, f"lfh {' '.join(arguments)}: {result.output}"
        assert str(db) in errors[0], errors[0]
    return result


def every_command(db: Path, out: Path, ok: bool = True, report: bool = True) -> dict[str, Result]:
    """report (its figures are the costly part: report=False leaves it out), audit-plan, audit-sample (both
    allocations) and publish on `db`; build and ingest too when it is no warehouse."""
    out.mkdir(parents=True, exist_ok=True)
    commands = {
        **({"report": ["report", "--out", str(out / "report"), "--wait", "0"]} if report else {}),
        "audit-plan": ["audit-plan", "--budget", "60", "--out", str(out / "plan.csv")],
        "audit-sample": ["audit-sample", "--n", "40", "--out", str(out / "sample.xlsx"), "--force", "--wait", "0"],
        "audit-sample-optimal": ["audit-sample", "--n", "40", "--allocate", "optimal", "--out",
                                 str(out / "optimal.xlsx"), "--force", "--wait", "0"],
        "publish": ["publish", "--to", str(out / "published"), "--wait", "0"],
    }
    if not ok:
        commands["build"] = ["build"]
        commands["ingest"] = ["ingest", str(MEASURES / "stories.jsonl")]
        commands["lexicon"] = ["lexicon", "--custom", str(MEASURES / "lexicon.csv"), "--skip-census",
                               "--skip-wikipedia", "--skip-surnames"]
    return {name: run(arguments, db, ok) for name, arguments in commands.items()}


def view_relations(db: Path) -> dict[str, int]:
    """Every view of the file, read by a plain DuckDB connection as a user's SQL or BI tool opens it."""
    with duckdb.connect(str(db), read_only=True) as connection:
        views = connection.execute("select schema_name, view_name from duckdb_views() where not internal "
                                   "order by all").fetchall()
        return {f"{schema}.{view}": connection.execute(f"select count(*) from {schema}.{view}").fetchone()[0]
                for schema, view in views}


@pytest.fixture(scope="module")
def original(measures_build: Path) -> Path:
    return measures_build / "lfh.duckdb"


@pytest.mark.parametrize("where", ["copied/experiment.duckdb", "moved/elsewhere/renamed.duckdb"])
def test_a_copied_or_moved_warehouse_works_as_the_original(original: Path, tmp_path: Path, where: str) -> None:
    db = tmp_path / where
    db.parent.mkdir(parents=True)
    if where.startswith("copied"):
        shutil.copyfile(original, db)
    else:  # a move: the file renamed into another folder (of a copy, as the shared build must stay)
        staged = tmp_path / "lfh.duckdb"
        shutil.copyfile(original, staged)
        os.replace(staged, db)
    views = view_relations(db)
    assert views == view_relations(original) and "intermediate.int_characters_hand_paired" in views
    with duckdb.connect(str(db), read_only=True) as connection:
        named = connection.execute("select view_name from duckdb_views() where not internal and "
                                   "regexp_matches(sql, '\\blfh\\.')").fetchall()
    assert named == [], f"views naming the original file's catalog: {named}"
    copied = where.startswith("copied")  # the reports (figures: seconds each) once, on the copy
    results = every_command(db, tmp_path / "out", report=copied)
    assert "proportional" in results["audit-sample"].output and (tmp_path / "out" / "optimal.xlsx").is_file()
    published = tmp_path / "out" / "published" / "marts.duckdb"
    # a copy of the published copy under another name: the report finds the marts in its schema main
    snapshot = tmp_path / "snapshot.duckdb"
    shutil.copyfile(published, snapshot)
    frames = read_marts(snapshot, wait=0)  # what `lfh report --db snapshot.duckdb` reads, without the figures
    assert frames["fct_representation_ratios"].height > 0 and frames["dim_stories"].height > 0
    with duckdb.connect(str(snapshot), read_only=True) as connection:
        assert connection.execute("select count(*) from main.fct_representation_ratios").fetchone()[0] > 0
    if copied and find_bin_dir() is not None:
        base = private_base()
        serve = ["serve", "--published", str(tmp_path / "out" / "published"), "--data-dir", str(base / "pg"),
                 "--port", str(free_port())]
        try:
            run([*serve, "--detach"], db, LFH_PG_PASSWORD=PG_PASSWORD)
        finally:
            run(["serve", "--stop", "--data-dir", str(base / "pg")], db)
            shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("content", [b"", b"name,gender\nAda,female\n"], ids=["empty", "not-duckdb"])
def test_a_file_that_is_no_warehouse_ends_every_command_in_one_line(tmp_path: Path, content: bytes) -> None:
    db = tmp_path / "lfh.duckdb"
    db.write_bytes(content)
    results = every_command(db, tmp_path / "out", ok=False)
    for result in results.values():
        assert ("empty (0 bytes)" if not content else "is not a DuckDB database") in result.output
        assert "LFH_DB" in result.output
    assert db.read_bytes() == content  # nothing written over it


def _as_an_older_version_built_it(db: Path) -> None:
    """What earlier versions of the project built: views naming their file's catalog (`lfh`), written in a file
    called lfh.duckdb then renamed; and a warehouse without a relation this version reads."""
    built_as = db.parent / "lfh.duckdb"
    os.replace(db, built_as)
    with duckdb.connect(str(built_as)) as connection:
        views = connection.execute("select schema_name, view_name, sql from duckdb_views() where not internal"
                                   ).fetchall()
        for schema, view, sql in views:
            qualified = re.sub(rf"\b(from|join)\s+({'|'.join(SCHEMAS)})\.", r"\1 lfh.\2.", sql, flags=re.IGNORECASE)
            assert qualified != sql, sql
            connection.execute(f"drop view {schema}.{view}")
            connection.execute(qualified)
    os.replace(built_as, db)


def test_a_warehouse_built_by_an_older_version_says_to_build_and_a_build_repairs_it(
        original: Path, tmp_path: Path) -> None:
    db = tmp_path / "older" / "old-copy.duckdb"
    db.parent.mkdir()
    shutil.copyfile(original, db)
    _as_an_older_version_built_it(db)
    # a view that names the old file's catalog fails to read, and the message says what to do
    with duckdb.connect(str(db), read_only=True) as connection:
        view = connection.execute("select schema_name || '.' || view_name from duckdb_views() where not internal "
                                  "and schema_name = 'staging' limit 1").fetchone()[0]
        with pytest.raises(duckdb.Error) as failure:
            connection.execute(f"select * from {view}").fetchall()
    message = explain(failure.value, db)
    assert message and 'name the catalog "lfh"' in message and "`lfh build`" in message, message
    # the commands read marts and tables, no view: they work, and warn before they read (the planner included)
    for arguments in (["audit-plan", "--budget", "60"],
                      ["audit-sample", "--n", "40", "--allocate", "optimal", "--out", str(tmp_path / "s.xlsx")],
                      ["audit-sample", "--n", "40", "--out", str(tmp_path / "p.xlsx"), "--wait", "0"]):
        result = run(arguments, db)
        assert 'views name the catalog lfh' in result.output and "`lfh build`" in result.output, result.output
    # the build recreates every view (a selection of them here; `lfh build` does all of it). dbt's profile names the
    # file, so under this name dbt parses in full: in a target folder of its own, not to leave that parse in the
    # worker's, where the next build of an lfh.duckdb would parse in full again
    run(["build", "--select", "config.materialized:view", "--skip-tests"], db,
        DBT_TARGET_PATH=str(tmp_path / "target"), DBT_LOG_PATH=str(tmp_path / "logs"))
    assert view_relations(db) == view_relations(original)
    run(["audit-plan", "--budget", "60"], db)

    # a relation this version reads and an older build lacks
    missing = tmp_path / "missing" / "lfh.duckdb"
    missing.parent.mkdir()
    shutil.copyfile(original, missing)
    with duckdb.connect(str(missing)) as connection:
        connection.execute("drop view intermediate.int_characters_hand_paired")
        connection.execute("alter table marts.dim_stories drop column is_labeled")
    for arguments in (["audit-plan", "--budget", "60"],
                      ["audit-sample", "--n", "40", "--allocate", "optimal", "--out", str(tmp_path / "m.xlsx")],
                      ["report", "--out", str(tmp_path / "missing-report"), "--wait", "0"]):
        result = run(arguments, missing, ok=False)
        assert "`lfh build`" in result.output, result.output
        if arguments[0] == "report":  # a column the report reads: DuckDB's error, worded by lfh.failures
            assert "older version" in result.output and "is_labeled" in result.output, result.output
