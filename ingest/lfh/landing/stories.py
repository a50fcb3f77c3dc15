"""Story candidates from any format -> identified, checked stories (ids from lfh.identity) and row rejections.

A candidate frame has: source_row, model, query, subject, object, role_category, text, generated_at,
given_story_id, prompt_id (all String), prompt_tokens, completion_tokens (Int32, usage when known), model_kind,
query_kind, text_kind (value kinds, see records.py), bad_tokens (Boolean: a token count that is not an integer)
and keep_empty_text (Boolean: the row carries labels of an empty answer, so the empty answer is an observation).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from lfh.identity import canonical_model, story_ids
from lfh.landing.catalog import known_queries, normalized_query_expr

STORY_COLUMNS = ["story_id", "model", "model_canonical", "query", "subject", "object", "role_category",
                 "story_text", "generated_at", "occurrence", "prompt_id", "prompt_tokens", "completion_tokens",
                 "source_row"]


# What a generator says about each story's run (lfh generate writes them; null where a file lacks them).
RUN_COLUMNS = ["run_id", "model_id", "model_version", "system_fingerprint"]


def _blank(column: str) -> pl.Expr:
    return pl.col(column).is_null() | (pl.col(column).str.strip_chars() == "")


IDENTICAL = ["model_canonical", "query", "story_text"]
_KEY = ["_key_a", "_key_b"]


def _content_key(frame: pl.DataFrame) -> pl.DataFrame:
    """frame with a 128-bit key of (model_canonical, query, story_text): two independently seeded 64-bit hashes,
    so the counts of earlier batches are kept in 16 bytes per distinct story instead of its text."""
    parts = pl.concat_str([pl.col(name).fill_null("") for name in IDENTICAL], separator="\x1f")
    return frame.with_columns(parts.hash(seed=0x1F2E3D4C).alias("_key_a"), parts.hash(seed=0x5B6A7988).alias("_key_b"))


class OccurrenceCounter:
    """How many copies of each identical (model, query, text) a file's earlier batches held, so a story's
    occurrence number is the same whether its file is read in one batch or many.

    Kept as arrays sorted by the key's first half (numpy: 20 bytes per distinct story, lookups by binary search,
    one memory copy per batch to insert the new keys), not as a frame re-grouped for every batch."""

    def __init__(self) -> None:
        self._a = np.empty(0, dtype=np.uint64)
        self._b = np.empty(0, dtype=np.uint64)
        self._seen = np.empty(0, dtype=np.int32)

    def _find(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Index of each (a, b) in the arrays, -1 when absent."""
        found = np.full(len(a), -1, dtype=np.int64)
        if not len(self._a):
            return found
        start = np.searchsorted(self._a, a, side="left")
        for offset in range(len(self._a)):  # one step unless keys share their first half (a rare collision)
            index = start + offset
            inside = index < len(self._a)
            candidate = np.where(inside, index, 0)
            same_a = inside & (self._a[candidate] == a)
            if not same_a.any():
                break
            match = same_a & (found < 0) & (self._b[candidate] == b)
            found[match] = candidate[match]
        return found

    def number(self, frame: pl.DataFrame) -> pl.Series:
        """occurrence of each row of frame (sorted by source_row, after the batches passed before), and count them."""
        keyed = _content_key(frame.select(IDENTICAL))
        within = keyed.select(pl.int_range(1, pl.len() + 1, dtype=pl.Int32).over(_KEY)).to_series().to_numpy()
        row_a, row_b = (keyed[name].to_numpy() for name in _KEY)
        row_found = self._find(row_a, row_b)
        earlier = np.where(row_found >= 0, self._seen[np.maximum(row_found, 0)] if len(self._seen) else 0, 0)
        occurrence = pl.Series("occurrence", within + earlier, dtype=pl.Int32)
        distinct = keyed.group_by(_KEY).agg(pl.len().cast(pl.Int32).alias("n"))
        a, b, n = (distinct[name].to_numpy() for name in (*_KEY, "n"))
        found = self._find(a, b)
        self._seen[found[found >= 0]] += n[found >= 0]
        new = np.flatnonzero(found < 0)
        new = new[np.argsort(a[new], kind="stable")]  # keys inserted at the same place must be in order too
        positions = np.searchsorted(self._a, a[new], side="left")
        self._a = np.insert(self._a, positions, a[new])
        self._b = np.insert(self._b, positions, b[new])
        self._seen = np.insert(self._seen, positions, n[new])
        return occurrence.alias("occurrence")


