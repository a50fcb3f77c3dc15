"""The terminal side of `lfh generate` and `lfh label`: renders a run's reports (lfh.llm.reporting) with rich on
stderr — a progress bar per model, notes, and the summary table."""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from lfh.llm.request import RunStats


class RichReporter:
    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True, width=None if sys.stderr.isatty() else 150)
        self.progress: Progress | None = None
        self.task: TaskID | None = None

    def note(self, text: str, warning: bool = False) -> None:
        self.console.print(f"[yellow]{text}" if warning else text)

    def run_started(self, name: str, total: int | None) -> None:
        self.progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("failed {task.fields[failed]}"), TextColumn("{task.fields[rate]:.1f} req/s"),
            TextColumn("{task.fields[tokens]:,} tok"), TextColumn("${task.fields[cost]:.4f}"),
            TimeElapsedColumn(), TimeRemainingColumn(), console=self.console, refresh_per_second=4,
        )
        self.progress.start()
        self.task = self.progress.add_task(name, total=total, failed=0, rate=0.0, tokens=0, cost=0.0)

    def run_progress(self, stats: RunStats) -> None:
        if self.progress is None or self.task is None:
            return
        elapsed = max(stats.elapsed, 1e-6)
        self.progress.update(self.task, completed=stats.jobs_done + stats.jobs_failed, failed=stats.jobs_failed,
                             rate=stats.requests / elapsed, tokens=stats.prompt_tokens + stats.completion_tokens,
                             cost=stats.cost)

    def run_finished(self) -> None:
        if self.progress is not None:
            self.progress.stop()
        self.progress = self.task = None

    def summary(self, title: str, all_stats: list[RunStats], outputs: list[Path], failure_file: Path | None) -> None:
        table = Table(title=title)
        for column in ("model", "requests planned", "requests done", "samples stored", "failed", "HTTP calls",
                       "retries", "prompt tokens", "completion tokens", "est. cost $", "seconds", "calls/s"):
            table.add_column(column, justify="right" if column != "model" else "left")
        for stats in all_stats:
            elapsed = max(stats.elapsed, 1e-6)
            planned = "?" if stats.jobs_total is None else f"{stats.jobs_total:,}"
            table.add_row(stats.model, planned, f"{stats.jobs_done:,}", f"{stats.samples_done:,}",
                          f"{stats.jobs_failed:,}", f"{stats.requests:,}", f"{stats.retries:,}",
                          f"{stats.prompt_tokens:,}", f"{stats.completion_tokens:,}", f"{stats.cost:.4f}",
                          f"{elapsed:.1f}", f"{stats.requests / elapsed:.1f}")
        self.console.print(table)
        for path in outputs:
            self.console.print(f"output: {path}")
        if failure_file is not None and any(stats.jobs_failed for stats in all_stats):
            self.console.print(f"[yellow]failures (run the same command again to retry them): {failure_file}")
