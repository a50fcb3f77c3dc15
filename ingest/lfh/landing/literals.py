"""Safe parsing of the study's Python-literal list cells (`['John']`, `['{...}', '{...}']`): ast.literal_eval only."""

from __future__ import annotations

import ast

import polars as pl


def parse_string_list(cell: str | None) -> list[str] | None:
    """The list of strings a cell holds; None when the cell is not a Python-literal list (or tuple) of strings."""
    if cell is None:
        return None
    try:
        value = ast.literal_eval(cell.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if isinstance(value, list | tuple) and all(isinstance(element, str) for element in value):
        return list(value)
    return None


def string_list_column(column: str) -> pl.Expr:
    """The parsed list per cell (null for an empty cell or an unreadable one: tell them apart with the raw cell)."""
    return pl.col(column).map_elements(parse_string_list, return_dtype=pl.List(pl.String), skip_nulls=True)
