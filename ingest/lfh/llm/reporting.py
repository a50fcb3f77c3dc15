"""What a generation or labeling run tells its user, as calls on a reporter: the library never prints. The CLI
passes one that renders them with rich on stderr (lfh.cli.llm_progress.RichReporter); a library caller may pass
its own, or none (Silent)."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from lfh.llm.request import RunStats


class RunReporter(Protocol):
    def note(self, text: str, warning: bool = False) -> None:
        """A line for the user (warning: something they should act on)."""

    def run_started(self, name: str, total: int | None) -> None:
        """A model's requests start (total: how many, None when unknown)."""

    def run_progress(self, stats: RunStats) -> None:
        """Where the running requests are (called often)."""

    def run_finished(self) -> None:
        """The model's requests are done (or stopped)."""

    def summary(self, title: str, all_stats: list[RunStats], outputs: list[Path], failure_file: Path | None) -> None:
        """The run's figures per model, its output files, and where its failures are."""


class Silent:
    """Reports nothing."""

    def note(self, text: str, warning: bool = False) -> None:
        pass

    def run_started(self, name: str, total: int | None) -> None:
        pass

    def run_progress(self, stats: RunStats) -> None:
        pass

    def run_finished(self) -> None:
        pass

    def summary(self, title: str, all_stats: list[RunStats], outputs: list[Path], failure_file: Path | None) -> None:
        pass
