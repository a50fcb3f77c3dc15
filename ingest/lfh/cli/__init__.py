"""The `lfh` command line: the click group. Each subcommand is imported only when it runs,
so a slow or optional dependency of one command never slows or breaks another."""

from __future__ import annotations

import importlib

import click

# name -> "module:attribute" of a click command
COMMANDS: dict[str, str] = {
    "ingest": "lfh.landing.ingest:ingest",
    "lexicon": "lfh.lexicon.load:lexicon",
    "build": "lfh.build.dbt:build",
    "generate": "lfh.llm.generate:generate",
    "label": "lfh.llm.label:label",
    "finetune-data": "lfh.llm.finetune:finetune_data",
    "simulate": "lfh.simulate.run:simulate",
    "report": "lfh.report.write:report",
    "demo": "lfh.cli.demo:demo",
    "publish": "lfh.serve.publish:publish",
    "serve": "lfh.serve.server:serve",
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


if __name__ == "__main__":
    main()
