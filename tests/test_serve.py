"""The Postgres endpoint: marts loaded into a real PostgreSQL, read through psycopg, writes refused.

One temporary cluster (127.0.0.1, a free port) serves the whole module; it is stopped and deleted at the end.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import psycopg
import pytest
from click.testing import CliRunner
from test_publish_helpers import comparable, free_port, make_build_warehouse, private_base

from lfh.cli import main
from lfh.serve.postgres_cluster import Cluster, ensure_database, find_bin_dir, running_port, start, stop
from lfh.serve.postgres_load import load_marts, redacted_dsn
from lfh.serve.publish import Publication, publish_marts

READER = "lfh_reader"
PASSWORD = "Reader-pw-4c1e9b"  # noqa: S105 (a test cluster's password)
DATABASE = "lfh"


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    if find_bin_dir() is None:
        pytest.skip("no PostgreSQL server binaries (apt-get install postgresql; make test installs them)")
    base = private_base()
    started = start(base / "data", "127.0.0.1", free_port())
    try:
        # Log every statement, so the test below can show the reader's password never reaches the server.
        with psycopg.connect(started.admin_conninfo(), autocommit=True) as admin:
            admin.execute("alter system set log_statement = 'all'")
            admin.execute("alter system set fsync = off")  # a throwaway cluster: no need to wait for disks
            admin.execute("select pg_reload_conf()")
        ensure_database(started, DATABASE)
        yield started
    finally:
        stop(started.data_dir)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def publication(tmp_path_factory: pytest.TempPathFactory) -> Publication:
    root = tmp_path_factory.mktemp("serve")
    make_build_warehouse(root / "lfh.duckdb", generation=1)
    return publish_marts(root / "lfh.duckdb", root / "published", root / "target")


@pytest.fixture(scope="module")
def loaded(cluster: Cluster, publication: Publication) -> Publication:
    load_marts(publication.serving_db, cluster.admin_conninfo(DATABASE), READER, PASSWORD, lock_down_database=True)
    return publication


def reader_connection(cluster: Cluster, database: str = DATABASE, user: str = READER,
                      password: str = PASSWORD) -> psycopg.Connection:
    return psycopg.connect(host="127.0.0.1", port=cluster.port, dbname=database, user=user, password=password,
                           connect_timeout=5)


def duckdb_rows(publication: Publication, mart: str) -> list[tuple]:
    with duckdb.connect(str(publication.serving_db), read_only=True) as connection:
        return comparable(connection.execute(f"select * from marts.{mart}").fetchall())


@pytest.mark.slow  # a real PostgreSQL server: tests/tiers.py
def test_every_mart_reads_the_same_rows_through_postgres(cluster: Cluster, loaded: Publication) -> None:
    marts = [entry["mart"] for entry in loaded.manifest["marts"]]
    assert len(marts) == 3
    with reader_connection(cluster) as connection:
        served = [name for (name,) in connection.execute(
            "select table_name from information_schema.tables where table_schema = 'marts' order by 1")]
        assert served == marts
        for mart in marts:
            rows = connection.execute(f"select * from marts.{mart}").fetchall()
            assert comparable(rows) == duckdb_rows(loaded, mart), mart
            assert len(rows) == next(entry["rows"] for entry in loaded.manifest["marts"] if entry["mart"] == mart)


@pytest.mark.slow  # a real PostgreSQL server: tests/tiers.py
def test_types_and_comments_reach_postgres(cluster: Cluster, loaded: Publication) -> None:
    with reader_connection(cluster) as connection:
        types = dict(connection.execute(
            "select column_name, format_type(atttypid, atttypmod) from information_schema.columns c "
            "join pg_attribute a on a.attrelid = 'marts.fct_representation_ratios'::regclass "
            "and a.attname = c.column_name "
            "where table_schema = 'marts' and table_name = 'fct_representation_ratios'").fetchall())
        comment = connection.execute(
            "select col_description('marts.fct_name_coverage'::regclass, 1)").fetchone()[0]
        table_comment = connection.execute(
            "select obj_description('marts.fct_name_coverage'::regclass, 'pg_class')").fetchone()[0]
        not_null = connection.execute(
            "select is_nullable from information_schema.columns "
            "where table_schema = 'marts' and table_name = 'dim_stories' and column_name = 'story_id'").fetchone()
    assert types["q_value"] == "numeric(18,6)"
    assert types["labels"] == "text[]"
    assert types["numerator"] == "bigint"
    assert types["representation_ratio"] == "double precision"
    assert types["computed_on"] == "date"
    assert comment == "Canonical model; 'All' aggregates."
    assert table_comment == "Share of characters with a matched name."
    assert not_null == ("NO",)


WRITES = [
    "insert into marts.dim_stories (story_id) values ('x')",
    "update marts.fct_name_coverage set characters = 0",
    "delete from marts.dim_stories",
    "truncate marts.dim_stories",
    "drop table marts.dim_stories",
    "create table marts.extra (a integer)",
    "create table public.extra (a integer)",
    "create temporary table extra (a integer)",
    "create schema extra",
    "alter table marts.dim_stories add column extra integer",
]


@pytest.mark.slow  # a real PostgreSQL server: tests/tiers.py
@pytest.mark.parametrize("statement", WRITES)
def test_the_reader_cannot_write_even_after_leaving_read_only_mode(cluster: Cluster, loaded: Publication,
                                                                   statement: str) -> None:
    with reader_connection(cluster) as connection:
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            connection.execute(statement)
        connection.rollback()
        # The read-only default is only a first guard; without it the privileges still refuse.
        connection.execute("set default_transaction_read_only = off")
        connection.commit()
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            connection.execute(statement)
        connection.rollback()
        assert connection.execute("select count(*) from marts.dim_stories").fetchone() == (3,)


@pytest.mark.slow  # a real PostgreSQL server: tests/tiers.py
def test_wrong_or_missing_password_is_refused(cluster: Cluster, loaded: Publication) -> None:
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        reader_connection(cluster, password="wrong").close()
    with pytest.raises(psycopg.OperationalError, match="password"):
        psycopg.connect(host="127.0.0.1", port=cluster.port, dbname=DATABASE, user="postgres",
                        password="", connect_timeout=5).close()


@pytest.mark.slow  # a real PostgreSQL server: tests/tiers.py
def test_the_password_never_reaches_the_server_log(cluster: Cluster, loaded: Publication) -> None:
    log = cluster.log_file.read_text(encoding="utf-8", errors="replace")
    assert "alter role" in log.lower()  # statements are logged...
    assert PASSWORD not in log  # ...but only the SCRAM verifier was sent


@pytest.mark.slow  # a real PostgreSQL server: tests/tiers.py
def test_reloading_swaps_in_new_marts(cluster: Cluster, tmp_path: Path) -> None:
    make_build_warehouse(tmp_path / "lfh.duckdb", generation=2)
    newer = publish_marts(tmp_path / "lfh.duckdb", tmp_path / "published", tmp_path / "target")
    ensure_database(cluster, "reload_check")
    dsn = cluster.admin_conninfo("reload_check")
    load_marts(newer.serving_db, dsn, "reload_reader", PASSWORD, lock_down_database=False)
    with reader_connection(cluster, "reload_check", "reload_reader") as connection:
        assert connection.execute("select count(*) from marts.fct_representation_ratios").fetchone() == (100,)
        assert connection.execute("select count(*) from pg_namespace where nspname like 'marts%'").fetchone() == (1,)
        connection.execute("set default_transaction_read_only = off")
        connection.commit()
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            connection.execute("create table marts.extra (a integer)")


@pytest.mark.slow  # a real PostgreSQL server: tests/tiers.py
def test_publish_to_a_postgres_dsn_from_the_command_line(cluster: Cluster, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    warehouse = tmp_path / "lfh.duckdb"
    make_build_warehouse(warehouse)
    monkeypatch.setenv("LFH_DB", str(warehouse))
    ensure_database(cluster, "analytics")
    dsn = cluster.admin_conninfo("analytics") + " password=not-shown-anywhere"
    result = CliRunner().invoke(main, ["publish", "--postgres", dsn, "--reader-role", "bi_reader"],
                                env={"LFH_PG_PASSWORD": PASSWORD})
    assert result.exit_code == 0, result.output
    assert "not-shown-anywhere" not in result.output
    assert redacted_dsn(dsn) in result.output
    with reader_connection(cluster, "analytics", "bi_reader") as connection:
        assert connection.execute("select count(*) from marts.fct_name_coverage").fetchone() == (3,)
    refused = CliRunner().invoke(main, ["publish", "--postgres", dsn, "--reader-role", "postgres"],
                                 env={"LFH_PG_PASSWORD": PASSWORD})
    assert refused.exit_code != 0
    assert "cannot be the read-only reader" in refused.output


def _serve_in_foreground_then_ctrl_c(publication: Publication, data_dir: Path, port: int) -> None:
    command = [sys.executable, "-m", "lfh.cli", "serve", "--published", str(publication.destination),
               "--data-dir", str(data_dir), "--port", str(port)]
    environment = {**os.environ, "LFH_PG_PASSWORD": PASSWORD}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environment)
    try:
        assert process.stdout is not None
        output = []
        for line in process.stdout:
            output.append(line)
            if line.startswith("press Ctrl-C"):
                break
        printed = "".join(output)
        assert f"serving 3 marts at postgresql://{READER}@127.0.0.1:{port}/{DATABASE}" in printed, printed
        assert PASSWORD not in printed
        with psycopg.connect(f"postgresql://{READER}@127.0.0.1:{port}/{DATABASE}", password=PASSWORD) as connection:
            assert connection.execute("select count(*) from marts.fct_representation_ratios").fetchone() == (50,)
        assert running_port(data_dir) is not None
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=60)
        assert process.returncode == 0, printed + rest
        assert "stopped" in rest
        assert running_port(data_dir) is None
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(host="127.0.0.1", port=port, dbname=DATABASE, user=READER, password=PASSWORD,
                            connect_timeout=3).close()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.slow  # a real PostgreSQL server: tests/tiers.py
def test_lfh_serve_detached_then_stopped_then_in_the_foreground_until_ctrl_c(publication: Publication) -> None:
    if find_bin_dir() is None:
        pytest.skip("no PostgreSQL server binaries (apt-get install postgresql; make test installs them)")
    base = private_base()
    data_dir = base / "pg"
    port = free_port()
    try:
        runner = CliRunner()
        arguments = ["serve", "--published", str(publication.destination), "--data-dir", str(data_dir),
                     "--port", str(port)]
        no_password = runner.invoke(main, arguments, env={"LFH_PG_PASSWORD": ""})
        assert no_password.exit_code != 0 and "LFH_PG_PASSWORD" in no_password.output
        started = runner.invoke(main, [*arguments, "--detach"], env={"LFH_PG_PASSWORD": PASSWORD})
        assert started.exit_code == 0, started.output
        assert oct(data_dir.stat().st_mode & 0o777) == "0o700"
        with psycopg.connect(host="127.0.0.1", port=port, dbname=DATABASE, user=READER, password=PASSWORD) as conn:
            assert conn.execute("select count(*) from marts.dim_stories").fetchone() == (3,)
        again = runner.invoke(main, [*arguments, "--detach"], env={"LFH_PG_PASSWORD": PASSWORD})
        assert again.exit_code != 0 and "already runs" in again.output
        stopped = runner.invoke(main, ["serve", "--stop", "--data-dir", str(data_dir)])
        assert stopped.exit_code == 0 and "stopped the server" in stopped.output
        assert running_port(data_dir) is None
        # The same data folder again (no initdb this time), in the foreground as a user runs it.
        _serve_in_foreground_then_ctrl_c(publication, data_dir, port)
    finally:
        stop(data_dir)
        shutil.rmtree(base, ignore_errors=True)


def test_serve_without_a_publication_says_what_to_run(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["serve", "--published", str(tmp_path / "nothing")],
                                env={"LFH_PG_PASSWORD": PASSWORD})
    assert result.exit_code != 0
    assert "run `lfh publish` first" in result.output


OWNER, OWNER_PASSWORD, OWNED_DATABASE = "lfh_owner", "Owner-pw-19e2", "lfh_owned"  # noqa: S105 (test cluster)


@pytest.fixture(scope="module")
def owner_loaded(cluster: Cluster, publication: Publication) -> str:
    """The marts loaded by a role that has CREATEROLE and owns its database, and is no superuser (what
    docs/SERVING.md asks for), with two reader logins, alice and bob."""
    with psycopg.connect(cluster.admin_conninfo(), autocommit=True) as admin:
        admin.execute(f"create role {OWNER} login createrole password '{OWNER_PASSWORD}'")
        admin.execute(f"create database {OWNED_DATABASE} owner {OWNER}")
    dsn = f"host=127.0.0.1 port={cluster.port} dbname={OWNED_DATABASE} user={OWNER} password={OWNER_PASSWORD}"
    for reader, password in (("alice", "Alice-pw-1"), ("bob", "Bob-pw-2")):
        load_marts(publication.serving_db, dsn, reader, password, lock_down_database=False)
    return dsn


@pytest.mark.slow  # a real PostgreSQL server: tests/tiers.py
def test_a_createrole_database_owner_publishes_without_superuser(cluster: Cluster, owner_loaded: str) -> None:
    with psycopg.connect(owner_loaded) as owner:
        assert owner.execute("select rolsuper from pg_roles where rolname = current_user").fetchone() == (False,)
    for reader, password in (("alice", "Alice-pw-1"), ("bob", "Bob-pw-2")):
        with reader_connection(cluster, OWNED_DATABASE, reader, password) as connection:
            assert connection.execute("select count(*) from marts.dim_stories").fetchone() == (3,)


@pytest.mark.slow  # a real PostgreSQL server: tests/tiers.py
def test_a_reader_cannot_change_the_shared_group_or_another_reader(cluster: Cluster, owner_loaded: str) -> None:
    """PostgreSQL lets any login role change its own password and session defaults; each person has a login
    of their own, so that reaches nobody else, and the shared group cannot log in or be changed by a reader."""
    others = ["alter role bob password 'taken-over'", "alter role bob set default_transaction_read_only = off",
              "alter role lfh_readers login", "alter role lfh_readers set default_transaction_read_only = off",
              "alter role alice createrole", "alter role alice createdb",
              "grant lfh_readers to alice with admin option", "create role intruder login password 'x'"]
    with reader_connection(cluster, OWNED_DATABASE, "alice", "Alice-pw-1") as alice:
        alice.execute("set default_transaction_read_only = off")  # as an attacker would, first
        alice.commit()
        for statement in others:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                alice.execute(statement)
            alice.rollback()
    with pytest.raises(psycopg.OperationalError):  # the group holding the grants is not a login
        reader_connection(cluster, OWNED_DATABASE, "lfh_readers", "anything").close()
    with reader_connection(cluster, OWNED_DATABASE, "bob", "Bob-pw-2") as bob:  # untouched by alice's attempts
        assert bob.execute("show default_transaction_read_only").fetchone() == ("on",)
        assert bob.execute("select count(*) from marts.dim_stories").fetchone() == (3,)


@pytest.mark.slow  # a real PostgreSQL server: tests/tiers.py
def test_the_readers_group_owns_nothing_and_holds_only_select(cluster: Cluster, owner_loaded: str) -> None:
    with psycopg.connect(owner_loaded) as owner:
        owned = owner.execute("select count(*) from pg_class c join pg_roles r on r.oid = c.relowner "
                              "where r.rolname = 'lfh_readers'").fetchone()
        privileges = owner.execute(
            "select distinct privilege_type from information_schema.role_table_grants "
            "where grantee = 'lfh_readers' and table_schema = 'marts'").fetchall()
        can_login = owner.execute("select rolcanlogin from pg_roles where rolname = 'lfh_readers'").fetchone()
    assert owned == (0,) and privileges == [("SELECT",)] and can_login == (False,)
