"""`lfh publish`: a read-only serving copy of the marts (DuckDB + Parquet + manifest), swapped in atomically.

BI tools open the published copy, never the build warehouse: DuckDB allows one writer or many readers per
file, so a tool holding the build file would block the next `lfh build`.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from lfh.paths import database_path, parquet_landing_dir, project_root, spark_dir
from lfh.serve.copy import PublishError, copy_marts, describe_marts, export_parquet
from lfh.serve.provenance import dbt_provenance
from lfh.serve.swap import activate, make_read_only, new_build_dir, prune, publish_lock

MANIFEST_FORMAT = 1
SERVING_FILE = "marts.duckdb"
PARQUET_DIR = "parquet"
MANIFEST_FILE = "manifest.json"


@dataclass(frozen=True)
class Publication:
    destination: Path
    version_dir: Path
    manifest: dict[str, Any]

    @property
    def serving_db(self) -> Path:
        return self.destination / SERVING_FILE


def default_destination() -> Path:
    """warehouse/published beside the build warehouse (so LFH_DB=/tmp/x/lfh.duckdb publishes to /tmp/x/published)."""
    return database_path().parent / "published"


def _iso_mtime(path: Path) -> str:
    return datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat()


def build_manifest(build_db: Path, version_dir: Path, target_dir: Path, warehouse_facts: dict[str, Any],
                   published_at: datetime) -> dict[str, Any]:
    marts = describe_marts(version_dir / SERVING_FILE)
    dbt = dbt_provenance(target_dir, project_root(), [mart.name for mart in marts], "marts")
    baseline_sets = warehouse_facts["baseline_sets"]
    if not baseline_sets and "baseline_set" in dbt["vars"]:
        # No mart carries the column: fall back to the var the run used, and say where it came from.
        baseline_sets = [{"name": dbt["vars"]["baseline_set"], "sources": [], "from": "dbt vars"}]
    return {
        "format": MANIFEST_FORMAT,
        "published_at": published_at.isoformat(),
        "source_database": str(build_db),
        "source_modified_at": _iso_mtime(build_db),
        "dbt": {key: value for key, value in dbt.items() if key != "marts"},
        "baseline_sets": baseline_sets,
        "lexicon": warehouse_facts["lexicon"],
        "marts": [
            {
                "mart": mart.name,
                "relation": f"marts.{mart.name}",
                "parquet": f"{PARQUET_DIR}/{mart.name}.parquet",
                "rows": mart.rows,
                "description": mart.description,
                "columns": [asdict(column) for column in mart.columns],
                "dbt": dbt["marts"][mart.name],
            }
            for mart in marts
        ],
    }


def publish_marts(build_db: Path, destination: Path, target_dir: Path, keep: int = 3) -> Publication:
    """Copy, export, describe, then flip `current`. On any failure the previous publication stays current."""
    build_db = build_db.resolve()
    destination = destination.resolve()
    with publish_lock(destination):
        build_dir = new_build_dir(destination)
        try:
            published_at = datetime.now(UTC)
            names, warehouse_facts = copy_marts(build_db, build_dir / SERVING_FILE)
            export_parquet(build_dir / SERVING_FILE, build_dir / PARQUET_DIR, names)
            manifest = build_manifest(build_db, build_dir, target_dir, warehouse_facts, published_at)
            (build_dir / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
            make_read_only(build_dir)
            version_dir = activate(destination, build_dir)
        except BaseException:
            shutil.rmtree(build_dir, ignore_errors=True)
            raise
        prune(destination, keep)
    return Publication(destination=destination, version_dir=version_dir, manifest=manifest)


@click.command()
@click.option("--to", "destination", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Folder to publish into (default: warehouse/published beside the warehouse).")
@click.option("--target-dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="dbt target folder whose manifest.json / run_results.json describe the run (default: target/).")
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
def publish(destination: Path | None, target_dir: Path | None, keep: int, postgres_dsn: str | None,
            reader_role: str, password_env: str, target: str = "duckdb", parquet_dir: Path | None = None) -> None:
    """Publish a read-only copy of the marts for BI tools: marts.duckdb, parquet/<mart>.parquet, manifest.json."""
    destination = destination or default_destination()
    target_dir = target_dir or project_root() / "target"
    reader_password = None
    if postgres_dsn is not None:
        reader_password = os.environ.get(password_env)
        if not reader_password:
            raise click.UsageError(f"--postgres needs the reader password in ${password_env}; set it and run again")
    try:
        build_db = database_path()
        if target == "spark":
            from lfh.serve.spark import stage_spark_build

            build_db = stage_spark_build(spark_dir(), target_dir, parquet_dir or parquet_landing_dir(),
                                         spark_dir() / "publish_stage.duckdb")
        publication = publish_marts(build_db, destination, target_dir, keep)
    except PublishError as exc:
        raise click.ClickException(str(exc)) from exc
    for mart in publication.manifest["marts"]:
        click.echo(f"  {mart['relation']}: {mart['rows']} rows")
    click.echo(f"published {len(publication.manifest['marts'])} marts to {publication.destination}")
    if publication.manifest["dbt"]["note"]:
        click.echo(f"note: {publication.manifest['dbt']['note']}", err=True)
    if postgres_dsn is not None and reader_password is not None:
        from lfh.serve.postgres_load import PostgresLoadError, load_marts, redacted_dsn

        try:
            load_marts(publication.serving_db, postgres_dsn, reader_role, reader_password,
                       lock_down_database=False)
        except PostgresLoadError as exc:
            raise click.ClickException(str(exc)) from exc
        click.echo(f"loaded into {redacted_dsn(postgres_dsn)} (schema marts, SELECT for role {reader_role})")
