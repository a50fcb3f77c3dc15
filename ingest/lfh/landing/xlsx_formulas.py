"""Formula cells of a workbook's first sheet that have no saved value.

A spreadsheet saves each formula's last result beside it; a library that writes formulas (openpyxl, or a script)
often does not, and readers (calamine) then see an empty cell. For a hand label that would silently read as "not
labeled", so the reader finds these cells in the sheet's XML and the hand-label code rejects them with a reason."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from xml.etree import ElementTree

_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_CELL = re.compile(r"([A-Z]+)(\d+)")


def _parse(data: bytes) -> ElementTree.Element:
    """An xlsx part as XML. Workbooks never declare a DTD, so one that does is refused: no entity expansion."""
    if b"<!DOCTYPE" in data[:4096].upper() or b"<!ENTITY" in data.upper():
        raise ValueError("an xlsx part with a DTD")
    return ElementTree.fromstring(data)  # noqa: S314 - no DTD, hence no entities (checked above)


def _first_sheet_path(archive: zipfile.ZipFile) -> str | None:
    workbook = _parse(archive.read("xl/workbook.xml"))
    sheet = workbook.find(f"{_MAIN}sheets/{_MAIN}sheet")
    if sheet is None:
        return None
    relation_id = sheet.get(f"{_REL}id")
    relations = _parse(archive.read("xl/_rels/workbook.xml.rels"))
    for relation in relations:
        if relation.get("Id") == relation_id:
            target = (relation.get("Target") or "").lstrip("/")
            return target if target.startswith("xl/") else f"xl/{target}"
    return None


def _shared_strings(archive: zipfile.ZipFile) -> list[str]:
    try:
        root = _parse(archive.read("xl/sharedStrings.xml"))
    except KeyError:
        return []
    return ["".join(text.text or "" for text in item.iter(f"{_MAIN}t")) for item in root.iter(f"{_MAIN}si")]


def _cell_text(cell: ElementTree.Element, shared: list[str]) -> str:
    value = cell.find(f"{_MAIN}v")
    if cell.get("t") == "s" and value is not None and value.text is not None:
        return shared[int(value.text)]
    if cell.get("t") == "inlineStr":
        return "".join(text.text or "" for text in cell.iter(f"{_MAIN}t"))
    return value.text if value is not None and value.text is not None else ""


def uncached_formulas(path: Path) -> dict[str, dict[int, str]]:
    """{header of the column: {data row (1 = the row under the header): the formula}} for every formula cell of the
    first sheet without a saved value. Empty when there are none or the file cannot be read this way."""
    try:
        with zipfile.ZipFile(path) as archive:
            sheet_path = _first_sheet_path(archive)
            if sheet_path is None:
                return {}
            sheet = archive.read(sheet_path)
            if b"<f" not in sheet:  # no formula at all (the usual case): nothing to parse
                return {}
            shared = _shared_strings(archive)
            root = _parse(sheet)
    except (OSError, KeyError, ValueError, zipfile.BadZipFile, ElementTree.ParseError):
        return {}
    header_row: int | None = None
    headers: dict[str, str] = {}
    found: dict[str, dict[int, str]] = {}
    for row in root.iter(f"{_MAIN}row"):
        for cell in row.iter(f"{_MAIN}c"):
            match = _CELL.fullmatch(cell.get("r") or "")
            if match is None:
                continue
            column, number = match.group(1), int(match.group(2))
            if header_row is None:
                header_row = number
            if number == header_row:
                headers[column] = _cell_text(cell, shared).strip()
                continue
            formula = cell.find(f"{_MAIN}f")
            value = cell.find(f"{_MAIN}v")
            if formula is not None and (value is None or not (value.text or "").strip()):
                name = headers.get(column, column)
                found.setdefault(name, {})[number - header_row] = f"={formula.text or '(shared formula)'}"
    return found
