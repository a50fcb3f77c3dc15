"""The scale points of docs/SCALE.md, in one command: `lfh ingest` and `lfh build` on 500K and 5M stories under the
default memory limits, and the incremental step (1% new stories added to the largest warehouse, then `lfh build`
again).

Each point is one function (`point_build`, `point_incremental`; the ingest points sit beside them) that returns
the Stage it measured; every stage runs as its own process, so wall time, CPU time and peak RSS (max RSS of the
process and everything it started, from wait4) are its own. The corpora are simulated in chunks of at most 500K
stories (one `lfh simulate` per chunk, seeds differ), one label response per story, and landed with `lfh ingest`.
The simulator's short templated texts repeat across chunks (within a chunk a repeat is the text's next occurrence,
a story of its own; across chunks it would be the same story id again, and ingest would keep one: at 5M, a third
of the stories were lost that way), so each chunk's story ids are re-keyed with the chunk's seed, in the stories
and in their label responses alike (a given story_id is used as is: docs/CONTRACTS.md). The raw-only warehouse
of each size is kept so the builds start from the same state.
The ingest points are bench/scale_ingest.py's (distinct generated stories, one label response each, into a fresh
warehouse). After each build, dbt's run_results.json is kept in the work folder and the build's time is split by
node type, with its slowest nodes. Ratios printed: 5M/500K ingest time (goal <= 10x) and peak (goal <= 2 GiB),
5M/500K build time, build peak against the 4 GiB goal, and the incremental build's time against the full build of
the same warehouse (goal <= 10%).

Run (big: a work folder with tens of GB free; niced on a machine shared with other jobs):
    nice -n 10 .venv/bin/python -m bench.bench_scale --workdir DIR
Options: --sizes 500000 5000000, --increment 0.01, --reuse (keep raw warehouses already in --workdir),
--skip-ingest (build points only).
Takes tens of minutes at 5M; not part of `make test`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import shutil
import sys
import tempfile
from pathlib import Path

import duckdb
import polars as pl

from bench.scale_ingest import point_ingest
from bench.stages import Stage, run_stage
from lfh.build.memory import memory_limit
from lfh.paths import project_root
from lfh.simulate.config import load_config

LFH = str(Path(sys.executable).parent / "lfh")
CHUNK_STORIES = 500_000
GOAL_PEAK_MIB = 4 * 1024
GOAL_INCREMENTAL_SHARE = 0.10
GOAL_INGEST_PEAK_MIB = 2 * 1024
GOAL_INGEST_TIME_RATIO = 10.0


def per_prompt(stories: int) -> int:
    return max(1, math.ceil(stories / (100 * len(load_config().models))))


def rekey_chunk(out: Path, tag: str) -> None:
    """Give a simulated chunk's stories ids of their own: sha256(story_id, U+001F, tag), in stories/ and labels/."""
    for path in [*sorted((out / "stories").glob("*.jsonl")), *sorted((out / "labels").glob("*.jsonl"))]:
        frame = pl.read_ndjson(path, infer_schema_length=None)
        ids = [hashlib.sha256(f"{story_id}\x1f{tag}".encode()).hexdigest() for story_id in frame["story_id"]]
        frame.with_columns(pl.Series("story_id", ids, dtype=pl.String)).write_ndjson(path)


def simulate_and_ingest(stories: int, landing: Path, environment: dict[str, str], seed: int) -> None:
    """Land `stories` simulated stories (chunks of <= 500K) in the warehouse named by environment's LFH_DB."""
    remaining, chunk = stories, 0
    while remaining > 0:
        size = min(remaining, CHUNK_STORIES)
        out = landing / f"chunk{chunk:03d}"
        run_stage(f"setup: simulate {size:,} stories (seed {seed + chunk})",
                  [LFH, "simulate", "--out", str(out), "--stories-per-prompt", str(per_prompt(size)),
                   "--samples", "1", "--seed", str(seed + chunk)], environment)
        rekey_chunk(out, f"seed {seed + chunk}")
        run_stage("setup: lfh ingest", [LFH, "ingest", str(out / "stories"), str(out / "labels")], environment)
        shutil.rmtree(out, ignore_errors=True)
        remaining -= size
        chunk += 1


