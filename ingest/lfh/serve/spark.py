"""`lfh publish --target spark`: publish the marts a Spark build wrote, in the same layout as a DuckDB build.

The local Spark target keeps each table as Parquet files under its warehouse folder
(<LFH_SPARK_DIR>/spark-warehouse/<schema>.db/<table>/). Reading those files needs no Spark session (which takes
a minute to start): they are staged into a DuckDB file shaped like a DuckDB build (schema marts with dbt's
descriptions as comments and the contracts' NOT NULL, reference.baselines, raw.*_first_names and
raw.census_surnames from the landed Parquet), and that file is published exactly as `lfh publish` publishes a
DuckDB build. So BI users get the same marts.duckdb, parquet/<mart>.parquet and manifest.json whichever engine
built the marts.

On a remote cluster (Thrift server, Databricks) the tables live in that cluster's storage: export them there
(docs/SCALE_OUT.md); this module reads the local target's folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from lfh.serve.copy import PublishError, quote_identifier, quote_literal

SPARK_WAREHOUSE = "spark-warehouse"


def spark_table_dir(spark_dir: Path, schema: str, table: str) -> Path:
    return spark_dir / SPARK_WAREHOUSE / f"{schema}.db" / table


def _mart_nodes(manifest: dict) -> list[dict]:
    return sorted((node for node in manifest["nodes"].values()
                   if node["resource_type"] == "model" and node["schema"] == "marts"
                   and node["config"].get("materialized") in ("table", "incremental")),
                  key=lambda node: node["name"])


def _parquet_glob(folder: Path) -> str:
    return quote_literal(str(folder / "**" / "*.parquet"))


def stage_spark_build(spark_dir: Path, target_dir: Path, raw_parquet_dir: Path | None, staged_db: Path) -> Path:
    """Write staged_db (replacing it): the Spark build's marts, baselines seed and lexicon tables, with comments."""
    manifest_path = target_dir / "manifest.json"
    if not manifest_path.is_file():
        raise PublishError(f"{manifest_path} is missing: run `lfh build --target spark` first.")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    marts = _mart_nodes(manifest)
    missing = [node["name"] for node in marts
               if not any(spark_table_dir(spark_dir, "marts", node["name"]).glob("*.parquet"))]
    if not marts or missing:
        raise PublishError(f"no Spark-built Parquet files for {', '.join(missing) or 'any mart'} under "
                           f"{spark_dir / SPARK_WAREHOUSE}: run `lfh build --target spark` first.")
    staged_db.parent.mkdir(parents=True, exist_ok=True)
    staged_db.unlink(missing_ok=True)
    connection = duckdb.connect(str(staged_db))
    try:
        connection.execute("create schema marts")
        for node in marts:
            _stage_mart(connection, spark_dir, node)
        baselines = spark_table_dir(spark_dir, "reference", "baselines")
        if any(baselines.glob("*.parquet")):
            connection.execute("create schema reference")
            connection.execute("create table reference.baselines as "
                               f"select * from read_parquet({_parquet_glob(baselines)})")
        if raw_parquet_dir is not None:
            connection.execute("create schema raw")
            for folder in [*sorted(raw_parquet_dir.glob("*_first_names")), raw_parquet_dir / "census_surnames"]:
                if folder.is_dir() and any(folder.glob("*.parquet")):
                    connection.execute(f"create table raw.{quote_identifier(folder.name)} as "
                                       f"select * from read_parquet({_parquet_glob(folder)}, union_by_name = true)")
        connection.execute("checkpoint")
    finally:
        connection.close()
    return staged_db


def _stage_mart(connection: duckdb.DuckDBPyConnection, spark_dir: Path, node: dict) -> None:
    name = quote_identifier(node["name"])
    columns = list(node["columns"].values())
    present = {row[0] for row in connection.execute(
        f"describe select * from read_parquet({_parquet_glob(spark_table_dir(spark_dir, 'marts', node['name']))})"
    ).fetchall()}
    # the contract's column order (Spark keeps it too); a column the yml does not list is kept after them
    ordered = [column["name"] for column in columns if column["name"] in present]
    ordered += sorted(present - set(ordered))
    connection.execute(
        f"create table marts.{name} as select {', '.join(quote_identifier(c) for c in ordered)} "
        f"from read_parquet({_parquet_glob(spark_table_dir(spark_dir, 'marts', node['name']))})")
    if node.get("description"):
        connection.execute(f"comment on table marts.{name} is {quote_literal(node['description'])}")
    for column in columns:
        if column["name"] not in present:
            continue
        if column.get("description"):
            connection.execute(f"comment on column marts.{name}.{quote_identifier(column['name'])} is "
                               f"{quote_literal(column['description'])}")
        if any(constraint.get("type") == "not_null" for constraint in column.get("constraints", [])):
            connection.execute(f"alter table marts.{name} alter column {quote_identifier(column['name'])} set not null")
