"""The study's published workbooks (.xlsx): stories, the labeling model's raw responses and hand labels.

Which labeling run a workbook holds (raw.label_responses.labeler_model / prompt_version):

| workbook | recognised by | labeler_model | prompt_version |
|---|---|---|---|
| audit (hand-checked sample) | a `Manual ...` column | study-ft-gpt-3.5-turbo | study-audit |
| training (fine-tuning set) | a `Correct ...` column | study-ft-gpt-3.5-turbo | study-training |
| any other labeled workbook | `LLM Label Response` / `FT LLM Label Response` | study-ft-gpt-3.5-turbo | study |

An empty `LLM Response` cell is rejected (no_text) unless the same row carries the study's labels of it (label
responses or hand labels): the study generated, labeled and counted those empty answers, so they are landed as
stories with an empty text (the audit workbook has 74 of them).
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from lfh.landing.batch import Batch
from lfh.landing.errors import UnreadableFileError
from lfh.landing.hand_cells import without_conflicts
from lfh.landing.records import RawRecords
from lfh.landing.rejects import combine, reject_rows
from lfh.landing.stories import identify_stories, split_stories
from lfh.landing.study_labels import hand_labels, label_responses

STORY_COLUMNS = ("Time", "Subject", "Object", "Query", "LLM Response")
RESPONSE_COLUMNS = ("LLM Label Response", "FT LLM Label Response")
STUDY_LABELER_MODEL = "study-ft-gpt-3.5-turbo"
PROMPT_VERSIONS = {"audit": "study-audit", "training": "study-training", "labeled": "study"}

_DATE_LIKE = re.compile(r"[_\- ]?(19|20)\d{2}[-_]?\d{2}[-_]?\d{2}")
_BENCHMARK = re.compile(r"_Bias_Benchmark", re.IGNORECASE)


def model_from_file_name(path: Path) -> str | None:
    """`ChatGPT3_5_Bias_Benchmark_2023-08-16.xlsx` -> `ChatGPT3_5`: the part before `_Bias_Benchmark`, else
    before the first date-like part; None when neither is in the name."""
    stem = path.stem
    for pattern in (_BENCHMARK, _DATE_LIKE):
        match = pattern.search(stem)
        if match and match.start() > 0:
            return stem[: match.start()].strip("_- ") or None
    return None


def workbook_kind(columns: list[str]) -> str:
    if any(name.startswith("Manual ") for name in columns):
        return "audit"
    if any(name.startswith("Correct ") for name in columns):
        return "training"
    return "labeled" if any(name in columns for name in RESPONSE_COLUMNS) else "stories"


def _label_cells(columns: list[str]) -> list[str]:
    return [name for name in columns
            if name in RESPONSE_COLUMNS or name.startswith("Manual ") or name.startswith("Correct ")]


def _check_columns(path: Path, columns: list[str]) -> str | None:
    """The model name from the file name when there is no Model column; raises when columns are missing."""
    missing = [name for name in STORY_COLUMNS if name not in columns]
    if missing:
        raise UnreadableFileError(path, f"missing columns {missing}; a study workbook needs {list(STORY_COLUMNS)} "
                                        f"(optional: Model, Role Category, Label Query, LLM Label Response, "
                                        f"Manual/Correct label columns); found {columns}")
    if "Model" in columns:
        return None
    model = model_from_file_name(path)
    if model is None:
        raise UnreadableFileError(path, "no Model column and no model in the file name: add a Model column or "
                                        "name the file <Model>_Bias_Benchmark_<YYYY-MM-DD>.xlsx")
    return model


def study_batch(path: Path, records: RawRecords) -> Batch:
    file_model = _check_columns(path, records.columns)
    kind = workbook_kind(records.columns)
    frame = records.frame
    label_cells = _label_cells(records.columns)
    carries_labels = pl.any_horizontal([pl.col(name).is_not_null() for name in label_cells]) if label_cells \
        else pl.lit(False)
    candidates = frame.select(
        "source_row",
        (pl.col("Model") if "Model" in frame.columns else pl.lit(file_model)).alias("model"),
        pl.col("Query").alias("query"), pl.col("Subject").alias("subject"), pl.col("Object").alias("object"),
        (pl.col("Role Category") if "Role Category" in frame.columns
         else pl.lit(None, dtype=pl.String)).alias("role_category"),
        pl.col("LLM Response").alias("text"), pl.col("Time").alias("generated_at"),
        pl.lit(None, dtype=pl.String).alias("given_story_id"), pl.lit(None, dtype=pl.String).alias("prompt_id"),
        pl.lit(None, dtype=pl.Int32).alias("prompt_tokens"), pl.lit(None, dtype=pl.Int32).alias("completion_tokens"),
        pl.lit("string").alias("model_kind"), pl.lit("string").alias("query_kind"), pl.lit("string").alias("text_kind"),
        pl.lit(False).alias("bad_tokens"), carries_labels.alias("keep_empty_text"),
    )
    stories, rejected_stories = split_stories(identify_stories(candidates))
    rows = frame.join(stories.select("source_row", "story_id"), on="source_row", how="inner")
    prompt_version = PROMPT_VERSIONS.get(kind, PROMPT_VERSIONS["labeled"])
    responses, rejected_responses = label_responses(rows, STUDY_LABELER_MODEL, prompt_version)
    labels, rejected_labels = hand_labels(rows)
    labels, conflicts = without_conflicts(labels)
    rejected_labels = pl.concat([rejected_labels, conflicts]) if conflicts.height else rejected_labels
    return Batch(
        file_kind=f"study_xlsx_{kind}", source_kind="study_xlsx", rows_read=records.rows_read,
        stories=stories, label_responses=responses, hand_labels=labels,
        rejects=combine(reject_rows(records, rejected_stories, "stories"),
                        reject_rows(records, rejected_responses, "label_responses"),
                        reject_rows(records, rejected_labels, "hand_labels")),
    )
