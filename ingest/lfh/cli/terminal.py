"""Progress lines for the terminal: the echo that `lfh build` hands to the library (lfh.build.runner.Progress).
On a terminal it can also rewrite its current line in place (`rewrite`), so the build's progress is one line."""

from __future__ import annotations

import sys

import click


class _Echo:
    def __call__(self, text: str) -> None:
        click.echo(text)


class _RewritingEcho(_Echo):
    def rewrite(self, text: str) -> None:
        click.echo("\r" + text, nl=False)


def terminal_echo() -> _Echo:
    """click.echo, with `rewrite` when stdout is a terminal."""
    return _RewritingEcho() if sys.stdout.isatty() else _Echo()
