"""`lfh report`: options and messages over lfh.report.write.write_report."""

from __future__ import annotations

from pathlib import Path

import click

from lfh.cli.command import command
from lfh.paths import database_path, project_root
from lfh.report.write import write_report


@command()
@click.option("--db", "db_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="DuckDB file to read (read-only). Default: the warehouse (LFH_DB). A published copy works too: "
                   "--db warehouse/published/marts.duckdb.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder. Default: reports/.")
def report(db_path: Path | None, out_dir: Path | None) -> None:
    """Write reports/index.html (self-contained, opens offline) and the figures as PNG and SVG."""
    target = write_report((db_path or database_path()).resolve(), (out_dir or project_root() / "reports").resolve())
    click.echo(f"report: {target}\nfigures: {target.parent / 'figures'}")
