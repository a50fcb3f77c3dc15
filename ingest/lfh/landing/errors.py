"""The error for a file that cannot be landed at all (as opposed to single rows, which become rejects)."""

from __future__ import annotations

from pathlib import Path

from lfh.errors import InputError


class UnreadableFileError(InputError):
    """A whole file is unusable: corrupt, not the format its name says, or missing required columns."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem
