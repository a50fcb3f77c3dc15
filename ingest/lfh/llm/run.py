"""Running a set of jobs for one model with live progress, an output journal, a failure log and a summary."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from lfh.errors import EndpointError
from lfh.llm.client import AuthenticationFailed, Completion, Failure, Job, RunStats, run_jobs
from lfh.llm.config import ModelConfig
from lfh.llm.journal import JournalWriter, now_iso


def safe_file_stem(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "model"


def failure_record(failure: Failure, model: str) -> dict[str, Any]:
    return {"time": now_iso(), "model": model, "key": failure.job.key, "meta": failure.job.meta,
            "error": failure.error, "status": failure.status, "tries": failure.tries}


def progress_display(console: Console) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("failed {task.fields[failed]}"), TextColumn("{task.fields[rate]:.1f} req/s"),
        TextColumn("{task.fields[tokens]:,} tok"), TextColumn("${task.fields[cost]:.4f}"),
        TimeElapsedColumn(), TimeRemainingColumn(), console=console, refresh_per_second=4,
    )


def execute(config: ModelConfig, jobs: Iterable[Job], total: int | None, writer: JournalWriter,
            failures: JournalWriter, to_records: Callable[[Completion], list[dict[str, Any]]],
            json_mode: bool, console: Console) -> RunStats:
    """Run the jobs; every completion is on disk before it counts. Ctrl-C stops cleanly (the journal keeps
    what finished); a refused key stops the run with an EndpointError that names the variable, not the key."""
    stats = RunStats(model=config.name, jobs_total=total)
    with progress_display(console) as progress:
        task = progress.add_task(config.name, total=total, failed=0, rate=0.0, tokens=0, cost=0.0)

        def on_completion(completion: Completion) -> None:
            records = to_records(completion)
            writer.append(records)
            stats.samples_done += len(records)

        def on_failure(failure: Failure) -> None:
            failures.append([failure_record(failure, config.name)])

        def on_tick() -> None:
            elapsed = max(stats.elapsed, 1e-6)
            progress.update(task, completed=stats.jobs_done + stats.jobs_failed, failed=stats.jobs_failed,
                            rate=stats.requests / elapsed, tokens=stats.prompt_tokens + stats.completion_tokens,
                            cost=stats.cost)

        try:
            asyncio.run(run_jobs(config, jobs, on_completion, on_failure, stats, json_mode, on_tick))
        except AuthenticationFailed as exc:
            raise EndpointError(str(exc)) from None
        finally:
            on_tick()
    return stats


def print_summary(console: Console, title: str, all_stats: list[RunStats], outputs: list[Path],
                  failure_file: Path | None) -> None:
    table = Table(title=title)
    for column in ("model", "requests planned", "requests done", "samples stored", "failed", "HTTP calls", "retries",
                   "prompt tokens", "completion tokens", "est. cost $", "seconds", "calls/s"):
        table.add_column(column, justify="right" if column != "model" else "left")
    for stats in all_stats:
        elapsed = max(stats.elapsed, 1e-6)
        planned = "?" if stats.jobs_total is None else f"{stats.jobs_total:,}"
        table.add_row(stats.model, planned, f"{stats.jobs_done:,}", f"{stats.samples_done:,}", f"{stats.jobs_failed:,}",
                      f"{stats.requests:,}", f"{stats.retries:,}", f"{stats.prompt_tokens:,}",
                      f"{stats.completion_tokens:,}", f"{stats.cost:.4f}", f"{elapsed:.1f}",
                      f"{stats.requests / elapsed:.1f}")
    console.print(table)
    for path in outputs:
        console.print(f"output: {path}")
    if failure_file is not None and any(stats.jobs_failed for stats in all_stats):
        console.print(f"[yellow]failures (run the same command again to retry them): {failure_file}")
