"""`lfh report`: options and messages over lfh.report.write.write_report."""

from __future__ import annotations

from pathlib import Path

import click

from lfh.cli.command import command
from lfh.paths import database_path, reports_dir_for
from lfh.report.write import write_report


@command()
@click.option("--db", "db_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="DuckDB file to read (read-only). Default: the warehouse (LFH_DB). A published copy works too: "
                   "--db warehouse/published/marts.duckdb.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder. Default: reports/ beside the warehouse read (reports/ of the project for "
                   "its own warehouse, /data/x/reports for LFH_DB=/data/x/lfh.duckdb).")
@click.option("--wait", "wait", type=click.FloatRange(min=0), default=None, metavar="SECONDS",
              help="Wait this long for a running build or ingest to finish (default: LFH_LOCK_WAIT or 600).")
def report(db_path: Path | None, out_dir: Path | None, wait: float | None) -> None:
    """Write index.html (self-contained, opens offline) and the figures as PNG and SVG, beside the warehouse."""
    db_path = (db_path or database_path()).resolve()
    target = write_report(db_path, (out_dir or reports_dir_for(db_path)).resolve(), wait)
    click.echo(f"report of {db_path} written to {target}\nfigures: {target.parent / 'figures'}")
