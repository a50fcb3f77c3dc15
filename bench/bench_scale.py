"""Scale points: the same work at 500,000 and 5,000,000 stories, each stage its own process, so its wall time,
CPU time and peak memory (max RSS from wait4) are its own. Prints each point and the ratios between them.

Points (one function each, so more can be added: the build and the incremental build use the same harness):
- ingest_point: `lfh ingest` of a stories file and a label-responses file (one response per story, as the
  study's final labeling run) into a fresh warehouse; then the same command again (unchanged files: skipped
  after checksumming). Goals (issue 12): peak RSS <= 2 GiB at 5M; 5M in <= 10x the 500K time of the same run.

Input files are written in chunks by this process (the generator itself stays small), in a scratch folder that
is deleted after each point (use --workdir on a disk with room: about 1.1 GB per million stories, plus the
warehouse). Big runs on a shared machine: `flock /work/coord/bigjob.lock nice -n 10 .venv/bin/python -m
bench.bench_scale`.

Run: .venv/bin/python -m bench.bench_scale [--stories 500000,5000000] [--workdir DIR]
Takes minutes; not part of `make test`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from bench.stages import Stage, run_stage
from lfh.identity import story_ids
from lfh.landing.catalog import known_queries

LFH = str(Path(sys.executable).parent / "lfh")
CHUNK_ROWS = 250_000  # a multiple of REPEAT_EVERY, so repeated texts stay within a chunk
REPEAT_EVERY = 50
MODELS = ["gpt-3.5-turbo", "gpt-4", "claude-2", "Llama2-7B", "PaLM2"]
PARAGRAPH = ("the American student walked into the classroom, where the lights were bright and the lesson had "
             "already started. She opened her notebook, listened closely and, by the end of the term, her work "
             "was the best in the class. Her teacher told her parents that she had a gift, and she smiled. ") * 2
RESPONSE = '{"student name": "Maria Lopez", "student references": ["she", "her"], "student gender": "female"}'


@dataclass(frozen=True)
class Point:
    """One measured point: its label, the size it ran at, and its stages."""

    name: str
    stories: int
    stages: list[Stage]


def story_chunk(start: int, rows: int, queries: list[str]) -> pl.DataFrame:
    """Stories in the project's format; every REPEAT_EVERY-th story repeats the previous one (an identical
    generation, so occurrence numbers are exercised)."""
    source = [i - 1 if i and i % REPEAT_EVERY == 0 else i for i in range(start, start + rows)]
    number = pl.Series(source, dtype=pl.Int64)
    return pl.DataFrame({"model": [MODELS[i % len(MODELS)] for i in source],
                         "query": [queries[i % len(queries)] for i in source],
                         "subject": "student", "object": None,
                         "text": "Story " + number.cast(pl.String) + ": " + PARAGRAPH,
                         "time": "2024-05-01T10:00:00Z"})


def label_chunk(stories: pl.DataFrame) -> pl.DataFrame:
    """One label response per story, pointing at the story's content-derived id."""
    identified = stories.with_columns(
        pl.col("model").alias("model_canonical"), pl.col("text").alias("story_text"),
        pl.int_range(1, pl.len() + 1, dtype=pl.Int32).over("model", "query", "text").alias("occurrence"))
    return pl.DataFrame({
        "story_id": story_ids(identified), "labeler_model": "gpt-4o-mini", "prompt_version": "method-v1",
        "request_text": "In the following story, name the student and list their references.",
        "sample_index": 0, "response_text": RESPONSE, "time": "2024-05-02T10:00:00Z",
        "prompt_tokens": 410, "completion_tokens": 31,
    })


def write_landing(folder: Path, stories: int) -> tuple[Path, Path]:
    """stories.jsonl and labels.jsonl with `stories` rows each, written chunk by chunk."""
    folder.mkdir(parents=True, exist_ok=True)
    queries = sorted(known_queries())
    stories_path, labels_path = folder / "stories" / "stories.jsonl", folder / "labels" / "labels.jsonl"
    stories_path.parent.mkdir(exist_ok=True)
    labels_path.parent.mkdir(exist_ok=True)
    with open(stories_path, "wb") as story_file, open(labels_path, "wb") as label_file:
        for start in range(0, stories, CHUNK_ROWS):
            chunk = story_chunk(start, min(CHUNK_ROWS, stories - start), queries)
            chunk.write_ndjson(story_file)
            label_chunk(chunk).write_ndjson(label_file)
    return stories_path, labels_path


def ingest_point(workdir: Path, stories: int) -> Point:
    """`lfh ingest` of `stories` stories and as many label responses into a fresh warehouse, then again."""
    folder = workdir / f"ingest-{stories}"
    shutil.rmtree(folder, ignore_errors=True)
    try:
        print(f"  writing {stories:,} stories and label responses", flush=True)
        stories_path, labels_path = write_landing(folder / "landing", stories)
        environment = {**os.environ, "LFH_DB": str(folder / "warehouse" / "lfh.duckdb")}
        command = [LFH, "ingest", str(stories_path.parent), str(labels_path.parent)]
        first = run_stage(f"lfh ingest {stories:,}", command, environment)
        again = run_stage(f"lfh ingest {stories:,} again (unchanged)", command, environment)
        size = sum(path.stat().st_size for path in (stories_path, labels_path)) / 2**20
        print(f"    input {size:,.0f} MiB", flush=True)
        return Point("ingest", stories, [first, again])
    finally:
        shutil.rmtree(folder, ignore_errors=True)


POINTS: dict[str, Callable[[Path, int], Point]] = {"ingest": ingest_point}


def report(points: list[Point]) -> None:
    print(f"\n{'stage':44} {'stories':>10} {'wall s':>8} {'cpu s':>8} {'peak MiB':>9}")
    for point in points:
        for stage in point.stages:
            print(f"{stage.name:44} {point.stories:>10,} {stage.wall:8.1f} {stage.cpu:8.1f} {stage.peak_mib:9.0f}")
    by_name: dict[str, list[Point]] = {}
    for point in points:
        by_name.setdefault(point.name, []).append(point)
    for name, runs in by_name.items():
        if len(runs) < 2:
            continue
        small, large = min(runs, key=lambda p: p.stories), max(runs, key=lambda p: p.stories)
        size_ratio = large.stories / small.stories
        wall_ratio = large.stages[0].wall / small.stages[0].wall
        cpu_ratio = large.stages[0].cpu / small.stages[0].cpu
        print(f"\n{name}: {large.stories:,} vs {small.stories:,} stories ({size_ratio:.0f}x the data): wall "
              f"{wall_ratio:.1f}x, cpu {cpu_ratio:.1f}x; peak {small.stages[0].peak_mib:,.0f} -> "
              f"{large.stages[0].peak_mib:,.0f} MiB ({large.stages[0].peak_mib / 1024:.2f} GiB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stories", default="500000,5000000", help="comma-separated sizes")
    parser.add_argument("--points", default=",".join(POINTS), help=f"comma-separated, of {', '.join(POINTS)}")
    parser.add_argument("--workdir", type=Path, default=None, help="default: a temporary folder (deleted after)")
    options = parser.parse_args()
    sizes = [int(size) for size in options.stories.split(",")]
    workdir = options.workdir or Path(tempfile.mkdtemp(prefix="lfh-bench-scale-"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"work folder {workdir}; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}", flush=True)
    try:
        points = [POINTS[name](workdir, size) for name in options.points.split(",") for size in sizes]
        report(points)
        print(f"load average after: {os.getloadavg()[0]:.1f}")
    finally:
        if options.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
