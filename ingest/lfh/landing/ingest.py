"""`lfh ingest PATH...`: land study workbooks and the project's JSONL/CSV/Parquet files in the raw schema.

Each file lands in its own transaction (all or nothing); a file already loaded with the same checksum is skipped.
A file that cannot be read at all is logged as failed and reported; the other files are still landed, and the
command then exits with status 1.
"""

from __future__ import annotations

from pathlib import Path

import click

from lfh.build.lock import WarehouseBusy, warehouse_lock
from lfh.db import connect
from lfh.landing.discovery import discover_files, file_format
from lfh.landing.ingest_file import FileResult, ingest_file
from lfh.landing.schema import ensure_raw_schema
from lfh.landing.simulated import marked_folder
from lfh.paths import database_path


def ingest_paths(paths: list[Path], db_path: Path | None = None, reread: bool = False,
                 include_simulated: bool = True, allow_mix: bool = False) -> tuple[list[FileResult], list[Path]]:
    """Land every file under paths in the warehouse; (results per file, files skipped for their extension or
    because they sit in a simulated subfolder and include_simulated is off)."""
    files, skipped = discover_files(paths, include_simulated)
    with warehouse_lock(db_path or database_path(), "ingest"):  # never lands rows in the middle of a build
        connection = connect(db_path)
        try:
            ensure_raw_schema(connection)
            return [ingest_file(connection, path, reread, allow_mix) for path in files], skipped
        finally:
            connection.close()


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--reread", is_flag=True,
              help="Read files again even when unchanged since their last load (e.g. after editing the seeds).")
@click.option("--simulated", "include_simulated", is_flag=True,
              help="Also land subfolders marked simulated (SIMULATED.txt from `lfh simulate`, e.g. "
                   "data/landing/simulated/) found in the folders given; skipped otherwise.")
@click.option("--mix", "allow_mix", is_flag=True,
              help="Allow simulated and real stories in one warehouse (refused otherwise; "
                   "dim_stories.is_simulated tells them apart).")
def ingest(paths: tuple[Path, ...], reread: bool, include_simulated: bool, allow_mix: bool) -> None:
    """Land files or folders (searched recursively) into the warehouse's raw schema.

    Reads study workbooks (.xlsx) and the project's stories / label responses as JSON Lines (.jsonl, .json),
    .csv or .parquet; stories vs label responses is decided by the columns present. Re-running adds nothing;
    a file that grew adds only its new rows; a file unchanged since its last load (same path and checksum) is
    skipped without reading it; unusable rows go to raw.rejects.
    """
    try:
        results, skipped = ingest_paths(list(paths), reread=reread, include_simulated=include_simulated,
                                        allow_mix=allow_mix)
    except WarehouseBusy as exc:
        raise click.ClickException(str(exc)) from None
    for path in skipped:
        if marked_folder(path) is not None and file_format(path) is not None:
            click.echo(f"{path}: skipped (SIMULATED data, under {marked_folder(path)}; pass --simulated to land it)")
        else:
            click.echo(f"{path}: skipped (not .xlsx, .jsonl, .ndjson, .json, .csv or .parquet)")
    for result in results:
        click.echo(result.summary(), err=result.error is not None)
    failed = [result for result in results if result.error is not None]
    if not results:
        raise click.ClickException("no files to ingest under " + ", ".join(str(path) for path in paths))
    if failed:
        raise click.ClickException(
            f"{len(failed)} of {len(results)} files could not be read and landed nothing "
            f"(see above; other files were landed). Fix or remove them and run `lfh ingest` again. Database: "
            f"{database_path()}"
        )
