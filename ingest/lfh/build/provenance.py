"""The record of every dbt run `lfh build` makes, kept in the warehouse that run built, so that what `lfh publish`
(manifest.json) and `lfh report` say about a build — its vars, run, times and versions — is that warehouse's own,
wherever the file goes. dbt's target/run_results.json is shared by every warehouse built from one checkout (the
next build of another warehouse, or any `dbt` command, rewrites it): it is read once, right after the run that
wrote it (its invocation id checked against the one dbt logged), and never again.

- meta.dbt_runs: one row per run (invocation id, command, selection, vars, times, versions).
- meta.dbt_nodes: per model and seed, the last run that built it (status, time, the SQL's checksum).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import yaml

from lfh.build.fingerprint import engine_versions

RUNS = "meta.dbt_runs"
NODES = "meta.dbt_nodes"
BUILT_TYPES = ("model", "seed")
BUILT_STATUSES = ("success",)


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def project_vars(project_dir: Path) -> dict[str, Any]:
    """The vars of dbt_project.yml, as dbt reads them before --vars."""
    try:
        loaded = yaml.safe_load((project_dir / "dbt_project.yml").read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return {}
    return dict(loaded.get("vars") or {})


def _execute_completed_at(result: dict[str, Any]) -> str | None:
    for step in result.get("timing") or []:
        if step.get("name") == "execute":
            return step.get("completed_at")
    return None


def create_tables(connection: duckdb.DuckDBPyConnection) -> None:
    connection.execute("create schema if not exists meta")
    connection.execute(f"""create table if not exists {RUNS} (
        invocation_id varchar, command varchar, selection varchar, generated_at varchar, elapsed_seconds double,
        dbt_version varchar, vars varchar, vars_given varchar, engine varchar, manifest varchar, target_dir varchar,
        recorded_at timestamptz)""")
    connection.execute(f"""create table if not exists {NODES} (
        unique_id varchar, name varchar, resource_type varchar, schema_name varchar, status varchar,
        built_at varchar, checksum varchar, invocation_id varchar)""")


def record_run(connection: duckdb.DuckDBPyConnection, target_dir: Path, invocation_id: str | None,
               dbt_vars: dict[str, Any] | None, project_dir: Path) -> bool:
    """Store the run `invocation_id` (what dbt wrote to target_dir just now) in the warehouse of `connection`.
    False, storing nothing, when target_dir's run_results.json is another run's (or absent)."""
    run_results = _read_json(target_dir / "run_results.json")
    if not invocation_id or run_results is None \
            or (run_results.get("metadata") or {}).get("invocation_id") != invocation_id:
        return False
    manifest = _read_json(target_dir / "manifest.json") or {}
    if (manifest.get("metadata") or {}).get("invocation_id") != invocation_id:
        manifest = {}  # another run's parse: its checksums may not be this run's SQL
    metadata, arguments = run_results.get("metadata") or {}, run_results.get("args") or {}
    given = dict(dbt_vars or {})
    nodes = manifest.get("nodes") or {}
    create_tables(connection)
    connection.execute(f"insert into {RUNS} values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [
        invocation_id, arguments.get("which"), json.dumps(arguments.get("select") or []),
        metadata.get("generated_at"), run_results.get("elapsed_time"), metadata.get("dbt_version"),
        json.dumps({**project_vars(project_dir), **given}, sort_keys=True, default=str),
        json.dumps(given, sort_keys=True, default=str), json.dumps(engine_versions(), sort_keys=True),
        json.dumps({key: (manifest.get("metadata") or {}).get(key)
                    for key in ("invocation_id", "generated_at", "dbt_version", "project_name", "adapter_type")}),
        str(target_dir), datetime.now(UTC)])
    rows = []
    for result in run_results.get("results") or []:
        unique_id = result.get("unique_id") or ""
        resource_type = unique_id.split(".", 1)[0]
        if resource_type not in BUILT_TYPES or result.get("status") not in BUILT_STATUSES:
            continue
        node = nodes.get(unique_id) or {}
        rows.append((unique_id, node.get("alias") or node.get("name") or unique_id.rsplit(".", 1)[-1],
                     resource_type, node.get("schema"), result.get("status"), _execute_completed_at(result),
                     (node.get("checksum") or {}).get("checksum"), invocation_id))
    if rows:
        connection.execute(f"delete from {NODES} where unique_id in (select unnest(?::varchar[]))",
                           [[row[0] for row in rows]])
        connection.executemany(f"insert into {NODES} values (?, ?, ?, ?, ?, ?, ?, ?)", rows)
    return True


def recorded_runs(connection: duckdb.DuckDBPyConnection, catalog: str | None = None) -> dict[str, Any] | None:
    """The warehouse's record (None when it holds none: built before builds recorded their runs, or by dbt alone):
    {"runs": {invocation_id: run}, "last": invocation_id of the last run, "nodes": {name: node}}."""
    prefix = f'"{catalog}".' if catalog else ""
    try:
        runs = connection.execute(
            f"select invocation_id, command, selection, generated_at, elapsed_seconds, dbt_version, vars, "
            f"vars_given, engine, manifest, target_dir from {prefix}{RUNS} order by recorded_at").fetchall()
        nodes = connection.execute(
            f"select name, unique_id, schema_name, status, built_at, checksum, invocation_id from {prefix}{NODES} "
            "where resource_type = 'model'").fetchall()
    except duckdb.CatalogException:
        return None
    if not runs:
        return None
    by_id = {}
    for (invocation, command, selection, generated, elapsed, version, variables, given, engine, manifest,
         target) in runs:
        by_id[invocation] = {
            "invocation_id": invocation, "command": command, "select": json.loads(selection or "[]"),
            "generated_at": generated, "elapsed_seconds": elapsed, "dbt_version": version,
            "vars": json.loads(variables or "{}"), "vars_given": json.loads(given or "{}"),
            "engine": json.loads(engine or "{}"), "manifest": json.loads(manifest or "{}"), "target_dir": target,
        }
    return {
        "runs": by_id,
        "last": runs[-1][0],
        "nodes": {name: {"unique_id": unique_id, "schema": schema, "status": status, "built_at": built_at,
                         "checksum": checksum, "invocation_id": invocation}
                  for name, unique_id, schema, status, built_at, checksum, invocation in nodes},
    }