def identify_stories(candidates: pl.DataFrame, occurrences: OccurrenceCounter | None = None) -> pl.DataFrame:
    """Adds model_canonical, occurrence (order among identical canonical model, query, text in this file, by row,
    counting the file's earlier batches through occurrences) and story_id (the given one, else
    lfh.identity.story_id of the content, computed for the whole frame)."""
    models = [name for name in candidates["model"].unique().to_list() if name is not None]
    aliases = {name: canonical_model(name) for name in models}
    frame = candidates.sort("source_row").with_columns(
        pl.col("model").replace_strict(aliases, default=None, return_dtype=pl.String).alias("model_canonical"),
        pl.col("text").fill_null("").alias("story_text"),
    )
    if occurrences is None:
        frame = frame.with_columns(pl.int_range(1, pl.len() + 1, dtype=pl.Int32).over(IDENTICAL).alias("occurrence"))
    else:
        frame = frame.with_columns(occurrences.number(frame))
    return frame.with_columns(pl.coalesce(pl.col("given_story_id"), story_ids(frame)).alias("story_id"))


def rejection_reason(catalog: frozenset[str] | None = None) -> pl.Expr:
    """Why a story candidate cannot be used (null when it can). First matching reason wins."""
    queries = pl.Series("known", sorted(catalog if catalog is not None else known_queries()), dtype=pl.String)
    unknown_prompt = ~normalized_query_expr("query").is_in(queries.implode()) & _blank("role_category")
    return (
        pl.when(pl.col("model_kind").is_in(["string", "null"]).not_() | _blank("model")).then(pl.lit("no_model"))
        .when(pl.col("query_kind").is_in(["string", "null"]).not_() | _blank("query")).then(pl.lit("no_query"))
        .when(pl.col("text_kind").is_in(["string", "null"]).not_()).then(pl.lit("text_not_string"))
        .when(_blank("text") & pl.col("keep_empty_text").not_()).then(pl.lit("no_text"))
        .when(unknown_prompt).then(pl.lit("unknown_prompt"))
        .when(pl.col("bad_tokens")).then(pl.lit("bad_token_count"))
        .otherwise(pl.lit(None, dtype=pl.String))
    )


REASON_DETAILS: dict[str, str] = {
    "no_model": "the model is missing or empty",
    "no_query": "the query (prompt text) is missing or empty",
    "text_not_string": "the story text is not a string",
    "no_text": "the story text is missing or empty",
    "unknown_prompt": "the query is not in seeds/prompt_catalog.csv (whitespace-normalised) and the row has no "
                      "Role Category to place it: add the prompt to the catalog or a role_category",
    "bad_token_count": "prompt_tokens or completion_tokens is not an integer",
}


def split_stories(identified: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(accepted stories with STORY_COLUMNS and the RUN_COLUMNS the candidates have, rejections: source_row,
    reason, detail)."""
    checked = identified.with_columns(rejection_reason().alias("reason"))
    accepted = checked.filter(pl.col("reason").is_null()).select(
        STORY_COLUMNS + [name for name in RUN_COLUMNS if name in identified.columns])
    rejected = checked.filter(pl.col("reason").is_not_null()).select(
        "source_row", "reason", pl.col("reason").replace_strict(REASON_DETAILS, return_dtype=pl.String).alias("detail")
    )
    return accepted, rejected
