"""dbt's own cost for a graph of this project's shape: the fixed cost every `lfh build` pays before any SQL of ours.

A generated dbt project with as many seeds, models and data tests as this one (counted from this project's
manifest.json, so run `lfh build` once first) in which every node does nothing: each seed one row, each model
`select 1` or a select from the model before it, each data test a not_null / unique / accepted_values /
relationships test on one row. `dbt build` of it with a full parse (no partial_parse.msgpack: a fresh clone's
first build) and again with the parse reused, each in its own process (wall, CPU with dbt's children, peak),
alternating with `lfh build` of this project on a small simulated corpus (--stories-per-prompt, default 1:
300 stories) without dbt's unit tests, from the same raw tables each round, with a full parse and with the
parse reused; and `dbt parse` of this project alone (dbt's start and its parse, no node run). The ratio of the
project's build to the trivial graph's is what our SQL, macros and bookkeeping add to dbt's own per-node cost.

Run: .venv/bin/python -m bench.bench_dbt_floor [--rounds 2] [--stories-per-prompt 1] [--workdir DIR] [--record]
Takes a few minutes; not part of `make test`.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from bench.stages import Stage, load, run_stage

PROJECT_ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = PROJECT_ROOT / "bench" / "results"
BIN = Path(sys.executable).parent
# the data tests, dealt round robin over the models: (column, test) as the yml writes them
TEST_KINDS = (("id", "not_null"), ("id", "unique"), ("v", "not_null"),
              ("v", "accepted_values:\n              arguments:\n                values: ['a']"),
              ("id", "relationships:\n              arguments:\n                to: ref('model_0')\n"
                     "                field: id"))
CHAIN = 5  # each model selects from the one before it, five deep, as the project's layers do


def project_shape(manifest_path: Path) -> dict[str, int]:
    """Seeds, models, data tests and unit tests of this project (its manifest)."""
    if not manifest_path.is_file():
        sys.exit(f"{manifest_path} not found: run `lfh build` once first (the bench counts the project's nodes)")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    shape = {"seed": 0, "model": 0, "test": 0}
    for node in manifest["nodes"].values():
        if node["resource_type"] in shape and node["package_name"] == manifest["metadata"].get("project_name",
                                                                                               node["package_name"]):
            shape[node["resource_type"]] += 1
    shape["unit_test"] = len(manifest.get("unit_tests") or {})
    return shape


def write_trivial_project(folder: Path, shape: dict[str, int]) -> None:
    """A dbt project of `shape`'s seeds, models and data tests, every node doing nothing."""
    (folder / "models").mkdir(parents=True)
    (folder / "seeds").mkdir()
    (folder / "dbt_project.yml").write_text("name: trivial\nversion: '1.0'\nprofile: trivial\n"
                                            "models:\n  trivial:\n    +materialized: table\n")
    (folder / "profiles.yml").write_text("trivial:\n  target: duckdb\n  outputs:\n    duckdb:\n      type: duckdb\n"
                                         "      path: trivial.duckdb\n      threads: 2\n")
    for index in range(shape["seed"]):
        (folder / "seeds" / f"seed_{index}.csv").write_text("id,v\n1,a\n")
    models = max(shape["model"], 1)
    tests: dict[int, dict[str, list[str]]] = {}
    for number in range(shape["test"]):
        column, test = TEST_KINDS[(number // models) % len(TEST_KINDS)]
        tests.setdefault(number % models, {}).setdefault(column, []).append(test)
    lines = ["version: 2", "models:"]
    for index in range(models):
        body = f"select * from {{{{ ref('model_{index - 1}') }}}}" if index % CHAIN else "select 1 as id, 'a' as v"
        (folder / "models" / f"model_{index}.sql").write_text(body + "\n")
        lines.append(f"  - name: model_{index}")
        if tests.get(index):
            lines.append("    columns:")
        for column, listed in tests.get(index, {}).items():
            lines += [f"      - name: {column}", "        data_tests:"]
            lines += [f"          - {test}" for test in listed]
    (folder / "models" / "schema.yml").write_text("\n".join(lines) + "\n")


def run_trivial(folder: Path, name: str, fresh_parse: bool) -> Stage:
    if fresh_parse:
        shutil.rmtree(folder / "target", ignore_errors=True)
    (folder / "trivial.duckdb").unlink(missing_ok=True)
    return run_stage(name, [str(BIN / "dbt"), "build", "--profiles-dir", ".", "--quiet"],
                     {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}, cwd=folder)


def make_raw(workdir: Path, stories_per_prompt: int) -> Path:
    raw = workdir / "raw_only.duckdb"
    environment = {**os.environ, "LFH_DB": str(raw)}
    landing = workdir / "landing"
    for arguments in (["lexicon"], ["simulate", "--stories-per-prompt", str(stories_per_prompt), "--out",
                                    str(landing)], ["ingest", str(landing)]):
        run_stage(f"setup: lfh {arguments[0]}", [str(BIN / "lfh"), *arguments], environment)
    return raw


def run_project(workdir: Path, raw: Path, name: str, fresh_parse: bool) -> Stage:
    target = workdir / "target-project"
    if fresh_parse:
        shutil.rmtree(target, ignore_errors=True)
    warehouse = workdir / "warehouse" / "lfh.duckdb"
    shutil.rmtree(warehouse.parent, ignore_errors=True)
    warehouse.parent.mkdir()
    shutil.copyfile(raw, warehouse)
    environment = {**os.environ, "LFH_DB": str(warehouse), "DBT_TARGET_PATH": str(target),
                   "DBT_EXCLUDE_RESOURCE_TYPES": "unit_test"}
    return run_stage(name, [str(BIN / "lfh"), "build"], environment)


def run_parse_only(workdir: Path, name: str, fresh_parse: bool) -> Stage:
    """dbt's start and its parse of this project, no node run: what every build of it pays before its first node."""
    target = workdir / "target-parse"
    if fresh_parse:
        shutil.rmtree(target, ignore_errors=True)
    environment = {**os.environ, "LFH_DB": "lfh.duckdb", "DBT_TARGET_PATH": str(target),
                   "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
    return run_stage(name, [str(BIN / "dbt"), "parse", "--project-dir", str(PROJECT_ROOT), "--profiles-dir",
                            str(PROJECT_ROOT), "--quiet"], environment, cwd=workdir)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--stories-per-prompt", type=int, default=1)
    parser.add_argument("--workdir", type=Path, default=None, help="default: a temporary folder (deleted after)")
    parser.add_argument("--record", action="store_true", help="append to bench/results/build-<date>.md")
    arguments = parser.parse_args()
    shape = project_shape(PROJECT_ROOT / "target" / "manifest.json")
    workdir = arguments.workdir or Path(tempfile.mkdtemp(prefix="lfh-dbt-floor-"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"project shape: {shape}; work folder {workdir}; {os.cpu_count()} cores; load {load()}")
    trivial = workdir / "trivial"
    shutil.rmtree(trivial, ignore_errors=True)
    write_trivial_project(trivial, shape)
    raw = make_raw(workdir, arguments.stories_per_prompt)
    stages: list[Stage] = []
    loads = [load()]
    for round_number in range(1, arguments.rounds + 1):
        for fresh in (True, False):
            parse = "full parse" if fresh else "parse reused"
            trivial_stage = run_trivial(trivial, f"trivial graph, {parse}, round {round_number}", fresh)
            stages.append(trivial_stage)
            stages.append(run_parse_only(workdir, f"this project, dbt parse only, {parse}, round {round_number}",
                                         fresh))
            stages.append(run_project(workdir, raw, f"this project, {parse}, round {round_number}", fresh))
        loads.append(load())
    results = json.loads((trivial / "target" / "run_results.json").read_text(encoding="utf-8"))
    kinds: dict[str, int] = {}
    for result in results["results"]:
        kind = result["unique_id"].split(".")[0]
        kinds[kind] = kinds.get(kind, 0) + 1
    width = max(len(stage.name) for stage in stages)
    lines = [f"## {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC: dbt's own floor (bench_dbt_floor)", "",
             f"project: {shape}; trivial graph built: {kinds}; project corpus: "
             f"{arguments.stories_per_prompt} stories per prompt, unit tests excluded; load (1/5 min) per round: "
             f"{' -> '.join(loads)}", "",
             f"| {'stage'.ljust(width)} | wall s | cpu s | peak MiB | cpu / trivial |",
             f"|{'-' * (width + 2)}|-------:|------:|---------:|--------------:|"]
    floor = stages[0]
    for stage in stages:
        if stage.name.startswith("trivial graph"):
            floor = stage  # the rows after it compare with it: the same round and parse
        lines.append(f"| {stage.name.ljust(width)} | {stage.wall:6.1f} | {stage.cpu:5.1f} | {stage.peak_mib:8.0f} | "
                     f"{stage.cpu / floor.cpu:13.2f} |")
    print("\n" + "\n".join(lines))
    if arguments.record:
        RESULTS_DIR.mkdir(exist_ok=True)
        path = RESULTS_DIR / f"build-{datetime.date.today():%Y-%m-%d}.md"
        with path.open("a", encoding="utf-8") as handle:
            handle.write("\n" + "\n".join(lines) + "\n")
        print(f"\nrecorded in {path.relative_to(PROJECT_ROOT)}")
    if arguments.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
