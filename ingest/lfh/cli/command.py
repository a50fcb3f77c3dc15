"""The one place where the library's errors become messages: every `lfh` command is an LfhCommand, so an
LfhError raised anywhere below it ends the command with `Error: <message>` and exit status 1, no traceback. So does
an error of DuckDB or of the file system no step foresaw (a warehouse from an older version, a full disk):
lfh.failures words it, naming the warehouse. It also gives the warehouse lock a voice: a command waiting for a
running build says so on stderr."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import click
import duckdb

from lfh.errors import LfhError
from lfh.failures import explain
from lfh.lock import set_wait_announcer
from lfh.paths import DB_ENV_VAR, database_path


def _announce(text: str) -> None:
    click.echo(text, err=True)


class LfhCommand(click.Command):
    def invoke(self, ctx: click.Context) -> Any:
        set_wait_announcer(_announce)
        try:
            return super().invoke(ctx)
        except LfhError as exc:
            raise click.ClickException(_naming_the_warehouse(str(exc), ctx)) from exc
        except (duckdb.Error, OSError) as exc:
            message = explain(exc, _warehouse(ctx))
            if message is None:
                raise
            raise click.ClickException(message) from exc
        finally:
            set_wait_announcer(None)


def _naming_the_warehouse(message: str, ctx: click.Context) -> str:
    """A message about "the warehouse" names its file (the user may have several: copies, LFH_DB)."""
    warehouse = str(_warehouse(ctx))
    if warehouse in message or "the warehouse " not in message:
        return message
    return message.replace("the warehouse ", f"the warehouse {warehouse} ", 1)


def _warehouse(ctx: click.Context) -> Path:
    """The DuckDB file the command works on: its --db option where it has one, else LFH_DB."""
    given = ctx.params.get("db_path")
    if given:
        return Path(given)
    try:
        return database_path()
    except LfhError:  # a name database_path refuses: still the file meant
        return Path(os.environ.get(DB_ENV_VAR, "warehouse/lfh.duckdb"))


command = functools.partial(click.command, cls=LfhCommand)
