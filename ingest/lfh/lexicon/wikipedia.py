"""Per first name, the share of Wikipedia biographies with a MENA or an NH/PI nationality (name2nat's table).

Choices (docs/METHOD.md §5 leaves them open):
- First name = the first whitespace token of the full name, after leading titles (Sir, Prince, Saint, Dr., ...)
  are removed as long as a word follows them ("Prince", the musician, stays "Prince").
- A first name that is an initial or an abbreviation (contains a dot: "J.", "J.R.", "Md."), contains a digit
  ("50 Cent", "1st Dalai Lama"), or has fewer than two letters is not a first name: that biography is left out.
- Leading particles are kept as the first name ("Al Pacino", "Abdul Kalam", "Ben Kingsley", "Abu Bakr"): in the
  populations concerned they are given names or part of one.
- Punctuation at either end of the token is stripped ("Louis," -> "Louis", "Lil'" -> "Lil"); hyphens and
  apostrophes inside are kept ("Jean-Pierre", "D'Angelo"). Case and accents are kept: the match key is made
  in SQL, so two spellings that fold to one key ("José", "Jose") are two rows here and must be summed by key.
- A person with k distinct nationalities counts 1/k toward each (fractional), so n_mena + n_nhpi + n_other =
  n_bearers and a Lebanese-American counts half MENA. A person with no nationality is left out.
- pct_mena = 100 * n_mena / n_bearers, pct_nhpi likewise (percent, 0-100, like the Census table).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import polars as pl
import pyarrow as pa

# Leading words that are a title, not a given name. "Sultan", "Shah", "Amir", "Emir", "Syed" are not here:
# they are common given names in the MENA and South Asian biographies.
TITLE_TOKENS: tuple[str, ...] = (
    "Sir", "Dame", "Lord", "Lady", "Prince", "Princess", "King", "Queen", "Emperor", "Empress", "Tsar",
    "Archduke", "Duke", "Duchess", "Grand", "Count", "Countess", "Baron", "Baroness",
    "Saint", "St.", "St", "Blessed", "Pope", "Cardinal", "Bishop", "Rabbi", "Imam", "Mullah", "Maulana",
    "Sheikh", "Shaikh", "Sheik", "Haji", "Hajji", "Reverend", "Rev.", "Brother", "Sister", "Father", "Mother",
    "Dr.", "Dr", "Mr.", "Mrs.", "Ms.", "General", "Captain",
)
# Letters a name may start or end with (modifier letters such as the okina are stripped like punctuation).
_EDGE_JUNK = r"^[^\p{Lu}\p{Ll}\p{Lt}\p{Lo}]+|[^\p{Lu}\p{Ll}\p{Lt}\p{Lo}\p{M}]+$"


@dataclass(frozen=True)
class WikipediaTable:
    frame: pl.DataFrame  # first_name, n_bearers, n_mena, n_nhpi, pct_mena, pct_nhpi
    persons: int
    persons_without_first_name: int
    persons_without_nationality: int
    unmapped_demonyms: list[str]  # demonyms in the data that the seed does not list (counted as 'other')
    mena_share_of_persons: float  # percent of all counted persons, fractional counting
    nhpi_share_of_persons: float


def first_name_expr(full_name: pl.Expr) -> pl.Expr:
    """The first name of a full name, or null when the biography has none usable (see module doc)."""
    titles = "|".join(re.escape(title) for title in TITLE_TOKENS)
    without_titles = full_name.str.strip_chars().str.replace(rf"^(?:(?:{titles})\s+)+", "")
    token = without_titles.str.extract(r"^(\S+)", 1)
    cleaned = token.str.replace_all(_EDGE_JUNK, "")
    unusable = (
        token.is_null()
        | token.str.contains(".", literal=True)
        | token.str.contains(r"\d")
        | (cleaned.str.count_matches(r"\p{L}") < 2)
    )
    return pl.when(unusable).then(None).otherwise(cleaned)


def persons_frame(name_nationalities: dict[str, list[str]]) -> pl.DataFrame:
    """full_name, demonyms (distinct) as a frame; built through Arrow offsets, 15x faster than from nested lists."""
    values = list(name_nationalities.values())
    offsets = pa.array([0, *itertools.accumulate(map(len, values))], type=pa.int64())
    flat = pa.array(list(itertools.chain.from_iterable(values)), type=pa.large_string())
    table = pa.table({
        "full_name": pa.array(list(name_nationalities.keys()), type=pa.large_string()),
        "demonyms": pa.LargeListArray.from_arrays(offsets, flat),
    })
    return pl.DataFrame(table).with_columns(pl.col("demonyms").list.unique())


def _region_share(region_demonyms: list[str]) -> pl.Expr:
    """Per person, the fraction of their distinct nationalities that fall in the region."""
    return (
        pl.col("demonyms").list.eval(pl.element().is_in(region_demonyms).cast(pl.Float64)).list.mean()
    )


def derive_first_name_shares(persons: pl.DataFrame, regions: dict[str, str]) -> WikipediaTable:
    """From persons_frame(...) and the demonym -> region map, the per-first-name table (see module doc)."""
    mena = sorted(d for d, region in regions.items() if region == "mena")
    nhpi = sorted(d for d, region in regions.items() if region == "nhpi")
    total = persons.height
    seen_demonyms = persons.select(pl.col("demonyms").explode().drop_nulls().unique())["demonyms"].to_list()
    unmapped = sorted(d for d in seen_demonyms if d not in regions)

    shaped = persons.select(
        first_name_expr(pl.col("full_name")).alias("first_name"),
        pl.col("demonyms").list.len().alias("nationalities"),
        _region_share(mena).alias("mena_share"),
        _region_share(nhpi).alias("nhpi_share"),
    )
    without_name = shaped.filter(pl.col("first_name").is_null()).height
    without_nationality = shaped.filter(pl.col("first_name").is_not_null() & (pl.col("nationalities") == 0)).height
    counted = shaped.filter(pl.col("first_name").is_not_null() & (pl.col("nationalities") > 0))

    frame = (
        counted.group_by("first_name")
        .agg(
            pl.len().cast(pl.Int64).alias("n_bearers"),
            pl.col("mena_share").sum().alias("n_mena"),
            pl.col("nhpi_share").sum().alias("n_nhpi"),
        )
        .with_columns(
            (100.0 * pl.col("n_mena") / pl.col("n_bearers")).alias("pct_mena"),
            (100.0 * pl.col("n_nhpi") / pl.col("n_bearers")).alias("pct_nhpi"),
        )
        .sort("first_name")
    )
    counted_persons = max(counted.height, 1)
    return WikipediaTable(
        frame=frame,
        persons=total,
        persons_without_first_name=without_name,
        persons_without_nationality=without_nationality,
        unmapped_demonyms=unmapped,
        mena_share_of_persons=100.0 * float(counted["mena_share"].sum()) / counted_persons,
        nhpi_share_of_persons=100.0 * float(counted["nhpi_share"].sum()) / counted_persons,
    )
