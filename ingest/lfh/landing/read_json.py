"""Reading JSON Lines (or a JSON array) with DuckDB, streamed in batches: one parse per line, every value's JSON
type kept, bad lines kept as rows. The original text of rejected records (and whether a bad line was malformed
or not an object) is found in one more streamed pass at the end, only when the file has rejected rows.

A UTF-8 byte-order mark at the start of the file (Windows editors write one) is not part of the first record:
DuckDB reads that line as malformed, so the first record is read again from its text without the mark.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import duckdb
import polars as pl

from lfh.landing.errors import UnreadableFileError
from lfh.landing.reader_db import arrow_frames, reader_connection
from lfh.landing.records import RAW_RECORD, SOURCE_ROW, RawRecords, RecordStream, kind_column, row_offsets

# json_type() names -> the kinds RawRecords uses
_KINDS = {"VARCHAR": "string", "BIGINT": "integer", "UBIGINT": "integer", "DOUBLE": "number",
          "BOOLEAN": "boolean", "NULL": "null"}
RECORD_KIND = "__record_kind"  # 'object', 'malformed' (not JSON) or the JSON type of a non-object line
UTF8_BOM = b"\xef\xbb\xbf"

RECORD_DETAILS = {"malformed_json": "the line is not valid JSON (raw_record is null: see the file at this line)",
                  "not_an_object": "the line is JSON but not an object"}


def _json_layout(path: Path) -> str:
    """'array' for a file holding one JSON array, else 'newline_delimited' (where bad lines can be kept as rows)."""
    with open(path, "rb") as handle:
        start = handle.read(4096).lstrip(UTF8_BOM + b" \t\r\n")
    return "array" if start.startswith(b"[") else "newline_delimited"


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _reader_call(function: str, path: Path, layout: str, extra: str = "") -> str:
    ignore = "true" if layout == "newline_delimited" else "false"
    return f"{function}({_quoted(str(path))}, format='{layout}', ignore_errors={ignore}{extra})"


def _first_record_without_bom(path: Path, folder: Path) -> Path | None:
    """A file holding the first record's line without the byte-order mark, when the file starts with one."""
    with open(path, "rb") as handle:
        if handle.read(len(UTF8_BOM)) != UTF8_BOM:
            return None
        line = handle.readline()
        while line and not line.strip():  # DuckDB skips blank lines: the first record is the first non-blank one
            line = handle.readline()
    first = folder / "first_record.jsonl"
    first.write_bytes(line)
    return first


def _values_query(path: Path, layout: str, keys: list[str]) -> str:
    declared = "{" + ", ".join(f"{_quoted(key)}: 'JSON'" for key in keys) + "}"
    values = ", ".join(f'"{key}" ->> \'$\' as "{key}", json_type("{key}") as "{kind_column(key)}"' for key in keys)
    reader = _reader_call("read_json", path, layout, f", columns={declared}")
    return f"select {values} from {reader}"


