"""Reading JSON Lines (or a JSON array) with DuckDB: one parse per line, every value's JSON type kept, bad lines
kept as rows (found again, with their original text, in a second pass only when a file has such rows)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl

from lfh.landing.errors import UnreadableFileError
from lfh.landing.records import SOURCE_ROW, RawRecords, kind_column

# json_type() names -> the kinds RawRecords uses
_KINDS = {"VARCHAR": "string", "BIGINT": "integer", "UBIGINT": "integer", "DOUBLE": "number",
          "BOOLEAN": "boolean", "NULL": "null"}
RECORD_KIND = "__record_kind"  # 'object', 'malformed' (not JSON) or the JSON type of a non-object line


def _json_layout(path: Path) -> str:
    """'array' for a file holding one JSON array, else 'newline_delimited' (where bad lines can be kept as rows)."""
    with open(path, "rb") as handle:
        start = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    return "array" if start.startswith(b"[") else "newline_delimited"


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _reader_call(function: str, path: Path, layout: str, extra: str = "") -> str:
    ignore = "true" if layout == "newline_delimited" else "false"
    return f"{function}({_quoted(str(path))}, format='{layout}', ignore_errors={ignore}{extra})"


def _original_lines(path: Path, layout: str, rows: list[int] | None) -> pl.DataFrame:
    """source_row, __raw_record (the record's JSON text, null when not JSON) and its record kind."""
    reader = duckdb.connect()
    try:
        reader.execute(f"create table lines as select json from {_reader_call('read_json_objects', path, layout)}")
        wanted = ""
        if rows is not None:
            reader.register("wanted_rows", pl.DataFrame({SOURCE_ROW: rows}, schema={SOURCE_ROW: pl.Int64}))
            wanted = f"where rowid + 1 in (select {SOURCE_ROW} from wanted_rows)"
        return reader.execute(
            f"select (rowid + 1)::bigint as {SOURCE_ROW}, json as __raw_record, "
            f"case when json is null then 'malformed' else lower(json_type(json)) end as {RECORD_KIND} "
            f"from lines {wanted} order by rowid"
        ).pl()
    finally:
        reader.close()


def _all_keys(path: Path, layout: str) -> list[str]:
    reader = duckdb.connect()
    try:
        return [row[0] for row in reader.execute(
            f"select distinct unnest(json_keys(json)) from {_reader_call('read_json_objects', path, layout)} "
            "where json_type(json) = 'OBJECT' order by 1").fetchall()]
    finally:
        reader.close()


def read_json_records(path: Path, wanted_keys: frozenset[str]) -> RawRecords:
    """The file's records with one column per wanted key (other keys are ignored, as the contract says)."""
    layout = _json_layout(path)
    keys = sorted(wanted_keys)
    declared = "{" + ", ".join(f"{_quoted(key)}: 'JSON'" for key in keys) + "}"
    values = ", ".join(f'"{key}" ->> \'$\' as "{key}", json_type("{key}") as "{kind_column(key)}"' for key in keys)
    reader = duckdb.connect()
    try:
        table = reader.execute(
            f"select {values} from {_reader_call('read_json', path, layout, f', columns={declared}')}"
        ).pl()
    except duckdb.Error as exc:
        raise UnreadableFileError(path, f"not readable as JSON Lines or a JSON array ({exc})") from exc
    finally:
        reader.close()
    table = table.with_row_index(SOURCE_ROW, offset=1).with_columns(
        pl.col(SOURCE_ROW).cast(pl.Int64),
        *[pl.when(pl.col(kind_column(key)).is_null()).then(pl.lit("null"))
          .otherwise(pl.col(kind_column(key)).replace_strict(_KINDS, default="other")).alias(kind_column(key))
          for key in keys],
    )
    # A line with none of the wanted keys may be malformed or not an object: look at those lines' text.
    empty = table.filter(pl.all_horizontal([pl.col(key).is_null() for key in keys]))[SOURCE_ROW].to_list()
    kinds = _original_lines(path, layout, empty).select(SOURCE_ROW, RECORD_KIND) if empty else None
    if kinds is not None and kinds.height == table.height and kinds[RECORD_KIND].eq("malformed").all():
        raise UnreadableFileError(path, "no line of this file is valid JSON: is it really JSON Lines?")
    table = table.join(kinds, on=SOURCE_ROW, how="left") if kinds is not None else table
    table = table.with_columns(
        pl.col(RECORD_KIND).fill_null("object") if kinds is not None else pl.lit("object").alias(RECORD_KIND))
    present = [key for key in keys if table[key].null_count() < table.height]
    return RawRecords(
        frame=table, columns=present, source_kind="jsonl",
        describe_columns=lambda: _all_keys(path, layout),
        load_raw_records=lambda rows: _original_lines(path, layout, rows).select(SOURCE_ROW, "__raw_record"),
    )
