"""Name pools for `lfh simulate`, drawn from the lexicon tables `lfh lexicon` writes (raw.census_first_names,
raw.wikipedia_first_names). Each pool entry carries its draw probability and its race weights p_r(x) exactly as
docs/METHOD.md §5 reads them, so the planted truth is known in the method's own terms."""

from __future__ import annotations

import csv
import re
import unicodedata
from pathlib import Path

import duckdb
import numpy as np
import polars as pl

from lfh.db import reading
from lfh.errors import LexiconError
from lfh.paths import seeds_dir
from lfh.simulate.config import RACE_POOLS, SimConfig

CENSUS_GROUPS = ("white", "black", "latine", "asian", "aian", "multiracial")
WIKIPEDIA_GROUPS = ("mena", "nhpi")
RACES = ("aian", "asian", "black", "latine", "mena", "nhpi", "white", "multiracial")
_PLAIN_NAME = re.compile(r"^[A-Za-z]{2,}$")
MIN_POOL_NAMES = 5


class LexiconMissing(LexiconError, RuntimeError):
    """The lexicon tables are absent or empty: run `lfh lexicon` first."""


NAME_KEY_REMOVED = frozenset("-'’‘ʼ")  # as the dbt macro's character class


def name_key(name: str) -> str:
    """Lowercase, accents stripped, hyphens and apostrophes removed, trimmed: the same folding as the dbt
    `normalize_name_key` macro."""
    decomposed = unicodedata.normalize("NFKD", name.strip().lower())
    return "".join(char for char in decomposed if not unicodedata.combining(char) and char not in NAME_KEY_REMOVED)


def _seed_words(file_name: str, column: str) -> set[str]:
    with open(seeds_dir() / file_name, newline="", encoding="utf-8") as handle:
        return {row[column].strip().lower() for row in csv.DictReader(handle)}


def excluded_name_keys(role_keys: list[str]) -> set[str]:
    """Words a simulated first name must not be: the cleaning rules (docs/METHOD.md §4.5) would drop or misread
    them."""
    words = {"american", "unspecified", "the", "a", "an", "and", "who"}
    words |= {token for key in role_keys for token in key.lower().split()}
    words |= _seed_words("known_non_names.csv", "non_name")
    words |= _seed_words("gender_indicator_words.csv", "indicator_word")
    words |= _seed_words("name_prefixes.csv", "prefix")
    return {word.rstrip(".") for word in words} | words


