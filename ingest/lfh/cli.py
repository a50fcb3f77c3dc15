"""The `lfh` command line. Each subcommand lives in its own module and is imported only when it runs,
so a slow or optional dependency of one command never slows or breaks another."""

from __future__ import annotations

import importlib

import click

# name -> "module:attribute" of a click command
COMMANDS: dict[str, str] = {
    "ingest": "lfh.ingest_cmd:ingest",
    "lexicon": "lfh.lexicon:lexicon",
    "build": "lfh.build:build",
    "generate": "lfh.generate:generate",
    "label": "lfh.label:label",
    "finetune-data": "lfh.finetune:finetune_data",
    "simulate": "lfh.simulate:simulate",
    "occupation-baselines": "lfh.occupation_baselines_cmd:occupation_baselines_command",
    "report": "lfh.report:report",
    "demo": "lfh.demo:demo",
    "publish": "lfh.publish:publish",
    "serve": "lfh.serve:serve",
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
