"""A built project's models run as plain SQL: each model's compiled SQL (dbt's target/compiled, from the build's
manifest) executed by DuckDB in dependency order in one connection, as `create or replace table|view ... as`,
then a checkpoint. No dbt: no start-up, parse, materialization macros, docs, tests or bookkeeping. What the SQL of
the rules costs by itself on this warehouse, to set beside the build (bench.bench_build runs it after each build).

Run: .venv/bin/python -m bench.sql_alone TARGET_DIR WAREHOUSE [--memory-limit SIZE] [--slowest 15]
WAREHOUSE must be a copy of a built warehouse (every model's inputs exist): its tables are replaced.
"""

from __future__ import annotations

import argparse
import graphlib
import json
import time
from pathlib import Path

import duckdb

from lfh.build.memory import memory_limit


def models_in_order(manifest: dict) -> list[dict]:
    """The project's models, each after every model it reads."""
    models = {key: node for key, node in manifest["nodes"].items() if node["resource_type"] == "model"}
    graph = {key: [parent for parent in node["depends_on"]["nodes"] if parent in models]
             for key, node in models.items()}
    return [models[key] for key in graphlib.TopologicalSorter(graph).static_order()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", type=Path, help="dbt's target folder of the build (manifest.json, compiled/)")
    parser.add_argument("warehouse", type=Path, help="a copy of the built warehouse")
    parser.add_argument("--memory-limit", default=memory_limit(),
                        help="DuckDB's memory_limit; default: the build's (LFH_MEMORY_LIMIT, else lfh's default)")
    parser.add_argument("--slowest", type=int, default=15, help="models listed, slowest first")
    options = parser.parse_args()

    manifest = json.loads((options.target / "manifest.json").read_text(encoding="utf-8"))
    connection = duckdb.connect(str(options.warehouse))
    connection.execute(f"set memory_limit = '{options.memory_limit}'")
    connection.execute("set preserve_insertion_order = false")  # as profiles.yml sets it for the build
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    for node in models_in_order(manifest):
        compiled = options.target / "compiled" / node["package_name"] / node["original_file_path"]
        kind = "view" if node["config"]["materialized"] == "view" else "table"
        relation = f'"{node["schema"]}"."{node["alias"]}"'
        before = time.perf_counter()
        connection.execute(f"create or replace {kind} {relation} as (\n{compiled.read_text(encoding='utf-8')}\n)")
        seconds[node["name"]] = time.perf_counter() - before
    connection.execute("checkpoint")
    total = time.perf_counter() - started
    print(f"{len(seconds)} models' SQL in {total:.1f} s (their statements {sum(seconds.values()):.1f} s, "
          f"the checkpoint the rest); slowest (s):")
    for name, spent in sorted(seconds.items(), key=lambda item: -item[1])[:options.slowest]:
        print(f"  {spent:6.2f}  {name}")


if __name__ == "__main__":
    main()
