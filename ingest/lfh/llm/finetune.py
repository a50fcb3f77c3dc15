"""`lfh finetune-data`: the hand-labeled training stories (the study's training workbook format) as chat
fine-tuning JSON Lines, as the study fine-tuned its labeler: user = the labeling request, assistant = the
correct JSON answer."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import polars as pl

from lfh.errors import InputError
from lfh.llm.prompts import LabelKeys, keys_from_request, label_keys

REQUIRED = ("Query", "Subject", "Object", "LLM Response", "Correct Subject References",
            "Correct Object References", "Correct Subject Name", "Correct Object Name")


class BadRow(InputError, ValueError):
    pass


def _references(cell: Any, column: str) -> list[str]:
    if cell is None or (isinstance(cell, str) and not cell.strip()):
        return []
    try:
        value = ast.literal_eval(cell) if isinstance(cell, str) else cell
    except (ValueError, SyntaxError):
        raise BadRow(f"{column}: {cell!r} is not a Python list literal like ['she', 'her']") from None
    if not isinstance(value, list | tuple) or not all(isinstance(item, str) for item in value):
        raise BadRow(f"{column}: {cell!r} is not a list of strings")
    return list(value)


def _name(cell: Any) -> str | None:
    if cell is None:
        return None
    text = str(cell).strip()
    if text.startswith("[") and text.endswith("]"):  # some cells hold a one-element list literal
        try:
            items = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return text
        return str(items[0]).strip() if items else None
    return text or None


def training_example(row: dict[str, Any], use_workbook_request: bool) -> dict[str, Any]:
    """One chat example from one workbook row; BadRow says why a row cannot be used."""
    story = row.get("LLM Response")
    if not isinstance(story, str) or not story.strip():
        raise BadRow("LLM Response is empty")
    if use_workbook_request:
        request = row.get("Label Query")
        if not isinstance(request, str) or not request.strip():
            raise BadRow("Label Query is empty (drop --use-workbook-request to build the request instead)")
        try:
            keys = keys_from_request(request)
        except ValueError as exc:
            raise BadRow(f"Label Query: {exc}") from None
    else:
        try:
            keys = label_keys(row.get("Query"), row.get("Subject"), row.get("Object"))
        except ValueError as exc:
            raise BadRow(str(exc)) from None
        request = keys.request(story)
    answer = _answer(keys, row)
    return {"messages": [{"role": "user", "content": request}, {"role": "assistant", "content": answer}]}


def _answer(keys: LabelKeys, row: dict[str, Any]) -> str:
    subject_refs = _references(row.get("Correct Subject References"), "Correct Subject References")
    if keys.object_key is None:
        return keys.answer(_name(row.get("Correct Subject Name")), subject_refs)
    object_refs = _references(row.get("Correct Object References"), "Correct Object References")
    return keys.answer(_name(row.get("Correct Subject Name")), subject_refs,
                       _name(row.get("Correct Object Name")), object_refs)


def finetune_examples(frame: pl.DataFrame, source: str, use_workbook_request: bool = False) -> list[dict[str, Any]]:
    """Every row as a chat example. Raises InputError naming the file, row (spreadsheet row number) and
    reason for the first unusable row: a training set must not silently lose examples."""
    missing = [column for column in REQUIRED if column not in frame.columns]
    if missing:
        raise InputError(f"{source}: missing column(s) {', '.join(missing)}; expected the columns of "
                         "the study's training workbook (training_150.xlsx, docs/DATA.md)")
    examples = []
    for index, row in enumerate(frame.iter_rows(named=True)):
        try:
            examples.append(training_example(row, use_workbook_request))
        except BadRow as exc:
            raise InputError(f"{source}: row {index + 2}: {exc}") from None
    return examples


def write_finetune_data(workbook: Path, out_path: Path, use_workbook_request: bool = False) -> int:
    """The training workbook as chat fine-tuning JSON Lines in out_path (written whole or not at all); returns
    the number of examples (`lfh finetune-data`)."""
    frame = pl.read_excel(workbook, infer_schema_length=0)
    examples = finetune_examples(frame, str(workbook), use_workbook_request)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    temporary = out_path.with_suffix(out_path.suffix + ".tmp")
    temporary.write_text("".join(json.dumps(example, ensure_ascii=False) + "\n" for example in examples),
                         encoding="utf-8")
    temporary.replace(out_path)
    return len(examples)
