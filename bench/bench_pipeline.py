"""The whole pipeline at the study's scale: `lfh simulate` writes 500,000 stories (one label response each,
as the study's final labeling run), then `lfh ingest` and `lfh build` run on them. Each stage runs as its own
process, so its wall time, CPU time and peak memory (max RSS of the process and everything it started, from
wait4) are its own. The floor, measured in the same run on the same files: DuckDB reading the stories and the
label files once into tables (one process).

Run: .venv/bin/python -m bench.bench_pipeline [--stories 500000] [--format jsonl|parquet] [--workdir DIR] [--keep]
Takes minutes; not part of `make test`.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import sys
import tempfile
from pathlib import Path

from bench.stages import run_stage
from lfh.simulate.config import load_config

FLOOR_SCRIPT = """
import sys, duckdb
reader = "read_parquet" if sys.argv[1] == "parquet" else "read_json_auto"
connection = duckdb.connect()
for name, path in (("stories", sys.argv[2]), ("labels", sys.argv[3])):
    connection.execute(f"create table {name} as select * from {reader}(?)", [path])
    print(name, connection.execute(f"select count(*) from {name}").fetchone()[0])
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stories", type=int, default=500_000)
    parser.add_argument("--format", choices=["jsonl", "parquet"], default="jsonl")
    parser.add_argument("--workdir", type=Path, default=None, help="default: a temporary folder (deleted after)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    options = parser.parse_args()

    workdir = options.workdir or Path(tempfile.mkdtemp(prefix="lfh-bench-pipeline-"))
    workdir.mkdir(parents=True, exist_ok=True)
    lfh = str(Path(sys.executable).parent / "lfh")
    environment = {**os.environ, "LFH_DB": str(workdir / "warehouse" / "lfh.duckdb")}
    models = len(load_config().models)
    per_prompt = math.ceil(options.stories / (100 * models))
    landing = workdir / "landing"
    extension = "parquet" if options.format == "parquet" else "jsonl"
    print(f"work folder {workdir}; {per_prompt} stories per prompt x 100 prompts x {models} models = "
          f"{per_prompt * 100 * models:,} stories, 1 label response each, {options.format}; "
          f"{os.cpu_count()} cores", flush=True)
    try:
        print("  setup: lfh lexicon (cached wheels)", flush=True)
        run_stage("lexicon", [lfh, "lexicon"], environment)
        stages = []
        for name, command in (
            ("simulate", [lfh, "simulate", "--out", str(landing), "--stories-per-prompt", str(per_prompt),
                          "--samples", "1", "--format", options.format]),
            ("floor: duckdb reads the files once", [sys.executable, "-c", FLOOR_SCRIPT, options.format,
                                                    str(landing / "stories" / f"simulated_stories.{extension}"),
                                                    str(landing / "labels" / f"simulated_labels.{extension}")]),
            ("lfh ingest", [lfh, "ingest", str(landing / "stories"), str(landing / "labels")]),
            ("lfh build (dbt build)", [lfh, "build"]),
        ):
            stages.append(run_stage(name, command, environment))
        floor = stages[1]
        sizes = sum(path.stat().st_size for path in landing.rglob(f"*.{extension}")) / 2**20
        print(f"\ninput files: {sizes:,.0f} MiB")
        print(f"{'stage':38} {'wall s':>8} {'cpu s':>8} {'peak MiB':>9} {'wall/floor':>11} {'peak/floor':>11}")
        for stage in stages:
            print(f"{stage.name:38} {stage.wall:8.1f} {stage.cpu:8.1f} {stage.peak_mib:9.0f} "
                  f"{stage.wall / floor.wall:11.2f} {stage.peak_mib / floor.peak_mib:11.2f}")
    finally:
        if not options.keep and options.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
