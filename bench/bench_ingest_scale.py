"""`lfh ingest` at 500,000 and 5,000,000 stories in one run (bench/scale_ingest.py): prints each point's wall
time, CPU time and peak RSS, and the 5M/500K ratios against the scale goals of docs/SCALE.md (peak <= 2 GiB;
time <= 10x).

Big: give it a work folder with room (about 12 GB at 5M); on a machine shared with other jobs, run it niced:
    nice -n 10 .venv/bin/python -m bench.bench_ingest_scale --workdir DIR
Run: .venv/bin/python -m bench.bench_ingest_scale [--stories 500000,5000000] [--workdir DIR]
Takes tens of minutes at 5M on 2 cores; not part of `make test`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path

from bench.scale_ingest import point_ingest
from bench.stages import Stage

GOAL_PEAK_MIB = 2 * 1024
GOAL_TIME_RATIO = 10.0


def report(points: list[tuple[int, Stage]]) -> None:
    print(f"\n{'stage':32} {'stories':>10} {'wall s':>8} {'cpu s':>8} {'peak MiB':>9}")
    for stories, stage in points:
        print(f"{stage.name:32} {stories:>10,} {stage.wall:8.1f} {stage.cpu:8.1f} {stage.peak_mib:9.0f}")
    if len(points) < 2:
        return
    (small, first), (large, last) = min(points, key=lambda p: p[0]), max(points, key=lambda p: p[0])
    print(f"\n{large:,} vs {small:,} stories ({large / small:.0f}x the data): wall {last.wall / first.wall:.1f}x, "
          f"cpu {last.cpu / first.cpu:.1f}x (goal <= {GOAL_TIME_RATIO:.0f}x); peak {first.peak_mib:,.0f} -> "
          f"{last.peak_mib:,.0f} MiB (goal <= {GOAL_PEAK_MIB:,} MiB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stories", default="500000,5000000", help="comma-separated sizes")
    parser.add_argument("--workdir", type=Path, default=None, help="default: a temporary folder (deleted after)")
    options = parser.parse_args()
    sizes = [int(size) for size in options.stories.split(",")]
    workdir = options.workdir or Path(tempfile.mkdtemp(prefix="lfh-bench-ingest-scale-"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"work folder {workdir}; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}", flush=True)
    try:
        report([(size, point_ingest(workdir, size)) for size in sizes])
        print(f"load average after: {os.getloadavg()[0]:.1f}")
    finally:
        if options.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
