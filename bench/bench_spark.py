"""The whole build on DuckDB and on local Spark, in the same run, from the same landed Parquet files
(docs/SCALE_OUT.md).

`lfh lexicon --parquet-dir`, `lfh simulate --stories-per-prompt 1667 --samples 1` (500,100 stories, one label
response each, as the study's final labeling run and bench/bench_scale.py) and `lfh ingest --parquet-dir` land the
raw tables once (skipped with --reuse when the work folder holds them). Then, each as its own process: `lfh build
--parquet-dir` on DuckDB (a fresh warehouse) and `lfh build --target spark --parquet-dir` on local Spark (a fresh
warehouse folder and metastore, driver memory capped by --driver-memory). Prints wall time, CPU time and peak memory
of each, and Spark's ratios to DuckDB. Peak memory is sampled from /proc over the whole process tree (dbt, the
pyspark gateway and the JVM together), because the JVM is not a waited-for child whose max RSS wait4 would report.

Run: nice -n 10 .venv/bin/python -m bench.bench_spark [--stories-per-prompt 1667]
     [--samples 1] [--workdir DIR] [--reuse] [--driver-memory 4g] [--skip-tests]
Takes long (the Spark build of 500,000 stories: tens of minutes on 2 cores); not part of `make test`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class Measured:
    name: str
    wall: float
    cpu: float
    peak_mib: float


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="ascii", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        tree.setdefault(int(fields[1]), []).append(int(entry.name))
    return tree


def _tree_rss(root: int) -> tuple[int, float]:
    """(resident bytes of root and all its descendants, their CPU seconds so far)."""
    tree = _children()
    pending, total, cpu = [root], 0, 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    while pending:
        pid = pending.pop()
        pending.extend(tree.get(pid, []))
        try:
            with open(f"/proc/{pid}/statm", encoding="ascii") as handle:
                total += int(handle.read().split()[1]) * PAGE_SIZE
            with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            cpu += (int(fields[11]) + int(fields[12])) / ticks
        except OSError:
            continue
    return total, cpu


def run_measured(name: str, command: list[str], environment: dict[str, str], log: Path) -> Measured:
    print(f"  {name}", flush=True)
    started = time.perf_counter()
    with open(log, "w", encoding="utf-8") as output:
        process = subprocess.Popen(command, env=environment, stdout=output, stderr=subprocess.STDOUT,
                                   cwd=PROJECT_ROOT)
        peak = [0]
        cpu_seen = [0.0]
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                rss, cpu = _tree_rss(process.pid)
                peak[0] = max(peak[0], rss)
                cpu_seen[0] = max(cpu_seen[0], cpu)
                done.wait(0.5)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _pid, status, usage = os.wait4(process.pid, 0)
        done.set()
        sampler.join()
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{name} failed; its output: {log}\n" + log.read_text(encoding="utf-8")[-3000:])
    cpu = max(usage.ru_utime + usage.ru_stime, cpu_seen[0])
    return Measured(name, wall, cpu, peak[0] / 2**20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stories-per-prompt", type=int, default=1667, help="x 100 prompts x 3 models")
    parser.add_argument("--samples", type=int, default=1, help="label responses per story")
    parser.add_argument("--workdir", type=Path, default=None, help="default: a temporary folder (deleted after)")
    parser.add_argument("--reuse", action="store_true", help="reuse the landed Parquet already in --workdir")
    parser.add_argument("--driver-memory", default="4g", help="Spark driver memory (the JVM heap)")
    parser.add_argument("--skip-tests", action="store_true", help="lfh build --skip-tests on both engines")
    options = parser.parse_args()

    workdir = options.workdir or Path(tempfile.mkdtemp(prefix="lfh-bench-spark-"))
    workdir.mkdir(parents=True, exist_ok=True)
    parquet_dir = workdir / "raw_parquet"
    lfh = str(Path(sys.executable).parent / "lfh")
    environment = {**os.environ, "LFH_DB": str(workdir / "duckdb" / "lfh.duckdb"),
                   "LFH_SPARK_DIR": str(workdir / "spark"), "LFH_SPARK_DRIVER_MEMORY": options.driver_memory}
    print(f"work folder {workdir}; {os.cpu_count()} cores; Spark driver memory {options.driver_memory}", flush=True)
    try:
        if not (options.reuse and (parquet_dir / "label_responses").is_dir()):
            shutil.rmtree(parquet_dir, ignore_errors=True)
            landing = workdir / "landing"
            setup_env = {**environment, "LFH_DB": str(workdir / "setup.duckdb")}
            for name, command in [
                ("setup: lfh lexicon (warehouse, for simulate)", [lfh, "lexicon"]),
                ("setup: lfh lexicon --parquet-dir", [lfh, "lexicon", "--parquet-dir", str(parquet_dir)]),
                ("setup: lfh simulate", [lfh, "simulate", "--out", str(landing), "--stories-per-prompt",
                                         str(options.stories_per_prompt), "--samples", str(options.samples)]),
                ("setup: lfh ingest --parquet-dir", [lfh, "ingest", str(landing / "stories"), str(landing / "labels"),
                                                     "--parquet-dir", str(parquet_dir)]),
            ]:
                run_measured(name, command, setup_env, workdir / "setup.log")
            shutil.rmtree(landing, ignore_errors=True)
            (workdir / "setup.duckdb").unlink(missing_ok=True)
        landed_mib = sum(f.stat().st_size for f in parquet_dir.rglob("*.parquet")) / 2**20
        skip = ["--skip-tests"] if options.skip_tests else []
        shutil.rmtree(workdir / "duckdb", ignore_errors=True)
        shutil.rmtree(workdir / "spark", ignore_errors=True)
        duck = run_measured("lfh build (DuckDB)", [lfh, "build", "--parquet-dir", str(parquet_dir), *skip],
                            {**environment, "DBT_TARGET_PATH": str(workdir / "target_duckdb")},
                            workdir / "build_duckdb.log")
        spark = run_measured("lfh build --target spark (local Spark)",
                             [lfh, "build", "--target", "spark", "--parquet-dir", str(parquet_dir), *skip],
                             {**environment, "DBT_TARGET_PATH": str(workdir / "target_spark")},
                             workdir / "build_spark.log")
        print(f"\nlanded raw Parquet: {landed_mib:,.0f} MiB ({options.stories_per_prompt * 300:,} stories x "
              f"{options.samples} label responses)")
        print(f"{'stage':42} {'wall s':>8} {'cpu s':>8} {'peak MiB':>9} {'wall ratio':>11} {'cpu ratio':>10} "
              f"{'peak ratio':>11}")
        for stage in (duck, spark):
            print(f"{stage.name:42} {stage.wall:8.1f} {stage.cpu:8.1f} {stage.peak_mib:9.0f} "
                  f"{stage.wall / duck.wall:11.1f} {stage.cpu / duck.cpu:10.1f} {stage.peak_mib / duck.peak_mib:11.1f}")
        print(f"(ratios: Spark / DuckDB, measured in this run; load average now {os.getloadavg()[0]:.1f})")
    finally:
        if options.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
