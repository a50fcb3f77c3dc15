"""The `lfh` command line, the only layer that imports click: the group here, one module per command beside it
(cli/<command>.py), each a thin layer of options and messages over the library of its stage. Library code raises
lfh.errors; cli.command turns those into messages. Each subcommand is imported only when it runs, so a slow or
optional dependency of one command never slows or breaks another."""

from __future__ import annotations

import importlib

import click

# name -> "module:attribute" of a click command
COMMANDS: dict[str, str] = {
    "ingest": "lfh.cli.ingest:ingest",
    "lexicon": "lfh.cli.lexicon:lexicon",
    "build": "lfh.cli.build:build",
    "generate": "lfh.cli.generate:generate",
    "label": "lfh.cli.label:label",
    "finetune-data": "lfh.cli.finetune:finetune_data",
    "audit-sample": "lfh.cli.audit_sample:audit_sample",
    "audit-plan": "lfh.cli.audit_plan:audit_plan",
    "simulate": "lfh.cli.simulate:simulate",
    "occupation-baselines": "lfh.cli.occupation_baselines:occupation_baselines_command",
    "report": "lfh.cli.report:report",
    "demo": "lfh.cli.demo:demo",
    "publish": "lfh.cli.publish:publish",
    "serve": "lfh.cli.serve:serve",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attribute = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            return None
        return getattr(module, attribute)


@click.group(cls=LazyGroup)
@click.version_option(package_name="lfh")
def main() -> None:
    """Measure omission and subordination in stories written by language models (Laissez-Faire Harms).

    The warehouse is warehouse/lfh.duckdb, or the file named by LFH_DB.
    """
