"""The project's own formats (JSON Lines, CSV, Parquet; docs/CONTRACTS.md): stories or label responses, told
apart by the columns present, normalised into a Batch. Unknown keys are ignored."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from lfh.identity import response_ids
from lfh.landing.batch import Batch
from lfh.landing.errors import UnreadableFileError
from lfh.landing.records import ROW_PROBLEM, RawRecords
from lfh.landing.rejects import combine, reject_rows
from lfh.landing.stories import RUN_COLUMNS, OccurrenceCounter, identify_stories, split_stories

STORY_FIELDS = ("story_id", "model", "query", "subject", "object", "text", "time", "prompt_id", "role_category",
                "prompt_tokens", "completion_tokens", *RUN_COLUMNS)
TOKEN_FIELDS = ("prompt_tokens", "completion_tokens")
STORY_REQUIRED = ("model", "query", "text")
LABEL_RUN_COLUMNS = ["run_id", "labeler_version", "system_fingerprint"]
LABEL_FIELDS = ("story_id", "labeler_model", "prompt_version", "request_text", "sample_index", "response_text",
                "time", "prompt_tokens", "completion_tokens", *LABEL_RUN_COLUMNS)
LABEL_REQUIRED = ("story_id", "labeler_model", "prompt_version", "sample_index", "response_text")
WANTED_KEYS = frozenset(STORY_FIELDS) | frozenset(LABEL_FIELDS)

REJECTION_SCHEMA = {"source_row": pl.Int64, "reason": pl.String, "detail": pl.String}
INT32_MAX = 2**31 - 1  # raw.label_responses.sample_index and the token counts are SQL integers

LABEL_RESPONSE_COLUMNS = ["response_id", "story_id", "labeler_model", "prompt_version", "sample_index",
                          "request_text", "response_text", "responded_at", "prompt_tokens", "completion_tokens",
                          *LABEL_RUN_COLUMNS, "source_row"]


def detect_content(path: Path, records: RawRecords) -> str:
    """'stories' or 'labels', from the columns present (not from the folder name)."""
    present = set(records.columns)
    if present & {"response_text", "labeler_model", "prompt_version", "sample_index"}:
        missing = [name for name in LABEL_REQUIRED if name not in present]
        if not missing:
            return "labels"
        raise UnreadableFileError(path, f"label responses file without columns {missing}; expected "
                                        f"{list(LABEL_REQUIRED)} (optional: request_text, time, prompt_tokens, "
                                        f"completion_tokens); found {sorted(records.all_columns())}")
    missing = [name for name in STORY_REQUIRED if name not in present]
    if not missing:
        return "stories"
    raise UnreadableFileError(
        path, f"neither stories (needs {list(STORY_REQUIRED)}; optional story_id, subject, object, time, prompt_id, "
              f"prompt_tokens, completion_tokens) "
              f"nor label responses (needs {list(LABEL_REQUIRED)}); found columns {sorted(records.all_columns())}")


def _text(records: RawRecords, name: str) -> pl.Expr:
    return pl.col(name) if name in records.frame.columns else pl.lit(None, dtype=pl.String).alias(name)


def _optional_text(records: RawRecords, name: str) -> pl.Expr:
    """A descriptive text field (run id, reported model...): trimmed, blank read as absent."""
    value = _text(records, name).cast(pl.String).str.strip_chars()
    return pl.when(value == "").then(None).otherwise(value).alias(name)


def _record_rejections(records: RawRecords) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(usable rows, rejections of rows whose reader named a problem with one of their values)."""
    if ROW_PROBLEM not in records.frame.columns:
        return records.frame, pl.DataFrame(schema=REJECTION_SCHEMA)
    bad = records.frame.filter(pl.col(ROW_PROBLEM).is_not_null()).select(
        "source_row", pl.lit("unreadable_value").alias("reason"), pl.col(ROW_PROBLEM).alias("detail"))
    return records.frame.filter(pl.col(ROW_PROBLEM).is_null()), bad


def _bad_tokens(records: RawRecords) -> pl.Expr:
    """A token count given but not an integer (JSON/Parquet integer, or text of one)."""
    bad = pl.lit(False)
    for name in TOKEN_FIELDS:
        if name in records.frame.columns:
            bad = bad | (pl.col(name).is_not_null() & (
                _integer(name).cast(pl.Int32, strict=False).is_null()
                | records.value_kind(name).is_in(["integer", "string", "null"]).not_()))
    return bad


def _token_count(records: RawRecords, name: str) -> pl.Expr:
    if name not in records.frame.columns:
        return pl.lit(None, dtype=pl.Int32).alias(name)
    return _integer(name).cast(pl.Int32, strict=False).alias(name)


