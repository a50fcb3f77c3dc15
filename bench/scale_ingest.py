"""The ingest scale point (docs/SCALE.md): `lfh ingest` of N stories and N label responses (one per story, as the
study's final labeling run) into a fresh warehouse, as its own process (wall time, CPU time and peak RSS from
wait4), then the same command again (unchanged files: skipped after checksumming).

point_ingest(workdir, stories, environment) -> Stage has the same shape as the build's points, so one scale
benchmark can run them all; bench/bench_ingest_scale.py runs the ingest points alone. Goals: peak RSS <= 2 GiB
at 5M stories; 5M in <= 10x the 500K time of the same run.

Input files are written in chunks by this process (the generator stays small) and deleted after the point
(about 1.1 GB per million stories, plus the warehouse).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import polars as pl

from bench.stages import Stage, run_stage
from lfh.identity import story_ids
from lfh.landing.catalog import known_queries

LFH = str(Path(sys.executable).parent / "lfh")
CHUNK_ROWS = 250_000
REPEAT_EVERY = 50
MODELS = ["gpt-3.5-turbo", "gpt-4", "claude-2", "Llama2-7B", "PaLM2"]
PARAGRAPH = ("the American student walked into the classroom, where the lights were bright and the lesson had "
             "already started. She opened her notebook, listened closely and, by the end of the term, her work "
             "was the best in the class. Her teacher told her parents that she had a gift, and she smiled. ") * 2
RESPONSE = '{"student name": "Maria Lopez", "student references": ["she", "her"], "student gender": "female"}'


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


def label_chunk(stories: pl.DataFrame, start: int) -> pl.DataFrame:
    """One label response per story, pointing at the story's content-derived id (a repeated story, each
    REPEAT_EVERY-th, is its text's second occurrence, whichever chunk the first one was in)."""
    repeated = [bool(i and i % REPEAT_EVERY == 0) for i in range(start, start + stories.height)]
    identified = stories.with_columns(
        pl.col("model").alias("model_canonical"), pl.col("text").alias("story_text"),
        pl.Series("occurrence", [2 if repeat else 1 for repeat in repeated], dtype=pl.Int32))
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
            label_chunk(chunk, start).write_ndjson(label_file)
    return stories_path, labels_path


def point_ingest(workdir: Path, stories: int, environment: dict[str, str] | None = None) -> Stage:
    """`lfh ingest` of `stories` stories and as many label responses into a fresh warehouse (the Stage returned),
    then the same command again (printed: it should only checksum)."""
    folder = workdir / f"ingest-{stories}"
    shutil.rmtree(folder, ignore_errors=True)
    try:
        print(f"  writing {stories:,} stories and label responses", flush=True)
        stories_path, labels_path = write_landing(folder / "landing", stories)
        size = sum(path.stat().st_size for path in (stories_path, labels_path)) / 2**20
        print(f"    input {size:,.0f} MiB", flush=True)
        environment = {**(environment or os.environ), "LFH_DB": str(folder / "warehouse" / "lfh.duckdb")}
        command = [LFH, "ingest", str(stories_path.parent), str(labels_path.parent)]
        first = run_stage(f"lfh ingest {stories:,}", command, environment)
        again = run_stage(f"lfh ingest {stories:,} again (unchanged)", command, environment)
        print(f"    again: {again.wall:.1f} s wall, {again.cpu:.1f} s cpu, peak {again.peak_mib:,.0f} MiB", flush=True)
        return first
    finally:
        shutil.rmtree(folder, ignore_errors=True)
