"""The one place where the library's errors become messages: every `lfh` command is an LfhCommand, so an
LfhError raised anywhere below it ends the command with `Error: <message>` and exit status 1, no traceback. It
also gives the warehouse lock a voice: a command waiting for a running build says so on stderr."""

from __future__ import annotations

import functools
from typing import Any

import click

from lfh.errors import LfhError
from lfh.lock import set_wait_announcer


def _announce(text: str) -> None:
    click.echo(text, err=True)


class LfhCommand(click.Command):
    def invoke(self, ctx: click.Context) -> Any:
        set_wait_announcer(_announce)
        try:
            return super().invoke(ctx)
        except LfhError as exc:
            raise click.ClickException(str(exc)) from exc
        finally:
            set_wait_announcer(None)


command = functools.partial(click.command, cls=LfhCommand)