def stories_batch(records: RawRecords, occurrences: OccurrenceCounter | None = None) -> Batch:
    usable, bad_records = _record_rejections(records)
    candidates = usable.select(
        "source_row",
        _text(records, "model"), _text(records, "query"), _text(records, "subject"), _text(records, "object"),
        _text(records, "role_category"), _text(records, "text"), _text(records, "time").alias("generated_at"),
        _text(records, "story_id").alias("given_story_id"), _text(records, "prompt_id"),
        records.value_kind("model").alias("model_kind"), records.value_kind("query").alias("query_kind"),
        records.value_kind("text").alias("text_kind"), pl.lit(False).alias("keep_empty_text"),
        *(_token_count(records, name) for name in TOKEN_FIELDS), _bad_tokens(records).alias("bad_tokens"),
        *(_optional_text(records, name) for name in RUN_COLUMNS),
    ).with_columns(pl.when(pl.col("given_story_id").str.strip_chars() == "").then(None)
                   .otherwise(pl.col("given_story_id")).alias("given_story_id"))
    stories, rejected = split_stories(identify_stories(candidates, occurrences))
    return Batch(
        file_kind=f"stories_{records.source_kind}", source_kind=records.source_kind, rows_read=records.rows_read,
        stories=stories,
        rejects=combine(reject_rows(records, bad_records, "stories"), reject_rows(records, rejected, "stories")),
    )


def _integer(name: str) -> pl.Expr:
    return pl.col(name).cast(pl.Int64, strict=False)


def _blank(name: str) -> pl.Expr:
    return pl.col(name).is_null() | (pl.col(name).str.strip_chars() == "")


def _label_reason(records: RawRecords) -> pl.Expr:
    integer_kinds = ["integer", "string", "null"]
    return (
        pl.when(_blank("story_id")).then(pl.lit("no_story_id"))
        .when(_blank("labeler_model")).then(pl.lit("no_labeler_model"))
        .when(_blank("prompt_version")).then(pl.lit("no_prompt_version"))
        .when(_integer("sample_index").is_null() | (_integer("sample_index") < 0)
              | records.value_kind("sample_index").is_in(integer_kinds).not_()).then(pl.lit("bad_sample_index"))
        .when(_integer("sample_index") > INT32_MAX).then(pl.lit("sample_index_too_large"))
        .when(pl.col("response_text").is_null()).then(pl.lit("no_response_text"))
        .when(records.value_kind("response_text") != "string").then(pl.lit("response_not_string"))
        .when(_bad_tokens(records)).then(pl.lit("bad_token_count"))
        .otherwise(pl.lit(None, dtype=pl.String))
    )


LABEL_DETAILS = {
    "no_story_id": "story_id is missing or empty",
    "no_labeler_model": "labeler_model is missing or empty",
    "no_prompt_version": "prompt_version is missing or empty",
    "bad_sample_index": "sample_index is missing or not a non-negative integer",
    "sample_index_too_large": f"sample_index is larger than {INT32_MAX:,} (the largest the warehouse stores); "
                              "it counts a story's samples from 0",
    "no_response_text": "response_text is missing (null)",
    "response_not_string": "response_text is not a string (store the response exactly as received, as text)",
    "bad_token_count": f"prompt_tokens or completion_tokens is not an integer from 0 to {INT32_MAX:,}",
}


def labels_batch(records: RawRecords) -> Batch:
    usable, bad_records = _record_rejections(records)
    candidates = usable.with_columns([_text(records, name) for name in LABEL_FIELDS if name not in usable.columns]
                                     ).with_columns([_optional_text(records, name) for name in LABEL_RUN_COLUMNS])
    checked = candidates.with_columns(_label_reason(records).alias("reason"))
    rejected = checked.filter(pl.col("reason").is_not_null()).select(
        "source_row", "reason", pl.col("reason").replace_strict(LABEL_DETAILS, return_dtype=pl.String).alias("detail"))
    accepted = checked.filter(pl.col("reason").is_null()).with_columns(
        _integer("sample_index").cast(pl.Int32).alias("sample_index"),
        _integer("prompt_tokens").cast(pl.Int32).alias("prompt_tokens"),
        _integer("completion_tokens").cast(pl.Int32).alias("completion_tokens"),
        pl.col("time").alias("responded_at"),
    )
    responses = accepted.with_columns(response_ids(accepted).alias("response_id")).select(LABEL_RESPONSE_COLUMNS)
    return Batch(
        file_kind=f"labels_{records.source_kind}", source_kind=records.source_kind, rows_read=records.rows_read,
        label_responses=responses,
        rejects=combine(reject_rows(records, bad_records, "label_responses"),
                        reject_rows(records, rejected, "label_responses")),
    )


def project_batch(path: Path, records: RawRecords, content: str | None = None,
                  occurrences: OccurrenceCounter | None = None) -> Batch:
    """One batch of a stories or label-responses file. content ('stories' | 'labels') is decided from the
    columns of the file's first batch and passed for the later ones; occurrences carries the counts of identical
    stories across a file's batches."""
    if records.rows_read == 0:
        return Batch(file_kind=f"empty_{records.source_kind}", source_kind=records.source_kind, rows_read=0)
    if (content or detect_content(path, records)) == "labels":
        return labels_batch(records)
    return stories_batch(records, occurrences)
