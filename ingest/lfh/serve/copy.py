"""Copy the marts of the build warehouse into a new, self-contained DuckDB file and Parquet files.

The build file is attached read-only only for the time the tables are copied, so a running build is never
blocked for long and a build that holds the write lock gives a clear error instead of a half copy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from lfh.errors import ServeError, WarehouseError
from lfh.failures import check_warehouse_file, first_line
from lfh.serve.provenance import warehouse_provenance

MARTS_SCHEMA = "marts"
SERVING_ALIAS = "serving"
# The copy is named marts.duckdb, so DuckDB calls its catalog `marts`. Tables in its default schema `main`
# are then read as `marts.<mart>` (catalog.table), the same name as in the build warehouse and in Postgres;
# a schema called marts inside a catalog called marts would make every `marts.<mart>` ambiguous.
SERVING_SCHEMA = "main"


@dataclass(frozen=True)
class Column:
    name: str
    data_type: str
    nullable: bool
    description: str | None


@dataclass(frozen=True)
class Mart:
    name: str
    rows: int
    description: str | None
    columns: list[Column] = field(default_factory=list)


class PublishError(ServeError):
    """Something the user can fix (a locked or empty warehouse); the message says what to do."""


def quote_identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _catalog_name(build_db: Path) -> str:
    """The name dbt gave the build database (its file stem): views inside it refer to it by that name."""
    return build_db.stem


def _mart_names(connection: duckdb.DuckDBPyConnection, catalog: str) -> list[str]:
    rows = connection.execute(
        "select table_name from information_schema.tables "
        "where table_catalog = ? and table_schema = ? order by table_name",
        [catalog, MARTS_SCHEMA],
    ).fetchall()
    return [name for (name,) in rows]


def _attach_build(connection: duckdb.DuckDBPyConnection, build_db: Path, catalog: str) -> None:
    if not build_db.is_file():
        raise PublishError(f"{build_db}: no warehouse there. Run `lfh build` first (or set LFH_DB).")
    try:
        check_warehouse_file(build_db)
    except WarehouseError as exc:
        raise PublishError(str(exc)) from None
    try:
        connection.execute(f"attach {quote_literal(str(build_db))} as {quote_identifier(catalog)} (read_only)")
    except duckdb.IOException as exc:
        if "lock" not in str(exc).lower():
            raise PublishError(f"cannot open {build_db} read-only: {first_line(exc)}") from exc
        raise PublishError(
            f"cannot open {build_db} read-only: {exc}\n"
            "A build (or another writer) holds it. Wait for it to finish and run `lfh publish` again."
        ) from exc


def copy_marts(build_db: Path, serving_db: Path) -> tuple[list[str], dict[str, Any]]:
    """Create serving_db with one table per relation of schema marts in build_db.

    Returns the mart names and the warehouse's provenance (baseline sets, lexicon), read in the same
    read-only session so both describe one state of the build file.

    Views are materialized as tables, so the copy never refers back to the build file. Column types,
    NOT NULL and the table and column comments (dbt's persist_docs) are kept.
    """
    catalog = _catalog_name(build_db)
    if catalog == SERVING_ALIAS:
        raise PublishError(f"{build_db}: rename the warehouse file; '{SERVING_ALIAS}' is used for the copy.")
    connection = duckdb.connect(":memory:")
    try:
        _attach_build(connection, build_db, catalog)
        names = _mart_names(connection, catalog)
        if not names:
            raise PublishError(
                f"{build_db} has no tables in schema {MARTS_SCHEMA}. Run `lfh build` first."
            )
        connection.execute(f"attach {quote_literal(str(serving_db))} as {SERVING_ALIAS}")
        source_schema = f"{quote_identifier(catalog)}.{MARTS_SCHEMA}"
        for name in names:
            connection.execute(
                f"create table {SERVING_ALIAS}.{SERVING_SCHEMA}.{quote_identifier(name)} as "
                f"select * from {source_schema}.{quote_identifier(name)}"
            )
        _copy_comments_and_not_null(connection, catalog)
        provenance = warehouse_provenance(connection, catalog, MARTS_SCHEMA)
        # The build file is no longer needed: release its lock before the slower Parquet export.
        connection.execute(f"detach {quote_identifier(catalog)}")
        connection.execute(f"checkpoint {SERVING_ALIAS}")
        connection.execute(f"detach {SERVING_ALIAS}")
    finally:
        connection.close()
    return names, provenance


def _copy_comments_and_not_null(connection: duckdb.DuckDBPyConnection, catalog: str) -> None:
    target_schema = f"{SERVING_ALIAS}.{SERVING_SCHEMA}"
    tables = connection.execute(
        "select table_name, comment from duckdb_tables() where database_name = ? and schema_name = ? "
        "union all select view_name, comment from duckdb_views() where database_name = ? and schema_name = ?",
        [catalog, MARTS_SCHEMA, catalog, MARTS_SCHEMA],
    ).fetchall()
    for table_name, comment in tables:
        if comment:
            connection.execute(
                f"comment on table {target_schema}.{quote_identifier(table_name)} is {quote_literal(comment)}"
            )
    columns = connection.execute(
        "select table_name, column_name, comment, is_nullable from duckdb_columns() "
        "where database_name = ? and schema_name = ?",
        [catalog, MARTS_SCHEMA],
    ).fetchall()
    for table_name, column_name, comment, is_nullable in columns:
        column = f"{target_schema}.{quote_identifier(table_name)}.{quote_identifier(column_name)}"
        if comment:
            connection.execute(f"comment on column {column} is {quote_literal(comment)}")
        if not is_nullable:
            connection.execute(
                f"alter table {target_schema}.{quote_identifier(table_name)} "
                f"alter column {quote_identifier(column_name)} set not null"
            )


def marts_schema(connection: duckdb.DuckDBPyConnection) -> str:
    """The schema holding the marts on this connection: `marts` in a build warehouse, `main` in a published copy,
    whatever the file is called (a copy of marts.duckdb renamed snapshot.duckdb has the catalog `snapshot`, where
    `marts.<name>` no longer resolves but `main.<name>` does)."""
    found = connection.execute(
        "select count(*) from information_schema.tables where table_catalog = current_database() "
        "and table_schema = ?", [MARTS_SCHEMA]).fetchone()
    return MARTS_SCHEMA if found and found[0] else SERVING_SCHEMA


def present_marts(connection: duckdb.DuckDBPyConnection) -> list[str]:
    """Names of the marts readable as `<marts_schema>.<name>` on this connection, whether it opened a build
    warehouse (schema marts) or a published copy (schema main, under any file name)."""
    rows = connection.execute(
        "select table_name from information_schema.tables where table_catalog = current_database() "
        "and table_schema = ? order by table_name",
        [marts_schema(connection)],
    ).fetchall()
    return [name for (name,) in rows]


def describe_marts(serving_db: Path) -> list[Mart]:
    """Rows, columns, types and descriptions of every mart in a published copy."""
    with duckdb.connect(str(serving_db), read_only=True) as connection:
        return describe_open_marts(connection)


def describe_open_marts(connection: duckdb.DuckDBPyConnection) -> list[Mart]:
    catalog = connection.execute("select current_database()").fetchone()[0]
    tables = connection.execute(
        "select table_name, comment from duckdb_tables() where database_name = ? and schema_name = ? "
        "order by table_name",
        [catalog, SERVING_SCHEMA],
    ).fetchall()
    marts = []
    for table_name, comment in tables:
        rows = connection.execute(
            f"select count(*) from {SERVING_SCHEMA}.{quote_identifier(table_name)}"
        ).fetchone()[0]
        columns = [
            Column(name=name, data_type=data_type, nullable=bool(nullable), description=column_comment or None)
            for name, data_type, nullable, column_comment in connection.execute(
                "select column_name, data_type, is_nullable, comment from duckdb_columns() "
                "where database_name = ? and schema_name = ? and table_name = ? order by column_index",
                [catalog, SERVING_SCHEMA, table_name],
            ).fetchall()
        ]
        marts.append(Mart(name=table_name, rows=rows, description=comment or None, columns=columns))
    return marts


def export_parquet(serving_db: Path, parquet_dir: Path, names: list[str]) -> None:
    parquet_dir.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(serving_db), read_only=True) as connection:
        for name in names:
            target = parquet_dir / f"{name}.parquet"
            connection.execute(
                f"copy {SERVING_SCHEMA}.{quote_identifier(name)} to {quote_literal(str(target))} "
                "(format parquet, compression zstd)"
            )
