"""Label responses and hand labels from a study workbook's rows (already joined to their story_id)."""

from __future__ import annotations

import polars as pl

from lfh.identity import response_ids
from lfh.landing.hand_cells import checked_hand_labels
from lfh.landing.literals import string_list_column
from lfh.landing.project_formats import LABEL_RESPONSE_COLUMNS, LABEL_RUN_COLUMNS

HAND_LABEL_COLUMNS = ["story_id", "role", "gender", "name", "name_raw", "reference_words", "label_source",
                      "source_row"]
ROLES = {"subject": "Subject", "object": "Object"}
REJECTION_SCHEMA = {"source_row": pl.Int64, "reason": pl.String, "detail": pl.String}
# the workbook cells of each role's label, gender cell first (lfh.landing.hand_cells)
AUDIT_CELLS = {role: (f"Manual {title} Gender", f"Manual {title} Name") for role, title in ROLES.items()}
TRAINING_CELLS = {role: (None, f"Correct {title} Name", f"Correct {title} References") for role, title in ROLES.items()}


def _unreadable(rows: pl.DataFrame, column: str, parsed: str, workbook_column: str | None = None) -> pl.DataFrame:
    """Rows whose `column` is filled but did not parse into `parsed`, as rejects naming the workbook's column."""
    return rows.filter(pl.col(column).is_not_null() & pl.col(parsed).is_null()).select(
        "source_row", pl.lit("unreadable_cell").alias("reason"),
        pl.lit(f"the '{workbook_column or column}' cell is not a Python-literal list of strings").alias("detail"),
    )


def _concat(frames: list[pl.DataFrame], schema: dict) -> pl.DataFrame:
    present = [frame for frame in frames if frame.height]
    return pl.concat(present) if present else pl.DataFrame(schema=schema)


def label_responses(rows: pl.DataFrame, labeler_model: str, prompt_version: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """One row per sample of the `LLM Label Response` / `FT LLM Label Response` list cell, text kept exactly."""
    column = next((name for name in ("FT LLM Label Response", "LLM Label Response") if name in rows.columns), None)
    if column is None:
        return pl.DataFrame(), pl.DataFrame(schema=REJECTION_SCHEMA)
    parsed = rows.with_columns(string_list_column(column).alias("_samples"))
    rejected = _unreadable(parsed, column, "_samples")
    request = pl.col("Label Query") if "Label Query" in rows.columns else pl.lit(None, dtype=pl.String)
    samples = (
        parsed.filter(pl.col("_samples").list.len() > 0)
        .select("source_row", "story_id", request.alias("request_text"), pl.col("_samples").alias("response_text"))
        .explode("response_text")
        .with_columns(pl.int_range(pl.len(), dtype=pl.Int32).over("source_row").alias("sample_index"))
    )
    responses = samples.with_columns(
        pl.lit(labeler_model).alias("labeler_model"), pl.lit(prompt_version).alias("prompt_version"),
        pl.lit(None, dtype=pl.String).alias("responded_at"),
        pl.lit(None, dtype=pl.Int32).alias("prompt_tokens"), pl.lit(None, dtype=pl.Int32).alias("completion_tokens"),
        *(pl.lit(None, dtype=pl.String).alias(name) for name in LABEL_RUN_COLUMNS),
    )
    responses = responses.with_columns(response_ids(responses).alias("response_id")).select(LABEL_RESPONSE_COLUMNS)
    return responses, rejected


def _column_or_null(rows: pl.DataFrame, name: str) -> pl.Expr:
    return pl.col(name) if name in rows.columns else pl.lit(None, dtype=pl.String)


def _hand_label_cells(rows: pl.DataFrame, plain_column: str, plain_alias: str, list_column: str, list_raw_alias: str,
                      list_alias: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A role's two hand-label cells: one kept as text, one a Python-literal list parsed into list_alias. Returns
    the usable rows (either cell filled, the list readable when filled) and the rows whose list is unreadable."""
    cells = rows.select("source_row", "story_id", _column_or_null(rows, plain_column).alias(plain_alias),
                        _column_or_null(rows, list_column).alias(list_raw_alias))
    parsed = cells.with_columns(string_list_column(list_raw_alias).alias(list_alias))
    rejected = _unreadable(parsed, list_raw_alias, list_alias, list_column)
    usable = parsed.filter((pl.col(plain_alias).is_not_null() | pl.col(list_raw_alias).is_not_null())
                           & (pl.col(list_raw_alias).is_null() | pl.col(list_alias).is_not_null()))
    return usable, rejected


def _audit_labels(rows: pl.DataFrame, role: str, title: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    usable, rejected = _hand_label_cells(rows, f"Manual {title} Gender", "gender", f"Manual {title} Name", "name_raw",
                                         "_names")
    labels = usable.with_columns(
        pl.lit(role).alias("role"), pl.col("_names").list.first().alias("name"),
        pl.lit(None, dtype=pl.List(pl.String)).alias("reference_words"), pl.lit("audit_manual").alias("label_source"),
    ).select(HAND_LABEL_COLUMNS)
    return labels, rejected


def _training_labels(rows: pl.DataFrame, role: str, title: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    usable, rejected = _hand_label_cells(rows, f"Correct {title} Name", "name_raw", f"Correct {title} References",
                                         "_references_raw", "reference_words")
    name = pl.when(pl.col("name_raw").str.strip_chars().is_in(["", "[]"])).then(None).otherwise(pl.col("name_raw"))
    labels = usable.with_columns(
        pl.lit(role).alias("role"), pl.lit(None, dtype=pl.String).alias("gender"), name.alias("name"),
        pl.lit("training_correct").alias("label_source"),
    ).select(HAND_LABEL_COLUMNS)
    return labels, rejected


def hand_labels(rows: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """audit `Manual * Gender/Name` -> label_source audit_manual; training `Correct * References/Name` ->
    training_correct. One row per story and role that has any hand label cell."""
    labels: list[pl.DataFrame] = []
    rejected: list[pl.DataFrame] = []
    has_audit = any(name.startswith("Manual ") for name in rows.columns)
    has_training = any(name.startswith("Correct ") for name in rows.columns)
    for present, build, cells in ((has_audit, _audit_labels, AUDIT_CELLS), (has_training, _training_labels,
                                                                             TRAINING_CELLS)):
        if not present:
            continue
        source_labels: list[pl.DataFrame] = []
        for role, title in ROLES.items():
            role_labels, role_rejected = build(rows, role, title)
            source_labels.append(role_labels)
            rejected.append(role_rejected)
        # every cell understood or rejected with its reason (drop-down values, formulas, objects)
        checked, checked_rejected = checked_hand_labels(_concat(source_labels, {}), rows, cells)
        labels.append(checked)
        rejected.append(checked_rejected)
    return _concat(labels, {}), _concat(rejected, REJECTION_SCHEMA)
