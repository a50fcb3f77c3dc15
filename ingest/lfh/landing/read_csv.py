"""Reading the project's CSV files with DuckDB, streamed in batches: every cell as text (types are checked later,
column by column).

The separator is detected (`,` `;` tab `|`) unless given; a UTF-8 byte-order mark is skipped; UTF-16 files are
recognised by their byte-order mark. Other encodings must be named (`--encoding latin-1`): Latin-1 can decode
any bytes, so guessing it would silently turn a broken UTF-8 file into wrong text. When the file is not valid in
its encoding, the error names the first bad byte, its line and the option that reads it.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl

from lfh.landing.errors import UnreadableFileError
from lfh.landing.reader_db import arrow_frames, reader_connection
from lfh.landing.records import RawRecords, RecordStream, row_offsets

ENCODINGS = {"utf-8": "utf-8", "utf8": "utf-8", "utf-16": "utf-16", "utf16": "utf-16", "latin-1": "latin-1",
             "latin1": "latin-1", "iso-8859-1": "latin-1", "windows-1252": "latin-1", "cp1252": "latin-1"}
SEPARATOR_NAMES = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|"}


@dataclass(frozen=True)
class CsvOptions:
    """encoding: None = UTF-8 (or UTF-16 when the file starts with its byte-order mark); separator: None = detect."""

    encoding: str | None = None
    separator: str | None = None


def _encoding(path: Path, given: str | None) -> str:
    if given is not None:
        return ENCODINGS[given.lower()]
    with open(path, "rb") as handle:
        start = handle.read(2)
    return "utf-16" if start in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) else "utf-8"


def first_invalid_utf8(path: Path) -> tuple[int, int, int] | None:
    """(line number, byte offset, the byte) of the first byte that is not valid UTF-8, else None."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset, line = 0, 1
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                position = max(exc.start, 0)
                bad = chunk[position] if position < len(chunk) else chunk[-1]
                return line + chunk[:position].count(b"\n"), offset + position, bad
            offset += len(chunk)
            line += chunk.count(b"\n")
    return None


def _problem(path: Path, exc: duckdb.Error, encoding: str) -> str:
    message = str(exc)
    if "unicode" in message.lower() or "encoding" in message.lower():
        where = first_invalid_utf8(path) if encoding == "utf-8" else None
        detail = f" (byte 0x{where[2]:02X} on line {where[0]}, offset {where[1]})" if where else ""
        return (f"not valid {encoding.upper()} text{detail}. If the file is Latin-1 / Windows-1252 (e.g. saved by "
                f"Excel), run `lfh ingest --encoding latin-1 ...` or save it as UTF-8")
    first_line = message.strip().splitlines()[0] if message.strip() else type(exc).__name__
    return f"not a readable CSV file with a header row ({first_line})"


def _query(path: Path, encoding: str, separator: str | None) -> str:
    quoted = "'" + str(path).replace("'", "''") + "'"
    options = ["all_varchar = true", "header = true", f"encoding = '{encoding}'", "allow_quoted_nulls = false",
               "null_padding = false"]
    if separator is not None:
        options.append("delim = '" + separator.replace("'", "''") + "'")
    return f"select * from read_csv({quoted}, {', '.join(options)})"


def separator_value(given: str) -> str:
    return SEPARATOR_NAMES.get(given.lower(), given)


def _batches(path: Path, options: CsvOptions, rows_per_batch: int) -> Iterator[RawRecords]:
    encoding = _encoding(path, options.encoding)
    separator = separator_value(options.separator) if options.separator else None
    reader = reader_connection()
    try:
        try:
            result = reader.execute(_query(path, encoding, separator))
            columns = [description[0] for description in result.description]
            arrow_batches = result.to_arrow_reader(rows_per_batch)
        except duckdb.Error as exc:
            raise UnreadableFileError(path, _problem(path, exc, encoding)) from exc
        for first_row, frame in arrow_frames(arrow_batches, path,
                                             lambda _first_row, exc: _problem(path, exc, encoding)):
            frame = row_offsets(frame.with_columns(pl.all().cast(pl.String)), first_row)
            yield RawRecords(frame=frame, columns=columns, source_kind="csv")
    finally:
        reader.close()


def read_csv_stream(path: Path, options: CsvOptions, rows_per_batch: int) -> RecordStream:
    return RecordStream(source_kind="csv", batches=_batches(path, options, rows_per_batch))
