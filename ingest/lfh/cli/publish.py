"""`lfh publish`: options and messages over lfh.serve.publish.publish_marts (and the Postgres load)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from lfh.cli.command import command
from lfh.paths import database_path, dbt_target_dir, parquet_landing_dir, spark_dir
from lfh.serve.publish import ROOT_NOTE, default_destination, publish_marts


@command()
@click.option("--to", "destination", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Folder to publish into (default: warehouse/published beside the warehouse).")
@click.option("--target-dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="With --target spark: the dbt target folder whose manifest.json / run_results.json describe "
                   "the run (default: $DBT_TARGET_PATH, else target/). A DuckDB warehouse's runs are read from "
                   "the warehouse itself.")
@click.option("--keep", type=click.IntRange(min=2), default=3, show_default=True,
              help="Publications kept on disk (older ones are deleted; readers holding them keep reading).")
@click.option("--postgres", "postgres_dsn", default=None, metavar="DSN",
              help="Also load the marts into this PostgreSQL database (a role allowed to create schemas and "
                   "roles; its password from PGPASSWORD or ~/.pgpass, not the command line).")
@click.option("--reader-role", default="lfh_reader", show_default=True,
              help="Postgres role given SELECT on schema marts and nothing else.")
@click.option("--password-env", default="LFH_PG_PASSWORD", show_default=True,
              help="Environment variable holding the reader role's password.")
@click.option("--target", type=click.Choice(["duckdb", "spark"]), default="duckdb", show_default=True,
              help="Which build to publish: the DuckDB warehouse (LFH_DB) or the local Spark target's tables "
                   "(LFH_SPARK_DIR); the published layout is the same.")
@click.option("--parquet-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="With --target spark: the landed raw Parquet folder, for the lexicon facts of the manifest "
                   "(default: $LFH_PARQUET_DIR or warehouse/raw_parquet).")
@click.option("--wait", "wait", type=click.FloatRange(min=0), default=None, metavar="SECONDS",
              help="Wait this long for a running build or ingest to finish (default: LFH_LOCK_WAIT or 600).")
def publish(destination: Path | None, target_dir: Path | None, keep: int, postgres_dsn: str | None,
            reader_role: str, password_env: str, target: str = "duckdb", parquet_dir: Path | None = None,
            wait: float | None = None) -> None:
    """Publish a read-only copy of the marts for BI tools: marts.duckdb, parquet/<mart>.parquet, manifest.json."""
    destination = destination or default_destination()
    target_dir = target_dir or dbt_target_dir()
    reader_password = None
    if postgres_dsn is not None:
        reader_password = os.environ.get(password_env)
        if not reader_password:
            raise click.UsageError(f"--postgres needs the reader password in ${password_env}; set it and run again")
    build_db = database_path()
    if target == "spark":
        from lfh.serve.spark import stage_spark_build

        build_db = stage_spark_build(spark_dir(), target_dir, parquet_dir or parquet_landing_dir(),
                                     spark_dir() / "publish_stage.duckdb")
    publication = publish_marts(build_db, destination, target_dir, keep, wait, runs_from_target=target == "spark")
    for mart in publication.manifest["marts"]:
        click.echo(f"  {mart['relation']}: {mart['rows']} rows")
    click.echo(f"published {len(publication.manifest['marts'])} marts to {publication.destination}")
    if publication.manifest.get("simulated"):
        click.secho(f"note: the marts hold {publication.manifest['simulated_stories']:,} SIMULATED stories "
                    "(lfh simulate); manifest.json says so (simulated: true)", fg="yellow", err=True)
    if os.geteuid() == 0:
        click.echo(ROOT_NOTE, err=True)
    if publication.manifest["dbt"]["note"]:
        click.echo(f"note: {publication.manifest['dbt']['note']}", err=True)
    if postgres_dsn is not None and reader_password is not None:
        from lfh.serve.postgres_load import load_marts, redacted_dsn

        load_marts(publication.serving_db, postgres_dsn, reader_role, reader_password, lock_down_database=False)
        click.echo(f"loaded into {redacted_dsn(postgres_dsn)} (schema marts, SELECT for role {reader_role})")
