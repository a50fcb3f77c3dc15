"""Stable identities for stories and label responses, and model-name aliases.

A story's id comes from its content (model after aliases, query, text) and its occurrence number among
identical stories of that model in the same source, so the same file arriving again maps to the same ids while
two generations that happen to share a text stay two observations. A story of a named generation run also
carries the run's name in its id, so a later wave that repeats a text is a new observation of that wave.

story_ids / response_ids compute the same ids for a whole frame at once (ingest): the parts are joined in polars
and hashed with hashlib, whose SHA-256 uses the CPU's SHA instructions (measured faster here than DuckDB's
sha256(), which is software-only).
"""

from __future__ import annotations

import csv
import hashlib
from functools import cache

import polars as pl

from lfh.paths import seeds_dir

SEPARATOR = "\x1f"


def _digest(*parts: object) -> str:
    text = SEPARATOR.join("" if part is None else str(part) for part in parts)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def story_id(model_canonical: str, query: str, story_text: str, occurrence: int, run_name: str | None = None) -> str:
    """The id of a story. A story of a named run (`lfh generate --run NAME`) is that run's own even when its text
    repeats an earlier run's: the name is part of its id. The default run keeps the id of its content alone."""
    if run_name:
        return _digest(model_canonical, query, story_text, occurrence, run_name)
    return _digest(model_canonical, query, story_text, occurrence)


def response_id(story: str, labeler_model: str, prompt_version: str, sample_index: int) -> str:
    return _digest(story, labeler_model, prompt_version, sample_index)


def _frame_digests(frame: pl.DataFrame, columns: list[str]) -> pl.Series:
    """_digest(*row) for every row of frame's columns: None -> "", integers as str() writes them."""
    parts = [pl.col(name).cast(pl.String).fill_null("") for name in columns]
    joined = frame.select(pl.concat_str(parts, separator=SEPARATOR).alias("joined")).to_series().to_list()
    sha256 = hashlib.sha256
    return pl.Series([sha256(text.encode("utf-8")).hexdigest() for text in joined], dtype=pl.String)


def story_ids(frame: pl.DataFrame, model: str = "model_canonical", query: str = "query", text: str = "story_text",
              occurrence: str = "occurrence") -> pl.Series:
    """story_id of every row (occurrence an integer column): the same values as story_id() row by row."""
    return _frame_digests(frame, [model, query, text, occurrence])


def response_ids(frame: pl.DataFrame, story: str = "story_id", labeler_model: str = "labeler_model",
                 prompt_version: str = "prompt_version", sample_index: str = "sample_index") -> pl.Series:
    """response_id of every row (sample_index an integer column): the same values as response_id() row by row."""
    return _frame_digests(frame, [story, labeler_model, prompt_version, sample_index])


@cache
def model_aliases() -> dict[str, str]:
    """alias -> canonical model name, from seeds/model_aliases.csv (matched case-insensitively)."""
    with open(seeds_dir() / "model_aliases.csv", newline="", encoding="utf-8") as handle:
        return {row["alias"].strip().lower(): row["model"].strip() for row in csv.DictReader(handle)}


def canonical_model(name: str) -> str:
    """The canonical model name; names without an alias pass through unchanged (trimmed)."""
    cleaned = name.strip()
    return model_aliases().get(cleaned.lower(), cleaned)
