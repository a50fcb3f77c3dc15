"""Load a published marts.duckdb into PostgreSQL (schema marts) and give reader logins read-only access.

The tables are written into a staging schema and swapped in with a rename in the same transaction, so
Postgres users see the old marts or the new ones, never a mix. The reader's password is sent only as a
SCRAM verifier computed on this side: the server (and its statement log) never sees it in clear.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from lfh.errors import ServeError
from lfh.serve.copy import SERVING_SCHEMA, describe_open_marts, quote_identifier
from lfh.serve.postgres_types import map_column

POSTGRES_SCHEMA = "marts"
STAGING_SCHEMA = "marts__loading"
BATCH_ROWS = 5000


class PostgresLoadError(ServeError):
    """A failed load, with what to do next; the DSN's password is never part of the message."""


@dataclass(frozen=True)
class LoadedMart:
    name: str
    rows: int


def redacted_dsn(dsn: str) -> str:
    """The DSN as it may be printed: without its password."""
    try:
        parts = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "<unparseable DSN>"
    parts.pop("password", None)
    return make_conninfo(**{key: value for key, value in parts.items() if value is not None})


def _connect(dsn: str) -> psycopg.Connection:
    try:
        return psycopg.connect(dsn, connect_timeout=10)
    except psycopg.OperationalError as exc:
        # libpq's message can quote the conninfo; it never includes the password, but keep to the redacted form.
        raise PostgresLoadError(
            f"cannot connect to {redacted_dsn(dsn)}: {str(exc).strip()}\n"
            "Check host, port and user; put the password in PGPASSWORD (or ~/.pgpass), not on the command line."
        ) from exc


def _create_table(cursor: psycopg.Cursor, schema: str, mart_name: str, columns: list, mappings: list) -> None:
    definitions = [
        sql.SQL("{} {}{}").format(
            sql.Identifier(column.name),
            sql.SQL(mapping.postgres_type),
            sql.SQL("" if column.nullable else " not null"),
        )
        for column, mapping in zip(columns, mappings, strict=True)
    ]
    cursor.execute(sql.SQL("create table {}.{} ({})").format(
        sql.Identifier(schema), sql.Identifier(mart_name), sql.SQL(", ").join(definitions)))


def _comment(cursor: psycopg.Cursor, schema: str, mart, columns: list) -> None:
    table = sql.Identifier(schema, mart.name)
    if mart.description:
        cursor.execute(sql.SQL("comment on table {} is {}").format(table, sql.Literal(mart.description)))
    for column in columns:
        if column.description:
            cursor.execute(sql.SQL("comment on column {}.{} is {}").format(
                table, sql.Identifier(column.name), sql.Literal(column.description)))


def _copy_rows(cursor: psycopg.Cursor, duck: duckdb.DuckDBPyConnection, schema: str, mart_name: str,
               columns: list, mappings: list) -> None:
    selection = ", ".join(mapping.select_expression for mapping in mappings)
    duck.execute(f"select {selection} from {SERVING_SCHEMA}.{quote_identifier(mart_name)}")
    target = sql.SQL("copy {}.{} ({}) from stdin").format(
        sql.Identifier(schema), sql.Identifier(mart_name),
        sql.SQL(", ").join(sql.Identifier(column.name) for column in columns))
    with cursor.copy(target) as copy:
        while batch := duck.fetchmany(BATCH_ROWS):
            for row in batch:
                copy.write_row(row)


READERS_GROUP = "lfh_readers"  # NOLOGIN role holding the read grants; every reader login is a member
# What a reader login must not have. A non-superuser loader (CREATEROLE, owner of the database) cannot even
# *state* NOSUPERUSER, NOREPLICATION or NOBYPASSRLS in PostgreSQL 15, so these are checked, never set.
_FORBIDDEN_ATTRIBUTES = ("rolsuper", "rolcreaterole", "rolcreatedb", "rolreplication", "rolbypassrls")


def _refuse_privileged(cursor: psycopg.Cursor, role: str, must_not_login: bool) -> bool:
    """Whether the role exists; raises when it has any attribute a reader (or the readers' group) must not."""
    existing = cursor.execute(
        "select " + ", ".join(_FORBIDDEN_ATTRIBUTES) + ", rolcanlogin from pg_roles where rolname = %s", [role]
    ).fetchone()
    if existing is None:
        return False
    if any(existing[:-1]) or (must_not_login and existing[-1]):
        raise PostgresLoadError(
            f"role {role} exists and may log in as a group, create roles or databases, replicate, bypass row "
            "security or is a superuser: it cannot be the read-only reader. Choose another name with "
            "--reader-role (the group is always " + READERS_GROUP + ")."
        )
    return True


