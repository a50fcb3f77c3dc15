"""The build's bookkeeping: which stories (at which version) and which loads the incremental layer holds. Kept out of
the model DAG (docs/INCREMENTAL.md): `lfh build` writes it here, together with the fingerprint and in the same
transaction, only after a complete build succeeded; dbt reads it as the source build_state (meta.stories_built,
meta.loads_built) in int_stories_changed alone.

- The loads are listed BEFORE dbt runs: a load that lands during the build (a Parquet landing holds no warehouse
  lock) is then new to the next build, which looks at its stories again. Never the other way round.
- The stories come from int_stories_changed after the build: on a full build every story, replacing the state;
  on an incremental one the changed stories, replacing their rows.
- A build that fails, stops or runs a selection records nothing; its cleared fingerprint makes the next build full,
  and a full build ignores and then replaces the state.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

STATE_SCHEMA = "meta"
STORIES_BUILT = f"{STATE_SCHEMA}.stories_built"
LOADS_BUILT = f"{STATE_SCHEMA}.loads_built"
CHANGED_STORIES = "intermediate.int_stories_changed"  # the model's relation (schema intermediate, dbt_project.yml)
STORY_TABLES = ("stories", "label_responses")


def raw_relation(table: str, parquet_dir: Path | None) -> str | None:
    """SQL naming a raw table: the warehouse's raw.<table>, or its landed Parquet files (None when there are none)."""
    if parquet_dir is None:
        return f"raw.{table}"
    if not any((parquet_dir / table).glob("*.parquet")):
        return None
    files = str(parquet_dir / table / "*.parquet").replace("'", "''")
    return f"read_parquet('{files}', union_by_name = true)"


def landed_signature(connection: duckdb.DuckDBPyConnection, parquet_dir: Path | None = None) -> dict[str, str]:
    """What has landed in the raw layer, cheaply: the row count of every table of the warehouse's raw schema (raw
    tables only grow: `lfh ingest`, `lfh lexicon` and hand labels append rows, never update or delete them), or
    with parquet_dir the name, size and modification time of every landed Parquet file (nothing is read). Equal to
    the last complete build's: nothing landed since."""
    if parquet_dir is not None:
        files = sorted(path for path in parquet_dir.glob("*/*.parquet") if path.is_file())
        return {str(path.relative_to(parquet_dir)): f"{path.stat().st_size}:{path.stat().st_mtime_ns}"
                for path in files}
    tables = [row[0] for row in connection.execute(
        "select table_name from duckdb_tables() where schema_name = 'raw' order by table_name").fetchall()]
    if not tables:
        return {}
    counts = " union all ".join(
        f"select '{table.replace(chr(39), chr(39) * 2)}', count(*) from raw.\"{table.replace(chr(34), chr(34) * 2)}\""
        for table in tables)
    return {table: str(count) for table, count in connection.execute(counts).fetchall()}


def state_recorded(connection: duckdb.DuckDBPyConnection) -> bool:
    """Whether the last complete build left its bookkeeping (a dbt stand-in that built nothing leaves none)."""
    schema, table = STORIES_BUILT.split(".")
    # a literal query: binding Python parameters makes duckdb import pandas (seconds, on a check that must be quick)
    query = f"select count(*) from duckdb_tables() where schema_name = '{schema}' and table_name = '{table}'"
    return bool(connection.execute(query).fetchone()[0])


def loads_present(connection: duckdb.DuckDBPyConnection, parquet_dir: Path | None = None) -> list[str]:
    """The load ids of every story row and label response there now (before the build reads them)."""
    loads: set[str] = set()
    for table in STORY_TABLES:
        relation = raw_relation(table, parquet_dir)
        if relation is None:
            continue
        try:
            loads.update(row[0] for row in connection.execute(f"select distinct load_id from {relation}").fetchall())
        except (duckdb.CatalogException, duckdb.BinderException):  # no such table, or one without load ids
            continue
    return sorted(load for load in loads if load is not None)


def record_build(connection: duckdb.DuckDBPyConnection, loads: list[str], full_refresh: bool) -> None:
    """After a complete build: the stories it built at their versions, and the loads it saw (call in the
    transaction that stores the fingerprint). Without int_stories_changed (a dbt stand-in built nothing) the state
    is dropped: the next build then treats every story as changed."""
    connection.execute(f"create schema if not exists {STATE_SCHEMA}")
    schema, table = CHANGED_STORIES.split(".")
    found = connection.execute("select count(*) from duckdb_tables() where schema_name = ? and table_name = ?",
                               [schema, table]).fetchone()[0]
    if not found:
        connection.execute(f"drop table if exists {STORIES_BUILT}")
        connection.execute(f"drop table if exists {LOADS_BUILT}")
        return
    connection.execute(f"create table if not exists {STORIES_BUILT} (story_id varchar, last_loaded_at timestamp)")
    if full_refresh:
        connection.execute(f"delete from {STORIES_BUILT}")
    else:
        connection.execute(f"delete from {STORIES_BUILT} where story_id in (select story_id from {CHANGED_STORIES})")
    connection.execute(f"insert into {STORIES_BUILT} select story_id, last_loaded_at from {CHANGED_STORIES}")
    connection.execute(f"create or replace table {LOADS_BUILT} (load_id varchar)")
    connection.execute(f"insert into {LOADS_BUILT} select unnest(?::varchar[])", [loads])
