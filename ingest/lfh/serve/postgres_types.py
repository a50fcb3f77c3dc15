"""DuckDB column types as PostgreSQL types, and how to read each column so psycopg can COPY it."""

from __future__ import annotations

import re
from dataclasses import dataclass

SCALARS: dict[str, str] = {
    "VARCHAR": "text",
    "BOOLEAN": "boolean",
    "TINYINT": "smallint",
    "SMALLINT": "smallint",
    "INTEGER": "integer",
    "BIGINT": "bigint",
    "HUGEINT": "numeric(39, 0)",
    "UTINYINT": "smallint",
    "USMALLINT": "integer",
    "UINTEGER": "bigint",
    "UBIGINT": "numeric(20, 0)",
    "UHUGEINT": "numeric(39, 0)",
    "FLOAT": "real",
    "DOUBLE": "double precision",
    "DATE": "date",
    "TIME": "time",
    "TIMESTAMP": "timestamp",
    "TIMESTAMP_S": "timestamp",
    "TIMESTAMP_MS": "timestamp",
    "TIMESTAMP_NS": "timestamp",
    "TIMESTAMP WITH TIME ZONE": "timestamptz",
    "INTERVAL": "interval",
    "UUID": "uuid",
    "BLOB": "bytea",
    "JSON": "jsonb",
}

DECIMAL = re.compile(r"^DECIMAL\((\d+),\s*(\d+)\)$")
LIST = re.compile(r"^(.*)\[\d*\]$")


@dataclass(frozen=True)
class ColumnMapping:
    postgres_type: str
    select_expression: str  # DuckDB SQL reading the column in a form psycopg's COPY accepts


def _scalar(duckdb_type: str) -> str | None:
    if duckdb_type in SCALARS:
        return SCALARS[duckdb_type]
    decimal = DECIMAL.match(duckdb_type)
    if decimal:
        return f"numeric({decimal.group(1)}, {decimal.group(2)})"
    return None


def map_column(quoted_name: str, duckdb_type: str) -> ColumnMapping:
    """Scalars map one to one; lists of scalars become arrays; anything nested or unknown (STRUCT, MAP,
    UNION, lists of lists, ENUM) is sent as JSON or text so no value is lost or refused."""
    normalized = duckdb_type.strip().upper()
    scalar = _scalar(normalized)
    if scalar is not None:
        expression = f"cast({quoted_name} as varchar)" if scalar == "jsonb" else quoted_name
        return ColumnMapping(scalar, expression)
    listed = LIST.match(normalized)
    if listed:
        element = _scalar(listed.group(1))
        if element is not None and element not in {"jsonb", "bytea"}:
            return ColumnMapping(f"{element}[]", quoted_name)
    if normalized.startswith(("STRUCT", "MAP", "UNION")) or listed:
        return ColumnMapping("jsonb", f"cast(to_json({quoted_name}) as varchar)")
    return ColumnMapping("text", f"cast({quoted_name} as varchar)")