def read_lexicon(db_path: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The two lexicon tables, read-only. Raises LexiconMissing with what to run when they are not there."""
    if not db_path.exists():
        raise LexiconMissing(f"{db_path} does not exist: run `lfh lexicon` first (it writes the name tables)")
    with reading(db_path, "read the lexicon") as connection:  # waits for a running lexicon or build
        try:
            has_sex = connection.execute(
                "select count(*) from information_schema.columns where table_schema = 'raw' "
                "and table_name = 'census_first_names' and column_name = 'pct_female'").fetchone()[0]
            census = connection.sql(
                "select first_name, n_total, " + ", ".join(f"pct_{group}" for group in CENSUS_GROUPS)
                + (", pct_female" if has_sex else ", null::double as pct_female")  # lexicons written before it
                + " from raw.census_first_names").pl()
            wikipedia = connection.sql(
                "select first_name, n_bearers, pct_mena, pct_nhpi from raw.wikipedia_first_names").pl()
        except duckdb.CatalogException as exc:
            raise LexiconMissing(f"{db_path}: lexicon tables missing ({exc}); run `lfh lexicon` first") from exc
    if census.is_empty() or wikipedia.is_empty():
        raise LexiconMissing(f"{db_path}: raw.census_first_names or raw.wikipedia_first_names is empty; "
                             "run `lfh lexicon` first")
    return census, wikipedia


def _keyed(frame: pl.DataFrame) -> pl.DataFrame:
    """Adds the match key and keeps only keys that occur once in the table (an ambiguous key has no single p_r)."""
    keyed = frame.with_columns(pl.col("first_name").map_elements(name_key, return_dtype=pl.String).alias("key"))
    return keyed.filter(pl.len().over("key") == 1)


def name_weights(census: pl.DataFrame, wikipedia: pl.DataFrame) -> pl.DataFrame:
    """Per match key: p_r(x) as fractions for every race (0 where the name is not in that table), and counts."""
    census_part = _keyed(census).select(
        "key", pl.col("first_name").alias("census_name"), pl.col("n_total").cast(pl.Float64).alias("n_census"),
        pl.all_horizontal([pl.col(f"pct_{group}").is_not_null() for group in CENSUS_GROUPS]).alias("census_complete"),
        *[(pl.col(f"pct_{group}").cast(pl.Float64) / 100).alias(f"weight_{group}") for group in CENSUS_GROUPS],
        (pl.col("pct_female").cast(pl.Float64) / 100).alias("female_share"))
    wiki_part = _keyed(wikipedia).select(
        "key", pl.col("first_name").alias("wiki_name"), pl.col("n_bearers").cast(pl.Float64).alias("n_wikipedia"),
        *[(pl.col(f"pct_{group}").cast(pl.Float64) / 100).alias(f"weight_{group}") for group in WIKIPEDIA_GROUPS])
    joined = census_part.join(wiki_part, on="key", how="full", coalesce=True)
    # A name in one table has weight 0 for the other table's groups (fct_characters does the same).
    return joined.with_columns(
        *[pl.col(f"weight_{race}").fill_null(0.0) for race in RACES],
        pl.col("n_census").fill_null(0.0), pl.col("n_wikipedia").fill_null(0.0),
        pl.col("census_complete").fill_null(True),
        pl.coalesce("census_name", "wiki_name").alias("source_name"),
    )


def build_pools(config: SimConfig, census: pl.DataFrame, wikipedia: pl.DataFrame,
                role_keys: list[str]) -> pl.DataFrame:
    """One row per (pool, name): display name, probability within the pool, race weights p_r(x)."""
    weights = name_weights(census, wikipedia)
    excluded = excluded_name_keys(role_keys)
    eligible = weights.filter(
        pl.col("source_name").str.contains(_PLAIN_NAME.pattern)
        & ~pl.col("key").is_in(list(excluded))
        # a census row with a suppressed (null) share has no single p_r(x) to plant
        & pl.col("census_complete")
    )
    pools = []
    for pool in RACE_POOLS:
        count_column, minimum = (("n_wikipedia", config.min_count_wikipedia) if pool in WIKIPEDIA_GROUPS
                                 else ("n_census", config.min_count_census))
        candidates = eligible.filter(pl.col(count_column) >= minimum)
        if candidates.is_empty():
            candidates = eligible.filter(pl.col(count_column) > 0)
        # The most common names clearly associated with the group (as a story writer would pick); where the
        # lexicon has too few such names (AI/AN, NH/PI), the names with the highest share instead.
        common = candidates.filter(pl.col(f"weight_{pool}") >= config.pool_min_share) \
            .sort([count_column, "key"], descending=[True, False]).head(config.pool_size)
        if common.height < MIN_POOL_NAMES:
            common = candidates.sort([f"weight_{pool}", count_column, "key"], descending=[True, True, False]) \
                .head(config.pool_size)
        chosen = common.filter(pl.col(f"weight_{pool}") > 0)
        if chosen.is_empty():
            raise LexiconMissing(f"no first name in the lexicon has a share for group {pool!r}: "
                                 "check the lexicon tables (lfh lexicon) or the custom lexicon")
        draw = chosen[count_column].to_numpy() ** config.pool_weight_power
        female_share = chosen["female_share"].to_numpy(allow_copy=True).astype(float)
        pools.append(chosen.with_columns(
            pl.lit(pool).alias("pool"),
            pl.Series("draw_probability", draw / draw.sum()),
            *[pl.Series(f"draw_probability_{gender}", _gendered(draw, female_share, gender))
              for gender in ("female", "male")],
            pl.col("source_name").str.to_titlecase().alias("display_name"),
        ))
    return pl.concat(pools).select(
        "pool", "display_name", "key", "draw_probability", "draw_probability_female", "draw_probability_male",
        "female_share", *[f"weight_{race}" for race in RACES])


def _gendered(draw: np.ndarray, female_share: np.ndarray, gender: str) -> np.ndarray:
    """Draw probabilities for a character of this gender: only names mostly borne by that sex (Census 2020
    pct_female / pct_male); where the pool has none, names of unknown sex (absent from the Census table); where
    it has none of those either, the whole pool."""
    known = ~np.isnan(female_share)
    consistent = known & ((female_share >= 0.5) if gender == "female" else (female_share < 0.5))
    for mask in (consistent, ~known, np.ones_like(known)):
        if mask.any():
            weights = np.where(mask, draw, 0.0)
            return weights / weights.sum()
    raise AssertionError("unreachable: a pool has at least one name")


def draw_column(gender_outcome: str) -> str:
    """The pools' probability column a character of this gender outcome draws its name with."""
    return f"draw_probability_{gender_outcome}" if gender_outcome in ("female", "male") else "draw_probability"


def pool_mean_weights(pools: pl.DataFrame, gender_outcome: str | None = None) -> dict[str, np.ndarray]:
    """pool -> expected p_r(x) of a name drawn from it (by a character of gender_outcome), in RACES order."""
    probability = draw_column(gender_outcome or "any")
    means = pools.group_by("pool").agg(
        [(pl.col(f"weight_{race}") * pl.col(probability)).sum().alias(race) for race in RACES])
    return {row["pool"]: np.array([row[race] for race in RACES]) for row in means.iter_rows(named=True)}
