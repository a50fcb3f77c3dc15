"""`lfh ingest PATH...`: land study workbooks and the project's JSONL/CSV/Parquet files in the raw schema.

Each file lands in its own transaction (all or nothing); a file already loaded with the same checksum is skipped.
A file that cannot be read at all is logged as failed and reported; the other files are still landed, and the
command then exits with status 1.
"""

from __future__ import annotations

from pathlib import Path

import click

from lfh.db import connect
from lfh.landing.discovery import discover_files
from lfh.landing.ingest_file import FileResult, ingest_file
from lfh.landing.parquet_sink import ParquetSink, ParquetSinkError
from lfh.landing.schema import ensure_raw_schema
from lfh.paths import database_path


def ingest_paths(paths: list[Path], db_path: Path | None = None, reread: bool = False,
                 parquet_dir: Path | None = None) -> tuple[list[FileResult], list[Path]]:
    """Land every file under paths in the warehouse, or as Parquet files under parquet_dir; (results per file,
    files skipped for their extension)."""
    files, skipped = discover_files(paths)
    if parquet_dir is not None:
        with ParquetSink(parquet_dir) as sink:
            return [ingest_file(sink, path, reread) for path in files], skipped
    connection = connect(db_path)
    try:
        ensure_raw_schema(connection)
        return [ingest_file(connection, path, reread) for path in files], skipped
    finally:
        connection.close()


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--reread", is_flag=True,
              help="Read files again even when unchanged since their last load (e.g. after editing the seeds).")
@click.option("--parquet-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Land into Parquet files under this folder (one folder per raw table) instead of the DuckDB "
                   "warehouse: what `lfh build --target spark` reads (docs/SCALE_OUT.md).")
def ingest(paths: tuple[Path, ...], reread: bool, parquet_dir: Path | None) -> None:
    """Land files or folders (searched recursively) into the warehouse's raw schema.

    Reads study workbooks (.xlsx) and the project's stories / label responses as JSON Lines (.jsonl, .json),
    .csv or .parquet; stories vs label responses is decided by the columns present. Re-running adds nothing;
    a file that grew adds only its new rows; a file unchanged since its last load (same path and checksum) is
    skipped without reading it; unusable rows go to raw.rejects.
    """
    try:
        results, skipped = ingest_paths(list(paths), reread=reread, parquet_dir=parquet_dir)
    except ParquetSinkError as exc:
        raise click.ClickException(str(exc)) from exc
    for path in skipped:
        click.echo(f"{path}: skipped (not .xlsx, .jsonl, .ndjson, .json, .csv or .parquet)")
    for result in results:
        click.echo(result.summary(), err=result.error is not None)
    failed = [result for result in results if result.error is not None]
    if not results:
        raise click.ClickException("no files to ingest under " + ", ".join(str(path) for path in paths))
    if failed:
        raise click.ClickException(
            f"{len(failed)} of {len(results)} files could not be read and landed nothing "
            f"(see above; other files were landed). Fix or remove them and run `lfh ingest` again. Landed in: "
            f"{parquet_dir or database_path()}"
        )
