"""Running a set of jobs for one model: an output journal, a failure log, and progress told to a reporter
(lfh.llm.reporting; the CLI renders it)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterable
from typing import Any

from lfh.errors import EndpointError
from lfh.llm.client import AuthenticationFailed, Completion, Failure, Job, run_jobs
from lfh.llm.config import ModelConfig
from lfh.llm.journal import JournalWriter, now_iso
from lfh.llm.reporting import RunReporter
from lfh.llm.request import RunStats


def safe_file_stem(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "model"


def failure_record(failure: Failure, model: str) -> dict[str, Any]:
    return {"time": now_iso(), "model": model, "key": failure.job.key, "meta": failure.job.meta,
            "error": failure.error, "status": failure.status, "tries": failure.tries}


def execute(config: ModelConfig, jobs: Iterable[Job], total: int | None, writer: JournalWriter,
            failures: JournalWriter, to_records: Callable[[Completion], list[dict[str, Any]]],
            json_mode: bool, reporter: RunReporter,
            checkpoint: Callable[[RunStats], None] | None = None) -> RunStats:
    """Run the jobs; every completion is on disk before it counts. Ctrl-C stops cleanly (the journal keeps
    what finished); a refused key stops the run with an EndpointError that names the variable, not the key.
    checkpoint(stats), when given, is called after every job (the run manifest keeps itself up to date)."""
    stats = RunStats(model=config.name, jobs_total=total)
    reporter.run_started(config.name, total)

    def on_completion(completion: Completion) -> None:
        records = to_records(completion)
        writer.append(records)
        stats.samples_done += len(records)

    def on_failure(failure: Failure) -> None:
        failures.append([failure_record(failure, config.name)])

    def on_tick() -> None:
        reporter.run_progress(stats)
        if checkpoint is not None:
            checkpoint(stats)

    try:
        asyncio.run(run_jobs(config, jobs, on_completion, on_failure, stats, json_mode, on_tick))
    except AuthenticationFailed as exc:
        raise EndpointError(str(exc)) from None
    finally:
        on_tick()
        reporter.run_finished()
    return stats