def _ensure_reader(connection: psycopg.Connection, role: str, password: str) -> None:
    """The readers' NOLOGIN group (holding the grants, owning nothing) and one login role in it.

    PostgreSQL lets every login role change its own password and its own session defaults (ALTER ROLE on
    itself), and no setting forbids it. So each person gets a login role of their own (run `lfh publish
    --postgres ... --reader-role <name>` once per person): a change of password or defaults then affects only
    that person, and the shared group cannot log in at all. The read-only default is a first guard only; the
    grants (SELECT, nothing else) are what refuse writes.
    """
    if role == READERS_GROUP:
        raise PostgresLoadError(f"{READERS_GROUP} is the readers' group (it cannot log in); choose a reader "
                                "login name with --reader-role")
    cursor = connection.cursor()
    group, login = sql.Identifier(READERS_GROUP), sql.Identifier(role)
    if not _refuse_privileged(cursor, READERS_GROUP, must_not_login=True):
        cursor.execute(sql.SQL("create role {} nologin").format(group))
    if not _refuse_privileged(cursor, role, must_not_login=False):
        cursor.execute(sql.SQL("create role {} login").format(login))
    verifier = connection.pgconn.encrypt_password(password.encode(), role.encode(), b"scram-sha-256").decode()
    cursor.execute(sql.SQL("alter role {} with login inherit password {}").format(login, sql.Literal(verifier)))
    cursor.execute(sql.SQL("alter role {} set default_transaction_read_only = on").format(login))
    cursor.execute(sql.SQL("grant {} to {}").format(group, login))
    database = cursor.execute("select current_database()").fetchone()[0]
    cursor.execute(sql.SQL("grant connect on database {} to {}").format(sql.Identifier(database), group))


def _lock_down(cursor: psycopg.Cursor) -> None:
    """For a database that exists only to serve the marts: nobody but the owner creates anything in it."""
    database = cursor.execute("select current_database()").fetchone()[0]
    cursor.execute(sql.SQL("revoke create, temporary on database {} from public").format(sql.Identifier(database)))
    cursor.execute("revoke create on schema public from public")


def load_marts(serving_db: Path, dsn: str, reader_role: str, reader_password: str,
               lock_down_database: bool) -> list[LoadedMart]:
    """Replace schema marts in the database at dsn with the published marts; SELECT only for reader_role.

    lock_down_database also revokes CREATE and TEMPORARY from PUBLIC on the whole database: right for a
    database made for serving (`lfh serve`), too intrusive for someone else's database (`--postgres DSN`).
    """
    loaded = []
    with duckdb.connect(str(serving_db), read_only=True) as duck:
        marts = describe_open_marts(duck)
        with _connect(dsn) as connection:
            try:
                cursor = connection.cursor()
                cursor.execute(sql.SQL("drop schema if exists {} cascade").format(sql.Identifier(STAGING_SCHEMA)))
                cursor.execute(sql.SQL("create schema {}").format(sql.Identifier(STAGING_SCHEMA)))
                for mart in marts:
                    mappings = [map_column(quote_identifier(column.name), column.data_type)
                                for column in mart.columns]
                    _create_table(cursor, STAGING_SCHEMA, mart.name, mart.columns, mappings)
                    _copy_rows(cursor, duck, STAGING_SCHEMA, mart.name, mart.columns, mappings)
                    _comment(cursor, STAGING_SCHEMA, mart, mart.columns)
                    loaded.append(LoadedMart(mart.name, mart.rows))
                _ensure_reader(connection, reader_role, reader_password)
                if lock_down_database:
                    _lock_down(cursor)
                staging = sql.Identifier(STAGING_SCHEMA)
                cursor.execute(sql.SQL("revoke all on schema {} from public").format(staging))
                readers = sql.Identifier(READERS_GROUP)  # granted to the group: every reader login keeps access
                cursor.execute(sql.SQL("grant usage on schema {} to {}").format(staging, readers))
                cursor.execute(sql.SQL("grant select on all tables in schema {} to {}").format(staging, readers))
                cursor.execute(sql.SQL("drop schema if exists {} cascade").format(sql.Identifier(POSTGRES_SCHEMA)))
                cursor.execute(sql.SQL("alter schema {} rename to {}").format(
                    staging, sql.Identifier(POSTGRES_SCHEMA)))
                cursor.execute(sql.SQL("comment on schema {} is {}").format(
                    sql.Identifier(POSTGRES_SCHEMA),
                    sql.Literal(f"Published by lfh publish from {serving_db}; read-only for {reader_role}.")))
            except psycopg.Error as exc:
                raise PostgresLoadError(
                    f"loading the marts into {redacted_dsn(dsn)} failed: {str(exc).strip()}\n"
                    "Nothing was changed (the load is one transaction). The connecting role needs CREATEROLE and "
                    "to own that database (no superuser needed)."
                ) from exc
    return loaded
