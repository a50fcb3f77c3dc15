"""Story candidates from any format -> identified, checked stories (ids from lfh.identity) and row rejections.

A candidate frame has: source_row, model, query, subject, object, role_category, text, generated_at,
given_story_id, prompt_id (all String), prompt_tokens, completion_tokens (Int32, usage when known), model_kind,
query_kind, text_kind (value kinds, see records.py), bad_tokens (Boolean: a token count that is not an integer)
and keep_empty_text (Boolean: the row carries labels of an empty answer, so the empty answer is an observation).
"""

from __future__ import annotations

import polars as pl

from lfh.identity import canonical_model, story_ids
from lfh.landing.catalog import known_queries, normalized_query_expr

STORY_COLUMNS = ["story_id", "model", "model_canonical", "query", "subject", "object", "role_category",
                 "story_text", "generated_at", "occurrence", "prompt_id", "prompt_tokens", "completion_tokens",
                 "source_row"]


def _blank(column: str) -> pl.Expr:
    return pl.col(column).is_null() | (pl.col(column).str.strip_chars() == "")


def identify_stories(candidates: pl.DataFrame) -> pl.DataFrame:
    """Adds model_canonical, occurrence (order among identical canonical model, query, text in this file, by row)
    and story_id (the given one, else lfh.identity.story_id of the content, computed for the whole frame)."""
    models = [name for name in candidates["model"].unique().to_list() if name is not None]
    aliases = {name: canonical_model(name) for name in models}
    frame = candidates.sort("source_row").with_columns(
        pl.col("model").replace_strict(aliases, default=None, return_dtype=pl.String).alias("model_canonical"),
        pl.col("text").fill_null("").alias("story_text"),
    )
    identical = ["model_canonical", "query", "story_text"]
    frame = frame.with_columns(pl.int_range(1, pl.len() + 1, dtype=pl.Int32).over(identical).alias("occurrence"))
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
    """(accepted stories with STORY_COLUMNS, rejections: source_row, reason, detail)."""
    checked = identified.with_columns(rejection_reason().alias("reason"))
    accepted = checked.filter(pl.col("reason").is_null()).select(STORY_COLUMNS)
    rejected = checked.filter(pl.col("reason").is_not_null()).select(
        "source_row", "reason", pl.col("reason").replace_strict(REASON_DETAILS, return_dtype=pl.String).alias("detail")
    )
    return accepted, rejected
