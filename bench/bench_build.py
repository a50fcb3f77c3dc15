"""`lfh build` (dbt build of the whole project) at the study's scale: 500,000 stories with 5 label responses each.

`lfh lexicon`, `lfh simulate --stories-per-prompt 1667 --samples 5` and `lfh ingest` make the warehouse (skipped with
--reuse when the work folder already holds one); its raw tables are kept in a copy so every `lfh build` starts from
the same raw-only warehouse. The floor, measured in the same run on the same warehouse: one DuckDB process scanning
raw.label_responses (every column, the request texts included) and raw.stories once with a simple aggregate. Each
stage runs as its own process: wall time, CPU time and peak memory (max RSS, from wait4) are its own. Prints the
build's ratio to the floor and the slowest dbt nodes (target/run_results.json).

Run: .venv/bin/python -m bench.bench_build [--stories-per-prompt 1667] [--samples 5] [--workdir DIR] [--reuse]
     [--builds 1]
Takes minutes; not part of `make test`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from bench.stages import Stage
from bench.stages import run_stage as run_child_stage

PROJECT_ROOT = Path(__file__).resolve().parent.parent

FLOOR_SCRIPT = """
import sys, duckdb
connection = duckdb.connect(sys.argv[1], read_only=True)
print("label_responses", connection.execute(
    "select count(*), sum(length(request_text)), sum(length(response_text)), count(distinct story_id), "
    "max(sample_index), count(distinct labeler_model) from raw.label_responses").fetchone())
print("stories", connection.execute(
    "select count(*), sum(length(story_text)), sum(length(query)), count(distinct model) from raw.stories").fetchone())
"""


def run_stage(name: str, command: list[str], environment: dict[str, str]) -> Stage:
    """Stages run in the project folder: the build's slowest nodes are read from its target/."""
    return run_child_stage(name, command, environment, cwd=PROJECT_ROOT)


def make_warehouse(workdir: Path, stories_per_prompt: int, samples: int, environment: dict[str, str]) -> None:
    lfh = str(Path(sys.executable).parent / "lfh")
    landing = workdir / "landing"
    run_stage("setup: lfh lexicon", [lfh, "lexicon"], environment)
    run_stage("setup: lfh simulate", [lfh, "simulate", "--out", str(landing), "--stories-per-prompt",
                                      str(stories_per_prompt), "--samples", str(samples)], environment)
    run_stage("setup: lfh ingest", [lfh, "ingest", str(landing / "stories"), str(landing / "labels")], environment)
    shutil.rmtree(landing, ignore_errors=True)


def slowest_nodes(count: int) -> list[tuple[float, str]]:
    results = json.loads((PROJECT_ROOT / "target" / "run_results.json").read_text())["results"]
    timed = sorted(((result["execution_time"], result["unique_id"]) for result in results), reverse=True)
    return timed[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stories-per-prompt", type=int, default=1667, help="x 100 prompts x 3 models")
    parser.add_argument("--samples", type=int, default=5, help="label responses per story")
    parser.add_argument("--workdir", type=Path, default=None, help="default: a temporary folder (deleted after)")
    parser.add_argument("--reuse", action="store_true", help="reuse the raw warehouse already in --workdir")
    parser.add_argument("--builds", type=int, default=1, help="how many times to run lfh build (fresh each time)")
    options = parser.parse_args()

    workdir = options.workdir or Path(tempfile.mkdtemp(prefix="lfh-bench-build-"))
    workdir.mkdir(parents=True, exist_ok=True)
    warehouse = workdir / "warehouse" / "lfh.duckdb"
    raw_copy = workdir / "raw_only.duckdb"
    environment = {**os.environ, "LFH_DB": str(warehouse)}
    lfh = str(Path(sys.executable).parent / "lfh")
    print(f"work folder {workdir}; {os.cpu_count()} cores", flush=True)
    try:
        if not (options.reuse and raw_copy.exists()):
            warehouse.parent.mkdir(parents=True, exist_ok=True)
            warehouse.unlink(missing_ok=True)
            make_warehouse(workdir, options.stories_per_prompt, options.samples, environment)
            shutil.copyfile(warehouse, raw_copy)
        stages = []
        for build in range(options.builds):
            shutil.copyfile(raw_copy, warehouse)
            stages.append(run_stage("floor: duckdb scans the raw tables once",
                                    [sys.executable, "-c", FLOOR_SCRIPT, str(warehouse)], environment))
            stages.append(run_stage(f"lfh build (dbt build) #{build + 1}", [lfh, "build"], environment))
        print(f"\nwarehouse (raw tables only): {raw_copy.stat().st_size / 2**20:,.0f} MiB")
        print(f"{'stage':42} {'wall s':>8} {'cpu s':>8} {'peak MiB':>9} {'wall/floor':>11}")
        for floor, build in zip(stages[::2], stages[1::2], strict=True):
            for stage in (floor, build):
                print(f"{stage.name:42} {stage.wall:8.1f} {stage.cpu:8.1f} {stage.peak_mib:9.0f} "
                      f"{stage.wall / floor.wall:11.1f}")
        print("\nslowest dbt nodes of the last build (s):")
        for seconds, unique_id in slowest_nodes(10):
            print(f"  {seconds:7.1f}  {unique_id}")
    finally:
        if options.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
