"""Reading back a filled `lfh audit-sample` workbook: its Manual cells become hand labels (label_source
audit_sample) of the stories it was drawn from, matched by Story ID. The stories themselves are not landed again
(they are in the warehouse the sample was drawn from). A row whose LLM Response or Story ID no longer matches its
Story Check was edited: it is rejected (text_edited; no_story_check when the Story Check cell is empty) and none
of its cells is used. Each Manual cell is then understood or rejected with its reason (lfh.landing.hand_cells).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from lfh.audit.sample import CHECK_COLUMN, MANUAL_COLUMNS, STORY_ID_COLUMN, story_check
from lfh.landing.batch import Batch
from lfh.landing.errors import UnreadableFileError
from lfh.landing.hand_cells import checked_hand_labels, without_conflicts
from lfh.landing.literals import parse_string_list
from lfh.landing.read_xlsx import FORMULA_SUFFIX
from lfh.landing.records import RawRecords
from lfh.landing.rejects import reject_rows
from lfh.landing.study_labels import AUDIT_CELLS, HAND_LABEL_COLUMNS, ROLES

LABEL_SOURCE = "audit_sample"
REQUIRED = (STORY_ID_COLUMN, "LLM Response", CHECK_COLUMN, *MANUAL_COLUMNS)


def is_audit_sample(columns: list[str]) -> bool:
    return STORY_ID_COLUMN in columns and CHECK_COLUMN in columns


def _hand_name(cell: str | None) -> str | None:
    """A plain name as typed, or the first element of a study-style list cell (`['John']`); None when empty."""
    if cell is None or not cell.strip():
        return None
    listed = parse_string_list(cell)
    if listed is not None:
        return listed[0].strip() or None if listed else None
    return cell.strip()


def _row_rejection(row: dict) -> tuple[str, str] | None:
    story_id = (row[STORY_ID_COLUMN] or "").strip()
    if not story_id:
        return "no_story_id", "the Story ID cell is empty: copy the row back from the sampled workbook"
    if not (row[CHECK_COLUMN] or "").strip():
        return "no_story_check", (f"the Story Check cell of story {story_id} is empty (deleted?), so the row cannot "
                                  "be verified: copy the cell back from the sampled workbook (the text itself may "
                                  "be intact)")
    if story_check(story_id, row["LLM Response"] or "") != (row[CHECK_COLUMN] or "").strip():
        return "text_edited", (f"the LLM Response (or Story ID) of story {story_id} differs from the sampled story "
                               "(its Story Check no longer matches): restore the text, or label it in a fresh "
                               "`lfh audit-sample` workbook")
    return None


def audit_sample_batch(path: Path, records: RawRecords) -> Batch:
    missing = [name for name in REQUIRED if name not in records.columns]
    if missing:
        raise UnreadableFileError(path, f"missing columns {missing} of an `lfh audit-sample` workbook; found "
                                        f"{records.columns}")
    context = [name for name in records.frame.columns if name in ("Role Category", "Object", "Query")
               or name.endswith(FORMULA_SUFFIX) and name.removesuffix(FORMULA_SUFFIX) in MANUAL_COLUMNS]
    rows = records.frame.select("source_row", *REQUIRED, *context)
    rejections, labels = [], []
    for row in rows.iter_rows(named=True):
        rejection = _row_rejection(row)
        if rejection is not None:
            rejections.append((row["source_row"], *rejection))
            continue
        for role, title in ROLES.items():
            gender = (row[f"Manual {title} Gender"] or "").strip() or None
            name_raw = row[f"Manual {title} Name"]
            name = _hand_name(name_raw)
            if gender is None and name is None:
                continue
            labels.append({"story_id": row[STORY_ID_COLUMN].strip(), "role": role, "gender": gender, "name": name,
                           "name_raw": name_raw, "reference_words": None, "label_source": LABEL_SOURCE,
                           "source_row": row["source_row"]})
    schema = {"story_id": pl.String, "role": pl.String, "gender": pl.String, "name": pl.String,
              "name_raw": pl.String, "reference_words": pl.List(pl.String), "label_source": pl.String,
              "source_row": pl.Int64}
    hand_labels = pl.DataFrame(labels, schema=schema, orient="row").select(HAND_LABEL_COLUMNS)
    rejected = pl.DataFrame(rejections, schema={"source_row": pl.Int64, "reason": pl.String, "detail": pl.String},
                            orient="row")
    # every Manual cell understood or rejected with its reason (drop-down values, formulas, objects); a row
    # rejected whole above is not checked cell by cell
    verified = rows.filter(~pl.col("source_row").is_in(rejected["source_row"].implode()))
    hand_labels, cell_rejected = checked_hand_labels(hand_labels, verified, AUDIT_CELLS)
    # the same story on two rows: one label if they agree, none (each row rejected, naming the other) if not
    hand_labels, conflicts = without_conflicts(hand_labels)
    rejected = pl.concat([rejected, cell_rejected, conflicts]).sort("source_row")
    return Batch(file_kind="audit_sample_xlsx", source_kind="study_xlsx", rows_read=records.rows_read,
                 hand_labels=hand_labels, rejects=reject_rows(records, rejected, "hand_labels"))
