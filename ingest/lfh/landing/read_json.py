"""Reading JSON Lines (or a JSON array) with DuckDB: one pass, every value's JSON type kept, bad lines kept as rows."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl

from lfh.landing.errors import UnreadableFileError
from lfh.landing.records import RAW_RECORD, SOURCE_ROW, RawRecords, kind_column

# json_type() names -> the kinds RawRecords uses
_KINDS = {"VARCHAR": "string", "BIGINT": "integer", "UBIGINT": "integer", "DOUBLE": "number",
          "BOOLEAN": "boolean", "NULL": "null"}
RECORD_KIND = "__record_kind"  # 'object', 'malformed' (not JSON) or the JSON type of a non-object line


def _kind_expr(column: str) -> pl.Expr:
    return (pl.when(pl.col(column).is_null()).then(pl.lit("null"))
            .otherwise(pl.col(column).replace_strict(_KINDS, default="other")))


def _json_layout(path: Path) -> str:
    """'array' for a file holding one JSON array, else 'newline_delimited' (where bad lines can be kept as rows)."""
    with open(path, "rb") as handle:
        start = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    return "array" if start.startswith(b"[") else "newline_delimited"


def read_json_records(path: Path, wanted_keys: frozenset[str]) -> RawRecords:
    """The file's records; keys outside wanted_keys are listed in `columns` but not extracted."""
    layout = _json_layout(path)
    reader = duckdb.connect()
    try:
        reader.execute(
            "create table lines as select json from read_json_objects(?, format=?, ignore_errors=?)",
            [str(path), layout, layout == "newline_delimited"],
        )
        keys = [row[0] for row in reader.execute(
            "select distinct unnest(json_keys(json)) from lines where json_type(json) = 'OBJECT' order by 1"
        ).fetchall()]
        extracted = [key for key in keys if key in wanted_keys]
        paths = [f'$."{key}"' for key in extracted]
        path_list = "[" + ", ".join("'" + p.replace("'", "''") + "'" for p in paths) + "]"
        value_lists = (f", json_extract_string(json, {path_list}) as _values, json_type(json, {path_list}) as _types"
                       if extracted else "")
        table = reader.execute(
            f"select rowid + 1 as {SOURCE_ROW}, json as {RAW_RECORD}, "
            f"case when json is null then 'malformed' else lower(json_type(json)) end as {RECORD_KIND}"
            f"{value_lists} from lines order by rowid"
        ).pl()
    except duckdb.Error as exc:
        raise UnreadableFileError(path, f"not readable as JSON Lines or a JSON array ({exc})") from exc
    finally:
        reader.close()
    if table.height and table[RECORD_KIND].eq("malformed").all():
        raise UnreadableFileError(path, "no line of this file is valid JSON: is it really JSON Lines?")
    columns = [
        expression
        for index, key in enumerate(extracted)
        for expression in (
            pl.col("_values").list.get(index).alias(key),
            pl.col("_types").list.get(index).alias(f"_type_{index}"),
        )
    ]
    frame = table.with_columns(columns).with_columns(
        [_kind_expr(f"_type_{index}").alias(kind_column(key)) for index, key in enumerate(extracted)]
    ).drop([f"_type_{index}" for index in range(len(extracted))] + (["_values", "_types"] if extracted else []))
    frame = frame.with_columns(pl.col(SOURCE_ROW).cast(pl.Int64))
    return RawRecords(frame=frame, columns=keys, source_kind="jsonl")