def raw_warehouse(workdir: Path, stories: int, environment: dict[str, str], reuse: bool) -> Path:
    """A raw-only warehouse of `stories` stories (made once, then copied for each build)."""
    raw = workdir / f"raw_{stories}.duckdb"
    if reuse and raw.exists():
        return raw
    scratch = workdir / f"making_{stories}" / "lfh.duckdb"
    scratch.parent.mkdir(parents=True, exist_ok=True)
    scratch.unlink(missing_ok=True)
    env = {**environment, "LFH_DB": str(scratch)}
    run_stage("setup: lfh lexicon", [LFH, "lexicon"], env)
    simulate_and_ingest(stories, workdir / "landing", env, seed=1000)
    shutil.move(scratch, raw)
    shutil.rmtree(scratch.parent, ignore_errors=True)
    return raw


def fresh_copy(raw: Path, workdir: Path) -> Path:
    target = workdir / "warehouse" / "lfh.duckdb"
    shutil.rmtree(target.parent, ignore_errors=True)
    target.parent.mkdir(parents=True)
    shutil.copyfile(raw, target)
    return target


def landed_stories(warehouse: Path) -> int:
    """Stories actually landed (simulated chunks share some stories: ingest keeps one of each)."""
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        return connection.execute("select count(*) from raw.stories").fetchone()[0]


def node_times(workdir: Path, label: str) -> None:
    """Keep dbt's run_results.json of the build just run (as run_results_<label>.json) and print where its time
    went: dbt's own elapsed time, the node time summed by type, and the slowest nodes."""
    results_path = project_root() / "target" / "run_results.json"
    if not results_path.exists():
        return
    kept = workdir / f"run_results_{label}.json"
    shutil.copyfile(results_path, kept)
    document = json.loads(kept.read_text())
    results = document["results"]
    by_type: dict[str, tuple[int, float]] = {}
    for result in results:
        kind = result["unique_id"].split(".")[0]
        count, seconds = by_type.get(kind, (0, 0.0))
        by_type[kind] = (count + 1, seconds + result["execution_time"])
    kinds = ", ".join(f"{kind} {count} / {seconds:.1f}s" for kind, (count, seconds) in sorted(by_type.items()))
    print(f"    dbt run {document['elapsed_time']:.1f}s (2 threads); node time by type: {kinds}")
    for result in sorted(results, key=lambda result: -result["execution_time"])[:8]:
        print(f"      {result['execution_time']:7.1f}s {result['unique_id'].split('.', 2)[-1][:90]}")


def point_build(workdir: Path, stories: int, environment: dict[str, str], reuse: bool) -> Stage:
    """`lfh build` from a raw-only warehouse of `stories` stories, default memory limit."""
    warehouse = fresh_copy(raw_warehouse(workdir, stories, environment, reuse), workdir)
    landed = landed_stories(warehouse)
    stage = run_stage(f"lfh build, {landed:,} stories", [LFH, "build"], {**environment, "LFH_DB": str(warehouse)})
    node_times(workdir, f"build_{stories}")
    return stage