def _with_kinds(frame: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    return frame.with_columns(
        pl.when(pl.col(kind_column(key)).is_null()).then(pl.lit("null"))
        .otherwise(pl.col(kind_column(key)).replace_strict(_KINDS, default="other")).alias(kind_column(key))
        for key in keys
    )


def _record_kinds(path: Path, layout: str, rows: pl.DataFrame, first: Path | None) -> pl.DataFrame:
    """source_row, __raw_record (the record's JSON text, null when not JSON) and __record_kind of the given rows,
    in one streamed pass over the file (the rows are few compared to the file, or at most one batch's worth)."""
    reader = reader_connection()
    try:
        reader.register("wanted_rows", rows.select(SOURCE_ROW).unique())
        found = reader.execute(
            f"select ordinality::bigint as {SOURCE_ROW}, json as {RAW_RECORD}, "
            f"case when json is null then 'malformed' else lower(json_type(json)) end as {RECORD_KIND} "
            f"from {_reader_call('read_json_objects', path, layout)} with ordinality "
            f"where ordinality in (select {SOURCE_ROW} from wanted_rows)"
        ).pl()
        if first is not None and found.filter(pl.col(SOURCE_ROW) == 1).height:
            replacement = reader.execute(
                f"select 1::bigint as {SOURCE_ROW}, json as {RAW_RECORD}, case when json is null then 'malformed' "
                f"else lower(json_type(json)) end as {RECORD_KIND} "
                f"from {_reader_call('read_json_objects', first, 'newline_delimited')}").pl()
            found = pl.concat([found.filter(pl.col(SOURCE_ROW) != 1), replacement.head(1)])
        return found
    except duckdb.Error as exc:
        raise UnreadableFileError(path, f"could not read its lines again for the rejected rows ({exc})") from exc
    finally:
        reader.close()


def _all_keys(path: Path, layout: str) -> list[str]:
    reader = reader_connection()
    try:
        return [row[0] for row in reader.execute(
            f"select distinct unnest(json_keys(json)) from {_reader_call('read_json_objects', path, layout)} "
            "where json_type(json) = 'OBJECT' order by 1").fetchall()]
    finally:
        reader.close()


def _batches(path: Path, layout: str, keys: list[str], rows_per_batch: int,
             folder: Path) -> Iterator[RawRecords]:
    first = _first_record_without_bom(path, folder)
    reader = reader_connection()
    try:
        try:
            arrow_batches = reader.execute(_values_query(path, layout, keys)).to_arrow_reader(rows_per_batch)
        except duckdb.Error as exc:
            raise UnreadableFileError(path, f"not readable as JSON Lines or a JSON array ({exc})") from exc
        for first_row, arrow_frame in arrow_frames(
                arrow_batches, path, lambda first_row, exc: "not readable as JSON Lines or a JSON array near "
                                                            f"record {first_row} ({exc})",
                errors=(duckdb.Error, OSError)):
            frame = _with_kinds(arrow_frame, keys)
            if first_row == 1 and first is not None and frame.height:
                first_values = _with_kinds(reader.execute(_values_query(first, "newline_delimited", keys)).pl(), keys)
                frame = pl.concat([first_values.head(1), frame.slice(1)], how="vertical_relaxed")
            frame = row_offsets(frame, first_row)
            if first_row == 1:
                _check_some_json(path, layout, frame, keys, first)
            present = [key for key in keys if frame[key].null_count() < frame.height]
            yield RawRecords(frame=frame, columns=present, source_kind="jsonl",
                             describe_columns=lambda: _all_keys(path, layout), raw_records_later=True)
    finally:
        reader.close()


def _check_some_json(path: Path, layout: str, first_batch: pl.DataFrame, keys: list[str], first: Path | None) -> None:
    """A file whose first batch has no wanted key at all may not be JSON: say so when no line of it parses."""
    if first_batch.select(pl.all_horizontal(pl.col(key).is_null() for key in keys).all()).item():
        kinds = _record_kinds(path, layout, first_batch.select(SOURCE_ROW), first)
        if kinds.height and kinds[RECORD_KIND].eq("malformed").all():
            raise UnreadableFileError(path, "no line of this file is valid JSON: is it really JSON Lines?")


def _complete_rejects(path: Path, layout: str, rejects: pl.DataFrame, folder: Path) -> Iterator[pl.DataFrame]:
    first = _first_record_without_bom(path, folder)
    kinds = _record_kinds(path, layout, rejects, first)
    completed = rejects.drop("raw_record", strict=False).join(kinds, on=SOURCE_ROW, how="left")
    reason = (pl.when(pl.col(RECORD_KIND) == "malformed").then(pl.lit("malformed_json"))
              .when(pl.col(RECORD_KIND) != "object").then(pl.lit("not_an_object"))
              .otherwise(pl.col("reason")))
    completed = completed.with_columns(reason.alias("reason")).with_columns(
        pl.col("reason").replace_strict(RECORD_DETAILS, default=pl.col("detail"), return_dtype=pl.String)
        .alias("detail"),
        pl.col(RAW_RECORD).alias("raw_record"),
    )
    # A bad line is one reject, whatever table it was meant for.
    yield completed.unique(subset=[SOURCE_ROW, "reason"], keep="first", maintain_order=True).select(rejects.columns)


def read_json_stream(path: Path, wanted_keys: frozenset[str], rows_per_batch: int) -> RecordStream:
    """The file's records in batches with one column per wanted key (other keys are ignored, as the contract says)."""
    layout = _json_layout(path)
    keys = sorted(wanted_keys)
    folder = Path(tempfile.mkdtemp(prefix="lfh-json-"))

    def batches() -> Iterator[RawRecords]:
        try:
            yield from _batches(path, layout, keys, rows_per_batch, folder)
        finally:
            _remove(folder)

    def complete(rejects: pl.DataFrame) -> Iterator[pl.DataFrame]:
        scratch = Path(tempfile.mkdtemp(prefix="lfh-json-"))
        try:
            yield from _complete_rejects(path, layout, rejects, scratch)
        finally:
            _remove(scratch)

    return RecordStream(source_kind="jsonl", batches=batches(), complete_rejects=complete)


def _remove(folder: Path) -> None:
    for child in folder.iterdir():
        child.unlink(missing_ok=True)
    folder.rmdir()
