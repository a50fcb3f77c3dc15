"""The prompt catalog (seeds/prompt_catalog.csv) as the set of known queries, compared whitespace-normalised."""

from __future__ import annotations

import csv
import re
from functools import cache

import polars as pl

from lfh.paths import seeds_dir

_WHITESPACE = re.compile(r"\s+")


def normalize_query(query: str) -> str:
    return _WHITESPACE.sub(" ", query).strip()


def normalized_query_expr(column: str) -> pl.Expr:
    return pl.col(column).str.replace_all(r"\s+", " ").str.strip_chars()


@cache
def known_queries() -> frozenset[str]:
    with open(seeds_dir() / "prompt_catalog.csv", newline="", encoding="utf-8") as handle:
        return frozenset(normalize_query(row["query"]) for row in csv.DictReader(handle))
