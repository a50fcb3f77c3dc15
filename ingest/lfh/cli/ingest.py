"""`lfh ingest PATH...`: options and messages over lfh.landing.ingest.ingest_paths."""

from __future__ import annotations

from pathlib import Path

import click

from lfh.cli.command import command
from lfh.landing.discovery import file_format
from lfh.landing.ingest import ingest_paths
from lfh.landing.ingest_file import ReadOptions
from lfh.landing.parquet_sink import ParquetSink
from lfh.landing.read_csv import ENCODINGS, CsvOptions
from lfh.landing.simulated import marked_folder
from lfh.paths import database_path


@command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--reread", is_flag=True,
              help="Read files again even when unchanged since their last load (e.g. after editing the seeds).")
@click.option("--encoding", type=click.Choice(sorted(ENCODINGS), case_sensitive=False), default=None,
              help="Text encoding of CSV files (default: UTF-8, or UTF-16 when the file starts with its mark).")
@click.option("--separator", default=None,
              help="CSV separator, e.g. ';' or tab (default: detected among , ; tab |).")
@click.option("--simulated", "include_simulated", is_flag=True,
              help="Also land subfolders marked simulated (SIMULATED.txt from `lfh simulate`, e.g. "
                   "data/landing/simulated/) found in the folders given; skipped otherwise.")
@click.option("--mix", "allow_mix", is_flag=True,
              help="Allow simulated and real stories in one warehouse (refused otherwise; "
                   "dim_stories.is_simulated tells them apart).")
@click.option("--parquet-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Land into Parquet files under this folder (one folder per raw table) instead of the DuckDB "
                   "warehouse: what `lfh build --target spark` reads (docs/SCALE_OUT.md).")
def ingest(paths: tuple[Path, ...], reread: bool, encoding: str | None, separator: str | None,
           include_simulated: bool, allow_mix: bool, parquet_dir: Path | None) -> None:
    """Land files or folders (searched recursively) into the warehouse's raw schema.

    Reads study workbooks (.xlsx) and the project's stories / label responses as JSON Lines (.jsonl, .json),
    .csv or .parquet; stories vs label responses is decided by the columns present. Re-running adds nothing;
    a file that grew adds only its new rows; a file unchanged since its last load (same path and checksum) is
    skipped without reading it; unusable rows go to raw.rejects.
    """
    options = ReadOptions(csv=CsvOptions(encoding=encoding, separator=separator))
    if parquet_dir is not None:
        with ParquetSink(parquet_dir) as sink:
            results, skipped = ingest_paths(list(paths), reread=reread, options=options, sink=sink,
                                            include_simulated=include_simulated, allow_mix=allow_mix)
    else:
        results, skipped = ingest_paths(list(paths), reread=reread, options=options,
                                        include_simulated=include_simulated, allow_mix=allow_mix)
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
            f"(see above; other files were landed). Fix or remove them and run `lfh ingest` again. Landed in: "
            f"{parquet_dir or database_path()}"
        )
