"""`lfh build`: options and messages over lfh.build.dbt.build_warehouse (DuckDB or Spark, one entry point)."""

from __future__ import annotations

import time
from pathlib import Path

import click

from lfh.build.dbt import TARGETS, build_warehouse, nothing_to_build
from lfh.build.memory import default_limit_text, memory_limit
from lfh.build.runner import BuildInterrupted
from lfh.build.vars import validate_vars
from lfh.build.versions import version_notes
from lfh.cli.command import command
from lfh.cli.terminal import terminal_echo
from lfh.errors import ConfigError
from lfh.paths import database_path, spark_dir

BUILD_HELP = f"""Build every table with dbt (seeds, models, tests) in the warehouse.

    Memory: DuckDB works under LFH_MEMORY_LIMIT (default {default_limit_text()}) and spills to
    <warehouse>.tmp/ beyond it; Spark's driver under LFH_SPARK_DRIVER_MEMORY (default 2g).
    """


@command(help=BUILD_HELP)
@click.option("--select", "-s", "selection", default=None, help="dbt node selection, e.g. marts or +fct_characters")
@click.option("--var", "variables", multiple=True, metavar="NAME=VALUE",
              help="Override a dbt var, e.g. --var vote_threshold=0.6 (repeatable; checked against "
                   "dbt_project.yml and configs/build_vars.toml before dbt runs).")
@click.option("--skip-tests", is_flag=True, help="Seeds and models only: dbt build without the data and unit tests.")
@click.option("--full-refresh", is_flag=True, help="Rebuild every incremental model from scratch.")
@click.option("--force", is_flag=True,
              help="Run dbt even when nothing has landed and nothing has changed since the last complete build, "
                   "and its unit tests even when they passed on this checkout before.")
@click.option("--target", type=click.Choice(TARGETS), default="duckdb", show_default=True,
              help="The profiles.yml target: DuckDB (LFH_DB), or Spark (local session under LFH_SPARK_DIR; "
                   "another cluster: edit profiles.yml, docs/SCALE_OUT.md).")
@click.option("--parquet-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Read the raw tables from landed Parquet files (lfh ingest/lexicon --parquet-dir). Default on "
                   "Spark: $LFH_PARQUET_DIR or warehouse/raw_parquet; on DuckDB: the warehouse's own raw tables.")
def build(selection: str | None, variables: tuple[str, ...], skip_tests: bool, full_refresh: bool, force: bool,
          target: str, parquet_dir: Path | None) -> None:
    # the help text is BUILD_HELP: its memory default is written from lfh.build.memory's constants
    started = time.perf_counter()
    try:
        dbt_vars = validate_vars(list(variables))
        limit = memory_limit()
    except ConfigError as exc:  # a bad --var or LFH_MEMORY_LIMIT is a usage error (exit 2), before dbt starts
        raise click.UsageError(str(exc)) from None
    built = spark_dir() if target == "spark" else database_path()
    if target == "duckdb" and not force:
        nothing = nothing_to_build(dbt_vars, skip_tests, full_refresh, selection, parquet_dir=parquet_dir)
        if nothing:
            click.echo(nothing)
            return
    click.echo(f"building on Spark in {built}" if target == "spark" else f"building {built} (memory limit {limit})")
    try:
        summary = build_warehouse(selection, dbt_vars, skip_tests, full_refresh, echo=terminal_echo(), target=target,
                                  parquet_dir=parquet_dir, check_up_to_date=False,  # checked just above
                                  unit_tests="always" if force else "unless_passed")
    except BuildInterrupted as exc:
        click.echo(f"\n{exc}", err=True)
        raise SystemExit(130) from None
    click.echo(f"built {built} in {time.perf_counter() - started:.0f}s: {summary}")
    if target == "duckdb":  # model versions and the labeler version in use (docs/RUNS.md), from the built tables
        for note in version_notes(built):
            click.echo(note)
