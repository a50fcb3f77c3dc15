"""The demonym -> region seed (seeds/demonym_regions.csv). Any demonym not listed there is region 'other'."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from lfh.paths import seeds_dir

REGIONS = ("mena", "nhpi", "other")
SEED_COLUMNS = ("demonym", "country", "region", "source", "vintage")


def default_seed_path() -> Path:
    return seeds_dir() / "demonym_regions.csv"


def read_demonym_regions(path: Path | None = None) -> dict[str, str]:
    """demonym (exact spelling, as in the nationality data) -> region; errors name the file and row."""
    seed = path or default_seed_path()
    if not seed.is_file():
        raise FileNotFoundError(f"{seed}: demonym -> region seed not found")
    frame = pl.read_csv(seed, infer_schema=False)
    missing = [column for column in SEED_COLUMNS if column not in frame.columns]
    if missing:
        raise ValueError(f"{seed}: missing column(s) {', '.join(missing)}; expected {', '.join(SEED_COLUMNS)}")
    mapping: dict[str, str] = {}
    for row_number, row in enumerate(frame.iter_rows(named=True), start=2):  # line 1 is the header
        demonym = (row["demonym"] or "").strip()
        region = (row["region"] or "").strip()
        if not demonym:
            raise ValueError(f"{seed}: line {row_number}: empty demonym")
        if region not in REGIONS:
            raise ValueError(f"{seed}: line {row_number}: region {region!r} is not one of {', '.join(REGIONS)}")
        if mapping.get(demonym, region) != region:
            raise ValueError(f"{seed}: line {row_number}: {demonym!r} is listed with two regions")
        mapping[demonym] = region
    return mapping
