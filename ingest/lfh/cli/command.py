"""The one place where the library's errors become messages: every `lfh` command is an LfhCommand, so an
LfhError raised anywhere below it ends the command with `Error: <message>` and exit status 1, no traceback."""

from __future__ import annotations

import functools
from typing import Any

import click

from lfh.errors import LfhError


class LfhCommand(click.Command):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except LfhError as exc:
            raise click.ClickException(str(exc)) from exc


command = functools.partial(click.command, cls=LfhCommand)
