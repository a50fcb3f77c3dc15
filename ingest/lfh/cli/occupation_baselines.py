"""`lfh occupation-baselines`: write seeds/occupation_workforce_baselines.csv from BLS CPS table 11 (the library
is lfh.baselines.occupations; this layer turns its errors into messages)."""

from __future__ import annotations

from pathlib import Path

import click

from lfh.baselines.occupations import (
    BASELINE_SEED,
    MAPPING_SEED,
    OccupationBaselineError,
    occupation_baselines,
    write_seed,
)
from lfh.paths import seeds_dir


@click.command("occupation-baselines")
@click.argument("bls_csv", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--mapping", "mapping_path", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help=f"Occupation -> BLS line mapping [default: seeds/{MAPPING_SEED}].")
@click.option("--out", "out_path", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help=f"Seed to write [default: seeds/{BASELINE_SEED}].")
@click.option("--vintage", default=None, help="Year of the BLS table [default: the year in the file name].")
def occupation_baselines_command(bls_csv: Path, mapping_path: Path | None, out_path: Path | None,
                                 vintage: str | None) -> None:
    """Write the Labor occupations' workforce baselines (seeds/occupation_workforce_baselines.csv) from BLS CPS
    table 11 saved as CSV (cpsaat11_2022.csv, docs/DATA.md) and the mapping seed. Then `lfh build`."""
    mapping_path = mapping_path or seeds_dir() / MAPPING_SEED
    out_path = out_path or seeds_dir() / BASELINE_SEED
    try:
        rows = occupation_baselines(bls_csv, mapping_path, vintage)
    except OccupationBaselineError as exc:
        raise click.ClickException(str(exc)) from exc
    write_seed(rows, out_path)
    without = [row["occupation"] for row in rows if row["women_pct"] == ""]
    click.echo(f"wrote {len(rows)} occupations to {out_path}"
               + (f"; BLS publishes no percentages for: {', '.join(without)}" if without else ""))
