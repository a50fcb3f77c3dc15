"""`lfh build`: options and messages over lfh.build.dbt.build_warehouse."""

from __future__ import annotations

import click

from lfh.build.dbt import build_warehouse, parse_var_value
from lfh.cli.command import command
from lfh.paths import database_path


@command()
@click.option("--select", "-s", "selection", default=None, help="dbt node selection, e.g. marts or +fct_characters")
@click.option("--var", "variables", multiple=True, metavar="NAME=VALUE",
              help="Override a dbt var, e.g. --var vote_threshold=0.6 (repeatable).")
@click.option("--skip-tests", is_flag=True, help="dbt run + seed instead of dbt build (no data or unit tests).")
def build(selection: str | None, variables: tuple[str, ...], skip_tests: bool) -> None:
    """Build every table with dbt (seeds, models, tests) in the warehouse."""
    dbt_vars: dict[str, object] = {}
    for item in variables:
        name, separator, value = item.partition("=")
        if not separator:
            raise click.BadParameter(f"{item!r}: write NAME=VALUE", param_hint="--var")
        dbt_vars[name] = parse_var_value(value)
    build_warehouse(selection, dbt_vars, skip_tests)
    click.echo(f"built {database_path()}")
