"""Where published marts came from: the dbt runs the warehouse recorded (lfh.build.provenance), the baseline set and
the name lexicon. Never the checkout's shared target/ files for a DuckDB warehouse: another warehouse's build (or
any dbt command) rewrites them; only a Spark build, which records nothing in a warehouse, is read from them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import yaml

from lfh.build.provenance import recorded_runs

LEXICON_SCHEMA = "raw"
LEXICON_SUFFIX = "_first_names"
LEXICON_OTHER_TABLES = ("census_surnames",)  # the name tables that are not first names (docs/RACE_NAMES.md)
BASELINE_COLUMN = "baseline_set"


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _columns(connection: duckdb.DuckDBPyConnection, catalog: str, schema: str, table: str) -> set[str]:
    rows = connection.execute(
        "select column_name from duckdb_columns() where database_name = ? and schema_name = ? and table_name = ?",
        [catalog, schema, table],
    ).fetchall()
    return {name for (name,) in rows}


def _tables(connection: duckdb.DuckDBPyConnection, catalog: str) -> list[tuple[str, str]]:
    return connection.execute(
        "select table_schema, table_name from information_schema.tables where table_catalog = ? "
        "order by table_schema, table_name",
        [catalog],
    ).fetchall()


def warehouse_provenance(connection: duckdb.DuckDBPyConnection, catalog: str, marts_schema: str) -> dict[str, Any]:
    """Baseline sets found in the marts (with their sources from the baselines seed) and the lexicon tables."""
    tables = _tables(connection, catalog)
    baseline_sets: set[str] = set()
    for schema, table in tables:
        if schema == marts_schema and BASELINE_COLUMN in _columns(connection, catalog, schema, table):
            values = connection.execute(
                f"select distinct {BASELINE_COLUMN} from {_quote(catalog)}.{_quote(schema)}.{_quote(table)} "
                f"where {BASELINE_COLUMN} is not null"
            ).fetchall()
            baseline_sets.update(str(value) for (value,) in values)
    return {
        "baseline_sets": [
            {"name": name, "sources": _baseline_sources(connection, catalog, tables, name)}
            for name in sorted(baseline_sets)
        ],
        "lexicon": _lexicon(connection, catalog, tables),
        "dbt_record": recorded_runs(connection, catalog),
    }


def _baseline_sources(connection: duckdb.DuckDBPyConnection, catalog: str, tables: list[tuple[str, str]],
                      name: str) -> list[dict[str, Any]]:
    """Distinct (source, vintage) of the seed rows of one baseline set, when the seed is in the warehouse."""
    for schema, table in tables:
        if table != "baselines":
            continue
        columns = _columns(connection, catalog, schema, table)
        if not {BASELINE_COLUMN, "source", "vintage"} <= columns:
            continue
        relation = f"{_quote(catalog)}.{_quote(schema)}.{_quote(table)}"
        rows = connection.execute(
            f"select source, cast(vintage as varchar), count(*) from {relation} "
            f"where {BASELINE_COLUMN} = ? group by all order by all",
            [name],
        ).fetchall()
        return [{"source": source, "vintage": vintage, "rows": count} for source, vintage, count in rows]
    return []


def _lexicon(connection: duckdb.DuckDBPyConnection, catalog: str,
             tables: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """One entry per name table (raw.*_first_names, raw.census_surnames): its rows and the distinct source,
    vintage (and mode) it holds."""
    entries = []
    for schema, table in tables:
        if schema != LEXICON_SCHEMA or not (table.endswith(LEXICON_SUFFIX) or table in LEXICON_OTHER_TABLES):
            continue
        relation = f"{_quote(catalog)}.{_quote(schema)}.{_quote(table)}"
        columns = _columns(connection, catalog, schema, table)
        described = [column for column in ("source", "vintage", "mode") if column in columns]
        rows = connection.execute(f"select count(*) from {relation}").fetchone()[0]
        versions: list[dict[str, Any]] = []
        if described:
            selection = ", ".join(f"cast({_quote(column)} as varchar)" for column in described)
            for values in connection.execute(
                f"select {selection}, count(*) from {relation} group by all order by all"
            ).fetchall():
                versions.append({**dict(zip(described, values[:-1], strict=True)), "rows": values[-1]})
        entries.append({"table": f"{schema}.{table}", "rows": rows, "versions": versions})
    return entries


def _read_json(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc}); run dbt again to rewrite it") from exc


def project_vars(project_dir: Path) -> dict[str, Any]:
    path = project_dir / "dbt_project.yml"
    if not path.is_file():
        return {}
    loaded = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return dict(loaded.get("vars") or {})


def _mart_nodes(manifest: dict[str, Any], marts_schema: str) -> dict[str, dict[str, Any]]:
    """Relation name -> manifest node, for the models dbt materialized in the marts schema."""
    nodes = {}
    for node in manifest.get("nodes", {}).values():
        if node.get("resource_type") == "model" and node.get("schema") == marts_schema:
            nodes[node.get("alias") or node["name"]] = node
    return nodes


def _execute_completed_at(result: dict[str, Any]) -> str | None:
    for step in result.get("timing") or []:
        if step.get("name") == "execute":
            return step.get("completed_at")
    return None


def dbt_provenance(target_dir: Path, project_dir: Path, mart_names: list[str], marts_schema: str) -> dict[str, Any]:
    """What the dbt target folder says about the run that built each mart.

    run_results.json describes only the last dbt command; when that command did not build a mart (a later
    `dbt test` or `dbt docs generate`), the mart's run is recorded as unknown rather than guessed.
    """
    manifest = _read_json(target_dir / "manifest.json")
    run_results = _read_json(target_dir / "run_results.json")
    variables = project_vars(project_dir)
    run: dict[str, Any] | None = None
    results_by_id: dict[str, dict[str, Any]] = {}
    if run_results is not None:
        metadata = run_results.get("metadata", {})
        arguments = run_results.get("args", {})
        cli_vars = arguments.get("vars") or {}
        if isinstance(cli_vars, str):
            cli_vars = yaml.safe_load(cli_vars) or {}
        variables = {**variables, **cli_vars}
        run = {
            "invocation_id": metadata.get("invocation_id"),
            "command": arguments.get("which"),
            "generated_at": metadata.get("generated_at"),
            "elapsed_seconds": run_results.get("elapsed_time"),
            "dbt_version": metadata.get("dbt_version"),
            "vars_given": cli_vars,
            "select": arguments.get("select"),
        }
        results_by_id = {result["unique_id"]: result for result in run_results.get("results", [])}
    nodes = _mart_nodes(manifest, marts_schema) if manifest else {}
    marts: dict[str, Any] = {}
    for name in mart_names:
        node = nodes.get(name)
        result = results_by_id.get(node["unique_id"]) if node else None
        marts[name] = {
            "unique_id": node["unique_id"] if node else None,
            "checksum": (node.get("checksum") or {}).get("checksum") if node else None,
            "status": result.get("status") if result else None,
            "built_at": _execute_completed_at(result) if result else None,
            "invocation_id": run["invocation_id"] if (result and run) else None,
        }
    unrecorded = sorted(name for name, entry in marts.items() if entry["status"] is None)
    note = None
    if unrecorded:
        source = f"`dbt {run['command']}` ({run['invocation_id']})" if run else "no run_results.json"
        note = (f"{target_dir}/run_results.json holds {source}, which did not build {', '.join(unrecorded)}; "
                "run `lfh build` then `lfh publish` to record the run that built every mart")
    return {
        "target_dir": str(target_dir),
        "unrecorded_marts": unrecorded,
        "note": note,
        "manifest": None if manifest is None else {
            key: manifest.get("metadata", {}).get(key)
            for key in ("invocation_id", "generated_at", "dbt_version", "project_name", "adapter_type")
        },
        "last_run": run,
        "vars": variables,
        "marts": marts,
    }


def _run_entry(run: dict[str, Any]) -> dict[str, Any]:
    return {"invocation_id": run["invocation_id"], "command": run["command"], "generated_at": run["generated_at"],
            "elapsed_seconds": run["elapsed_seconds"], "dbt_version": run["dbt_version"],
            "vars_given": run["vars_given"], "select": run["select"], "engine": run["engine"]}


def recorded_provenance(record: dict[str, Any] | None, project_dir: Path, mart_names: list[str]) -> dict[str, Any]:
    """The manifest's dbt section from the warehouse's own record (lfh.build.provenance.recorded_runs): per mart
    the run that last built it; the vars of the last run that built a mart. Without a record (a warehouse built
    before builds recorded their runs, or by dbt alone) every mart is unrecorded and the note says what to run;
    the vars are then dbt_project.yml's, and say so."""
    runs = (record or {}).get("runs") or {}
    nodes = (record or {}).get("nodes") or {}
    marts: dict[str, Any] = {}
    for name in mart_names:
        node = nodes.get(name)
        marts[name] = {
            "unique_id": node["unique_id"] if node else None,
            "checksum": node["checksum"] if node else None,
            "status": node["status"] if node else None,
            "built_at": node["built_at"] if node else None,
            "invocation_id": node["invocation_id"] if node else None,
        }
    unrecorded = sorted(name for name, entry in marts.items() if entry["status"] is None)
    built_by = [entry["invocation_id"] for entry in marts.values() if entry["invocation_id"] in runs]
    last = runs.get(record["last"]) if record else None
    vars_run = runs[max(built_by, key=list(runs).index)] if built_by else last
    note = None
    if unrecorded:
        note = (("this warehouse records no `lfh build` run" if not runs else
                 f"the runs this warehouse recorded did not build {', '.join(unrecorded)}")
                + ": run `lfh build` then `lfh publish` to record the run that built every mart")
    return {
        "source": "the warehouse (meta.dbt_runs, meta.dbt_nodes)" if runs else None,
        "target_dir": vars_run["target_dir"] if vars_run else None,
        "unrecorded_marts": unrecorded,
        "note": note,
        "manifest": vars_run["manifest"] if vars_run else None,
        "last_run": _run_entry(last) if last else None,
        "vars": vars_run["vars"] if vars_run else project_vars(project_dir),
        "vars_from": f"run {vars_run['invocation_id']}" if vars_run else "dbt_project.yml (no run recorded)",
        # every run that built a published mart, with its own vars (a selection build leaves marts of two runs)
        "runs": {invocation: {**_run_entry(runs[invocation]), "vars": runs[invocation]["vars"]}
                 for invocation in sorted(set(built_by))},
        "marts": marts,
    }
