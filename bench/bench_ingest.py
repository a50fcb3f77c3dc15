"""How fast `lfh ingest` lands the study's scale (500,000 stories) from JSON Lines and from Parquet.

Generates the files in a temporary folder, then times, in the same run:
- the floor: DuckDB reading the same file once into an in-memory table (create table as select * from read_...);
- `lfh ingest` logic (lfh.landing.ingest.ingest_paths) into a fresh warehouse file;
- a re-run of the same file: unchanged since its load, so skipped after checksumming it;
- a forced re-read of it (`--reread`): every row read, identified and found to be a duplicate.
Prints seconds and the ratio of each to the floor, and the load average (other jobs share the 2 cores).
Run: .venv/bin/python -m bench.bench_ingest [--rows N]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import duckdb
import polars as pl

from lfh.landing.catalog import known_queries
from lfh.landing.ingest import ingest_paths

PARAGRAPH = ("the American student walked into the classroom, where the lights were bright and the lesson had "
             "already started. She opened her notebook, listened closely and, by the end of the term, her work "
             "was the best in the class. Her teacher told her parents that she had a gift, and she smiled. ") * 2


def generate_stories(rows: int) -> pl.DataFrame:
    """Stories in the project's format; every 50th text repeats the previous one (identical generations)."""
    queries = sorted(known_queries())
    index = pl.int_range(rows, eager=True).alias("index")
    text_number = (index - (index % 50 == 0).cast(pl.Int64)).clip(lower_bound=0)
    return pl.DataFrame({
        "model": pl.Series(["gpt-3.5-turbo", "gpt-4", "claude-2", "Llama2-7B", "PaLM2"] * (rows // 5 + 1))[:rows],
        "query": pl.Series(queries * (rows // len(queries) + 1))[:rows],
        "subject": "student",
        "object": None,
        "text": "Story " + text_number.cast(pl.String) + ": " + PARAGRAPH,
        "time": "2024-05-01T10:00:00Z",
    })


def timed(action) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process, all threads): CPU shows the work when other jobs share cores."""
    wall, cpu = time.perf_counter(), time.process_time()
    action()
    return time.perf_counter() - wall, time.process_time() - cpu


def floor_seconds(path: Path) -> tuple[float, float]:
    reader = "read_parquet" if path.suffix == ".parquet" else "read_json_auto"
    connection = duckdb.connect()
    try:
        return timed(lambda: connection.execute(f"create table floor as select * from {reader}(?)", [str(path)]))
    finally:
        connection.close()


def ingest_seconds(path: Path, database: Path, reread: bool = False) -> tuple[tuple[float, float], int, bool]:
    """(seconds, stories landed, whether the file was skipped as unchanged)."""
    results: list = []
    seconds = timed(lambda: results.extend(ingest_paths([path], database, reread=reread)[0]))
    (result,) = results
    assert result.error is None, result.error
    return seconds, result.counts.stories, result.unchanged_since is not None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=500_000)
    rows = parser.parse_args().rows
    with tempfile.TemporaryDirectory(prefix="lfh-bench-") as folder:
        root = Path(folder)
        stories = generate_stories(rows)
        jsonl, parquet = root / "stories.jsonl", root / "stories.parquet"
        stories.write_ndjson(jsonl)
        stories.write_parquet(parquet)
        print(f"{rows:,} stories; JSONL {jsonl.stat().st_size / 1e6:,.0f} MB, "
              f"Parquet {parquet.stat().st_size / 1e6:,.0f} MB")
        print("seconds as wall/cpu; ratio = wall / floor wall (cpu ratio in brackets); "
              f"load average before: {_load()}")
        print(f"{'file':<9}{'floor':>12}{'ingest':>14}{'ratio':>13}{'re-run':>13}{'ratio':>13}{'re-read':>14}"
              f"{'ratio':>13}{'landed':>10}")
        for path in (jsonl, parquet):
            database = root / f"{path.suffix[1:]}.duckdb"
            floor = floor_seconds(path)
            first, landed, _ = ingest_seconds(path, database)
            again, landed_again, skipped = ingest_seconds(path, database)
            reread, landed_reread, reread_skipped = ingest_seconds(path, database, reread=True)
            assert landed == rows and landed_again == landed_reread == 0, (landed, landed_again, landed_reread)
            assert skipped and not reread_skipped, (skipped, reread_skipped)
            print(f"{path.suffix[1:]:<9}{_pair(floor):>12}{_pair(first):>14}{_ratio(first, floor):>13}"
                  f"{_pair(again):>13}{_ratio(again, floor):>13}{_pair(reread):>14}{_ratio(reread, floor):>13}"
                  f"{landed:>10,}")
        print(f"load average after: {_load()}")


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def _pair(seconds: tuple[float, float]) -> str:
    return f"{seconds[0]:.2f}/{seconds[1]:.2f}"


def _ratio(seconds: tuple[float, float], floor: tuple[float, float]) -> str:
    return f"{seconds[0] / floor[0]:.1f} ({seconds[1] / floor[1]:.1f})"


if __name__ == "__main__":
    main()
