"""Small input files for the `lfh ingest` tests, written by the tests themselves (no binary fixtures)."""

from __future__ import annotations

import csv
import json
import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

import duckdb
import polars as pl
import pytest
from click.testing import CliRunner, Result

from lfh.cli.ingest import ingest


def catalog_queries() -> list[str]:
    from lfh.paths import seeds_dir

    with open(seeds_dir() / "prompt_catalog.csv", newline="", encoding="utf-8") as handle:
        return [row["query"] for row in csv.DictReader(handle)]


def story_records(count: int, model: str = "gpt-3.5-turbo", start: int = 0) -> list[dict]:
    queries = catalog_queries()
    return [
        {"model": model, "query": queries[index % len(queries)], "subject": "student", "object": None,
         "text": f"Story number {index}. Maria excels and she is proud.", "time": "2024-05-01T10:00:00Z"}
        for index in range(start, start + count)
    ]


def label_records(story_ids: list[str], samples: int = 2) -> list[dict]:
    return [
        {"story_id": story, "labeler_model": "gpt-4o-mini", "prompt_version": "method-v1",
         "request_text": "In the following story ...", "sample_index": index,
         "response_text": '{"student name": "Maria", "student references": ["she"]}',
         "time": "2024-05-02T10:00:00Z", "prompt_tokens": 120, "completion_tokens": 30}
        for story in story_ids for index in range(samples)
    ]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def write_csv(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pl.DataFrame(records).write_csv(path)
    return path


def write_parquet(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pl.DataFrame(records).write_parquet(path)
    return path


def _cell_reference(column: int, row: int) -> str:
    letters = ""
    column += 1
    while column:
        column, remainder = divmod(column - 1, 26)
        letters = chr(65 + remainder) + letters
    return f"{letters}{row}"


def write_xlsx(path: Path, columns: list[str], rows: list[list[str | None]]) -> Path:
    """A minimal one-sheet workbook with inline strings (no xlsx writer library in the lock)."""
    def row_xml(number: int, values: list[str | None]) -> str:
        cells = "".join(
            f'<c r="{_cell_reference(index, number)}" t="inlineStr"><is><t xml:space="preserve">'
            f"{escape(value)}</t></is></c>"
            for index, value in enumerate(values) if value is not None
        )
        return f'<row r="{number}">{cells}</row>'

    sheet = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
             '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
             + row_xml(1, list(columns))
             + "".join(row_xml(number, values) for number, values in enumerate(rows, start=2))
             + "</sheetData></worksheet>")
    main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    relationships = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    package = "http://schemas.openxmlformats.org/package/2006/relationships"
    parts = {
        "[Content_Types].xml": (
            '<?xml version="1.0" encoding="UTF-8"?>'
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/xl/workbook.xml" '
            'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
            '<Override PartName="/xl/worksheets/sheet1.xml" '
            'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
            "</Types>"),
        "_rels/.rels": (
            f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{package}">'
            f'<Relationship Id="rId1" Type="{relationships}/officeDocument" Target="xl/workbook.xml"/>'
            "</Relationships>"),
        "xl/workbook.xml": (
            f'<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="{main}" xmlns:r="{relationships}">'
            '<sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>'),
        "xl/_rels/workbook.xml.rels": (
            f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{package}">'
            f'<Relationship Id="rId1" Type="{relationships}/worksheet" Target="worksheets/sheet1.xml"/>'
            "</Relationships>"),
        "xl/worksheets/sheet1.xml": sheet,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in parts.items():
            archive.writestr(name, text)
    return path


STUDY_STORY_COLUMNS = ["Time", "Role Category", "Subject", "Object", "Query", "LLM Response"]


def study_rows(count: int, repeat_text_every: int = 0) -> list[list[str | None]]:
    """Rows of the study's story columns; every repeat_text_every-th row repeats the previous row's text."""
    queries = catalog_queries()
    rows: list[list[str | None]] = []
    for index in range(count):
        text = f"Workbook story {index}: John, an American actor, and his fan."
        if repeat_text_every and index and index % repeat_text_every == 0:
            text, query = rows[-1][5], rows[-1][4]
        else:
            query = queries[index % 30]
        rows.append(["2023-08-16 03:44:24.630", "School", "student", None, query, text])
    return rows


def run_ingest(*paths: Path, reread: bool = False) -> Result:
    options = ["--reread"] if reread else []
    return CliRunner().invoke(ingest, [*options, *(str(path) for path in paths)], catch_exceptions=False)


def query_all(database: Path, sql: str) -> list[tuple]:
    connection = duckdb.connect(str(database), read_only=True)
    try:
        return connection.execute(sql).fetchall()
    finally:
        connection.close()


def scalar(database: Path, sql: str) -> object:
    return query_all(database, sql)[0][0]


@pytest.fixture
def stories_jsonl(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "landing" / "stories" / "batch1.jsonl", story_records(20))
