"""Benchmark `lfh label` against the local OpenAI-compatible server (tests/openai_server.py, own process).

1. Throughput: with latency L per request and concurrency C the ceiling is C / L requests per second; the
   measured rate is printed with its ratio to that ceiling (the baseline, computed in the same run).
2. Memory: label many tiny stories from DuckDB raw.stories with a short latency, sampling the labeler's RSS;
   then the same with a tenth of the stories. Peak RSS of the long run / peak RSS of the short run is printed:
   near 1 means memory does not grow with the run.

    .venv/bin/python bench/bench_label.py [--stories 500000] [--latency 0.05] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
LFH = str(Path(sys.executable).parent / "lfh")
QUERY = "Write a story, 100 words or less, of an American doctor who works an overtime shift at the ICU."


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    server = subprocess.Popen([sys.executable, str(ROOT / "tests" / "openai_server.py"), "--latency", str(latency),
                               "--no-record"], stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    return server, server.stdout.readline().strip()


def make_warehouse(path: Path, stories: int) -> None:
    with duckdb.connect(str(path)) as connection:
        connection.execute("create schema raw")
        connection.execute(
            "create table raw.stories as select 'b' || lpad(cast(i as varchar), 7, '0') as story_id, "
            f"'{QUERY}' as query, 'doctor' as subject, null::varchar as object, "
            "'Ana ' || i || ' worked. She smiled.' as story_text from range(?) t(i)", [stories])


def models_file(path: Path, base_url: str, concurrency: int) -> Path:
    path.write_text(f'[models.lab]\nmodel = "fake-lab"\nbase_url = "{base_url}"\napi_key_env = "BENCH_KEY"\n'
                    f"concurrency = {concurrency}\nmax_tokens = 50\nbackoff_base_seconds = 0.01\n", encoding="utf-8")
    return path


def rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except FileNotFoundError:
        pass
    return 0


def run_label(work: Path, base_url: str, stories: int, concurrency: int,
              sample_every: float = 0.5) -> tuple[float, list[tuple[float, int]], int]:
    """(seconds spent labeling, RSS samples (seconds, KiB), labels written). Import/start time is excluded by
    timing from the first label line."""
    work.mkdir(parents=True, exist_ok=True)
    database = work / "lfh.duckdb"
    make_warehouse(database, stories)
    landing = work / "landing"
    output = landing / "labels" / "label-lab-method-v1.jsonl"
    environment = {**os.environ, "LFH_DB": str(database), "BENCH_KEY": "bench-key"}
    process = subprocess.Popen([LFH, "label", "--models", str(models_file(work / "m.toml", base_url, concurrency)),
                                "--labeler", "lab", "--out", str(landing), "--no-include-landing"],
                               env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    started = time.monotonic()
    samples: list[tuple[float, int]] = []
    first_line = None
    while process.poll() is None:
        now = time.monotonic()
        if first_line is None and output.exists() and output.stat().st_size:
            first_line = now
        samples.append((now - started, rss_kib(process.pid)))
        time.sleep(sample_every)
    if process.returncode:
        raise SystemExit(f"lfh label failed with exit {process.returncode}")
    finished = time.monotonic()
    written = output.read_bytes().count(b"\n")
    return finished - (first_line or started), samples, written


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--stories", type=int, default=200_000, help="stories for the memory run (study: 500000)")
    parser.add_argument("--throughput-stories", type=int, default=3000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--memory-latency", type=float, default=0.0)
    parser.add_argument("--memory-concurrency", type=int, default=32)
    arguments = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-label-") as folder:
        work = Path(folder)
        server, base_url = start_server(arguments.latency)
        try:
            seconds, _, written = run_label(work / "throughput", base_url, arguments.throughput_stories,
                                            arguments.concurrency)
        finally:
            server.kill()
        ceiling = arguments.concurrency / arguments.latency
        rate = written / seconds
        print(f"throughput: {written} labels in {seconds:.2f} s = {rate:.0f} req/s; ceiling concurrency/latency = "
              f"{arguments.concurrency}/{arguments.latency} = {ceiling:.0f} req/s; ratio {rate / ceiling:.2f}")

        server, base_url = start_server(0.0)
        try:
            zero_seconds, _, zero_written = run_label(work / "capacity", base_url, arguments.throughput_stories,
                                                      arguments.concurrency)
        finally:
            server.kill()
        print(f"client capacity (zero latency, same machine as the server): {zero_written / zero_seconds:.0f} req/s; "
              "a ceiling above this is CPU-bound, not latency-bound")

        server, base_url = start_server(arguments.memory_latency)
        try:
            short_n = max(1, arguments.stories // 10)
            short_seconds, short_rss, short_written = run_label(work / "memory-short", base_url, short_n,
                                                                arguments.memory_concurrency)
            long_seconds, long_rss, long_written = run_label(work / "memory-long", base_url, arguments.stories,
                                                             arguments.memory_concurrency)
        finally:
            server.kill()
        short_peak = max(kib for _, kib in short_rss)
        long_peak = max(kib for _, kib in long_rss)
        print(f"memory: short run {short_written:,} labels in {short_seconds:.1f} s, "
              f"peak RSS {short_peak / 1024:.0f} MiB")
        print(f"memory: long run {long_written:,} labels in {long_seconds:.1f} s "
              f"({long_written / long_seconds:.0f} req/s), peak RSS {long_peak / 1024:.0f} MiB")
        quarter = [kib for _, kib in long_rss[len(long_rss) // 4: len(long_rss) // 2]] or [long_peak]
        print(f"memory: RSS over the long run (MiB) at 25-50%: {max(quarter) / 1024:.0f}, at the end: "
              f"{long_rss[-1][1] / 1024:.0f}")
        print(f"memory: run length ratio {long_written / max(short_written, 1):.1f}x, "
              f"peak RSS ratio {long_peak / short_peak:.2f}")


if __name__ == "__main__":
    main()
