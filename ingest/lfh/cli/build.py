"""`lfh build`: options and messages over lfh.build.dbt.build_warehouse."""

from __future__ import annotations

from pathlib import Path

import click

from lfh.build.dbt import build_warehouse, parse_var_value
from lfh.cli.command import command


@command()
@click.option("--select", "-s", "selection", default=None, help="dbt node selection, e.g. marts or +fct_characters")
@click.option("--var", "variables", multiple=True, metavar="NAME=VALUE",
              help="Override a dbt var, e.g. --var vote_threshold=0.6 (repeatable).")
@click.option("--skip-tests", is_flag=True, help="dbt run + seed instead of dbt build (no data or unit tests).")
@click.option("--target", type=click.Choice(["duckdb", "spark"]), default="duckdb", show_default=True,
              help="The profiles.yml target: DuckDB (LFH_DB), or Spark (local session under LFH_SPARK_DIR; "
                   "another cluster: edit profiles.yml, docs/SCALE_OUT.md).")
@click.option("--parquet-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Read the raw tables from landed Parquet files (lfh ingest/lexicon --parquet-dir). Default on "
                   "Spark: $LFH_PARQUET_DIR or warehouse/raw_parquet; on DuckDB: the warehouse's own raw tables.")
def build(selection: str | None, variables: tuple[str, ...], skip_tests: bool, target: str,
          parquet_dir: Path | None) -> None:
    """Build every table with dbt (seeds, models, tests) in the warehouse."""
    dbt_vars: dict[str, object] = {}
    for item in variables:
        name, separator, value = item.partition("=")
        if not separator:
            raise click.BadParameter(f"{item!r}: write NAME=VALUE", param_hint="--var")
        dbt_vars[name] = parse_var_value(value)
    built = build_warehouse(selection, dbt_vars, skip_tests, target=target, parquet_dir=parquet_dir)
    click.echo(f"built {built}")