def point_incremental(workdir: Path, stories: int, share: float, environment: dict[str, str]) -> Stage:
    """After point_build(stories) left its built warehouse: land share x stories new stories, `lfh build` again."""
    warehouse = workdir / "warehouse" / "lfh.duckdb"
    env = {**environment, "LFH_DB": str(warehouse)}
    before = landed_stories(warehouse)
    simulate_and_ingest(max(1, int(before * share)), workdir / "landing_increment", env, seed=9000)
    added = landed_stories(warehouse) - before
    stage = run_stage(f"lfh build after +{added:,} stories", [LFH, "build"], env)
    node_times(workdir, f"incremental_{stories}")
    return stage


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[500_000, 5_000_000])
    parser.add_argument("--increment", type=float, default=0.01, help="share of new stories for the incremental step")
    parser.add_argument("--workdir", type=Path, default=None,
                        help="scratch folder (GBs at 5M); default: a temporary folder, deleted after")
    parser.add_argument("--reuse", action="store_true", help="reuse raw_<size>.duckdb already in --workdir")
    parser.add_argument("--setup-only", action="store_true", help="only make the raw warehouses (then --reuse)")
    parser.add_argument("--skip-ingest", action="store_true", help="build points only (no lfh ingest points)")
    options = parser.parse_args()
    temporary = options.workdir is None
    options.workdir = options.workdir or Path(tempfile.mkdtemp(prefix="lfh-bench-scale-"))
    options.workdir.mkdir(parents=True, exist_ok=True)
    try:
        report(options)
    finally:
        if temporary:
            shutil.rmtree(options.workdir, ignore_errors=True)


def report(options: argparse.Namespace) -> None:
    environment = {key: value for key, value in os.environ.items() if key != "LFH_MEMORY_LIMIT"}
    print(f"work folder {options.workdir}; {os.cpu_count()} cores; default memory limit {memory_limit()}", flush=True)

    if options.setup_only:
        for size in options.sizes:
            print(f"raw warehouse: {raw_warehouse(options.workdir, size, environment, options.reuse)}")
        return
    ingests = [] if options.skip_ingest else [point_ingest(options.workdir, size, environment)
                                              for size in options.sizes]
    builds = [point_build(options.workdir, size, environment, options.reuse) for size in options.sizes]
    incremental = point_incremental(options.workdir, options.sizes[-1], options.increment, environment)

    print(f"\n{'stage':40} {'wall s':>8} {'cpu s':>8} {'peak MiB':>9}")
    for stage in [*ingests, *builds, incremental]:
        print(f"{stage.name:40} {stage.wall:8.1f} {stage.cpu:8.1f} {stage.peak_mib:9.0f}")
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.1f}")
    print("\nratios")
    for small, large, size_small, size_large in zip(ingests, ingests[1:], options.sizes, options.sizes[1:],
                                                    strict=False):
        ratio = large.wall / small.wall
        verdict = "ok" if ratio <= GOAL_INGEST_TIME_RATIO else "OVER"
        print(f"  ingest time {size_large:,} / {size_small:,} stories: {ratio:5.2f}x wall, "
              f"{large.cpu / small.cpu:5.2f}x cpu for {size_large / size_small:.0f}x the data "
              f"(goal <= {GOAL_INGEST_TIME_RATIO:.0f}x: {verdict})")
    for size, stage in zip(options.sizes, ingests, strict=False):
        verdict = "ok" if stage.peak_mib <= GOAL_INGEST_PEAK_MIB else "OVER"
        print(f"  ingest peak at {size:,}: {stage.peak_mib / 1024:.2f} GiB (goal <= 2 GiB: {verdict})")
    for small, large, size_small, size_large in zip(builds, builds[1:], options.sizes, options.sizes[1:],
                                                    strict=False):
        print(f"  build time {size_large:,} / {size_small:,} stories: {large.wall / small.wall:5.2f}x "
              f"for {size_large / size_small:.0f}x the data")
    for size, stage in zip(options.sizes, builds, strict=True):
        verdict = "ok" if stage.peak_mib <= GOAL_PEAK_MIB else "OVER"
        print(f"  build peak at {size:,}: {stage.peak_mib / 1024:.2f} GiB (goal <= 4 GiB: {verdict})")
    share = incremental.wall / builds[-1].wall
    verdict = "ok" if share <= GOAL_INCREMENTAL_SHARE else "OVER"
    print(f"  incremental build / full build at {options.sizes[-1]:,}: {share:.1%} wall, "
          f"{incremental.cpu / builds[-1].cpu:.1%} cpu (goal <= {GOAL_INCREMENTAL_SHARE:.0%}: {verdict})")


if __name__ == "__main__":
    main()
