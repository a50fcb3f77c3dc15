"""raw.runs: what answered, with what settings, and when.

Two sources:
- a run manifest (`<output stem>.manifest.json`, written by `lfh generate`, `lfh label`, `lfh simulate`; see
  lfh.llm.manifest) lands as one row, checked field by field; a manifest that is not one lands nothing and goes
  to raw.rejects with the file and field named. Its base URL is stored without credentials whatever it says.
- the rows of a file without a manifest (the study's workbooks, a user's CSV/Parquet/JSONL, files of older lfh
  versions) get a run synthesized per model (labeler, for label responses) and file: run_id
  `file:<file sha256>:<model_canonical | labeler_model>`, run_kind `file`, is_synthesized true, with what the file
  says (reported model strings and fingerprints counted per row, tokens summed, first and last time).
Rows that carry a run id (written by lfh) keep it; their run is described by its manifest.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from lfh.identity import canonical_model
from lfh.landing.batch import REJECT_SCHEMA, Batch
from lfh.landing.project_formats import LABEL_RUN_COLUMNS
from lfh.landing.stories import RUN_COLUMNS
from lfh.runs import FILE_RUN_KIND, MANIFEST_VERSION, RUN_KINDS, file_run_id, safe_url

RUN_SCHEMA: dict[str, Any] = {
    "run_id": pl.String, "run_kind": pl.String, "run_name": pl.String, "model": pl.String,
    "model_canonical": pl.String, "model_id": pl.String, "base_url": pl.String, "reported_models": pl.String,
    "system_fingerprints": pl.String, "sampling": pl.String, "prompt_catalog_sha256": pl.String,
    "label_template_sha256": pl.String, "lfh_version": pl.String, "git_commit": pl.String, "git_dirty": pl.Boolean,
    "started_at": pl.Datetime("us"), "finished_at": pl.Datetime("us"), "requests": pl.Int64, "retries": pl.Int64,
    "failures": pl.Int64, "prompt_tokens": pl.Int64, "completion_tokens": pl.Int64, "is_simulated": pl.Boolean,
    "is_synthesized": pl.Boolean, "manifest_json": pl.String, "source_row": pl.Int64,
}
MAX_MANIFEST_BYTES = 16 * 1024 * 1024
TEXT_FIELDS = ("run_name", "model", "model_canonical", "model_id", "base_url", "prompt_catalog_sha256",
               "label_template_sha256", "lfh_version", "git_commit")
COUNT_FIELDS = ("requests", "retries", "failures", "prompt_tokens", "completion_tokens")
TALLY_FIELDS = ("reported_models", "system_fingerprints")


def parse_time(text: Any) -> datetime | None:
    """An ISO 8601 time as naive UTC; None when it is not one."""
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        value = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value


def _tally_text(counter: Counter[str]) -> str:
    return json.dumps(dict(sorted(counter.items())), ensure_ascii=False)


def _with_columns(frame: pl.DataFrame, names: list[str]) -> pl.DataFrame:
    missing = [name for name in names if name not in frame.columns]
    return frame.with_columns(pl.lit(None, dtype=pl.String).alias(name) for name in missing) if missing else frame


def parsed_times(values: pl.Series) -> pl.Series:
    """Each text as a naive UTC time, null where it is not one: polars parses the format it infers, and the values
    that format misses (another format, an offset it did not expect) are tried one by one as ISO 8601."""
    try:
        parsed = values.str.to_datetime(time_unit="us", strict=False)
    except pl.exceptions.PolarsError:
        parsed = pl.Series(values.name, [None] * values.len(), dtype=pl.Datetime("us"))
    if getattr(parsed.dtype, "time_zone", None) is not None:
        parsed = parsed.dt.convert_time_zone("UTC").dt.replace_time_zone(None)
    missed = values.is_not_null() & parsed.is_null()
    if missed.any():
        tried = {value: parse_time(value) for value in values.filter(missed).unique().to_list()}
        again = values.replace_strict(tried, default=None, return_dtype=pl.Datetime("us"))
        parsed = pl.select(pl.when(missed).then(again).otherwise(parsed)).to_series()
    return parsed


@dataclass
class _Synthesized:
    """The figures of one synthesized run, summed over a file's batches."""

    model: str
    model_canonical: str
    first_row: int
    model_ids: set[str] = field(default_factory=set)
    versions: Counter[str] = field(default_factory=Counter)
    fingerprints: Counter[str] = field(default_factory=Counter)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    started: datetime | None = None
    finished: datetime | None = None

    def add(self, summary: dict[str, Any]) -> None:
        """One batch's figures of the run (a row of FileRuns._summary)."""
        self.first_row = min(self.first_row, summary["first_row"])
        self.model_ids.update(summary["model_ids"])
        for name in ("prompt_tokens", "completion_tokens"):
            if summary[f"{name}_given"]:
                setattr(self, name, (getattr(self, name) or 0) + int(summary[name]))
        if summary["started"] is not None:
            self.started = summary["started"] if self.started is None else min(self.started, summary["started"])
            self.finished = summary["finished"] if self.finished is None else max(self.finished, summary["finished"])

    def row(self, run_id: str, simulated: bool) -> dict[str, Any]:
        return {
            "run_id": run_id, "run_kind": FILE_RUN_KIND, "run_name": None, "model": self.model,
            "model_canonical": self.model_canonical,
            "model_id": next(iter(self.model_ids)) if len(self.model_ids) == 1 else None,
            "base_url": None, "reported_models": _tally_text(self.versions),
            "system_fingerprints": _tally_text(self.fingerprints), "sampling": None, "prompt_catalog_sha256": None,
            "label_template_sha256": None, "lfh_version": None, "git_commit": None, "git_dirty": None,
            "started_at": self.started, "finished_at": self.finished, "requests": None, "retries": None,
            "failures": None, "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
            "is_simulated": simulated, "is_synthesized": True, "manifest_json": None, "source_row": self.first_row,
        }


class FileRuns:
    """Gives every story and label response of one file its run id, and keeps the figures of the runs synthesized
    for the rows that came without one."""

    def __init__(self, file_sha256: str) -> None:
        self.file_sha256 = file_sha256
        self._runs: dict[str, _Synthesized] = {}

    def attach(self, batch: Batch) -> None:
        """Fill run_id (and the other run columns, null when absent) of the batch's stories and responses."""
        if batch.stories is not None:
            batch.stories = self._attach(_with_columns(batch.stories, RUN_COLUMNS), "model_canonical", "model",
                                         "model_version", "generated_at", "model_id")
        if batch.label_responses is not None:
            batch.label_responses = self._attach(_with_columns(batch.label_responses, LABEL_RUN_COLUMNS),
                                                 "labeler_model", "labeler_model", "labeler_version", "responded_at",
                                                 None)

    def _attach(self, frame: pl.DataFrame, key: str, given: str, version: str, time: str,
                model_id: str | None) -> pl.DataFrame:
        without = frame.filter(pl.col("run_id").is_null())
        if not without.height:
            return frame
        for summary in self._summary(without, key, given, time, model_id).iter_rows(named=True):
            run_id = file_run_id(self.file_sha256, summary["key"])
            run = self._runs.get(run_id)
            if run is None:
                run = self._runs[run_id] = _Synthesized(summary["model"], summary["key"], summary["first_row"])
            run.add(summary)
        for column, tally in ((version, "versions"), ("system_fingerprint", "fingerprints")):
            counted = without.filter(pl.col(column).is_not_null()).group_by(key, column).len()
            for value, reported, count in counted.iter_rows():
                getattr(self._runs[file_run_id(self.file_sha256, value)], tally)[reported] += count
        synthesized = pl.lit(f"file:{self.file_sha256}:") + pl.col(key)
        return frame.with_columns(pl.coalesce(pl.col("run_id"), synthesized).alias("run_id"))

    @staticmethod
    def _summary(rows: pl.DataFrame, key: str, given: str, time: str, model_id: str | None) -> pl.DataFrame:
        """Per run key: the model as given, first row, configured ids, token sums (and whether any was given),
        first and last parseable time."""
        tokens = [name for name in ("prompt_tokens", "completion_tokens") if name in rows.columns]
        return rows.with_columns(parsed_times(rows[time]).alias("_time")).group_by(key, maintain_order=True).agg(
            pl.col(key).first().alias("key"), pl.col(given).first().alias("model"),
            pl.col("source_row").min().cast(pl.Int64).alias("first_row"),
            (pl.col(model_id).drop_nulls().unique() if model_id else pl.lit([], dtype=pl.List(pl.String)).first()
             ).alias("model_ids"),
            *(pl.col(name).sum().cast(pl.Int64).alias(name) for name in tokens),
            *(pl.col(name).is_not_null().any().alias(f"{name}_given") for name in tokens),
            *(pl.lit(False).alias(f"{name}_given") for name in ("prompt_tokens", "completion_tokens")
              if name not in tokens),
            pl.col("_time").min().alias("started"), pl.col("_time").max().alias("finished"),
        )

    def frame(self, simulated: bool) -> pl.DataFrame:
        """The synthesized runs' rows for raw.runs (with source_row: the run's first row in the file)."""
        return pl.DataFrame([run.row(run_id, simulated) for run_id, run in self._runs.items()], schema=RUN_SCHEMA)


class ManifestProblem(ValueError):
    """A manifest field that is not what it must be."""

    def __init__(self, name: str, problem: str) -> None:
        super().__init__(f"field {name}: {problem}")
        self.name = name


def _text_field(document: dict[str, Any], name: str) -> str | None:
    value = document.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ManifestProblem(name, f"expected text or null, found {type(value).__name__}")
    return value.strip() or None


def _count_field(document: dict[str, Any], name: str) -> int | None:
    value = document.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0 or value >= 2**63:
        raise ManifestProblem(name, f"expected a non-negative integer or null, found {value!r}")
    return value


def _time_field(document: dict[str, Any], name: str) -> datetime | None:
    value = document.get(name)
    if value is None:
        return None
    moment = parse_time(value)
    if moment is None:
        raise ManifestProblem(name, f"expected an ISO 8601 time or null, found {value!r}")
    return moment


def _tally_field(document: dict[str, Any], name: str) -> str:
    value = document.get(name)
    if value is None:
        return "{}"
    if not isinstance(value, dict) or not all(isinstance(count, int) and not isinstance(count, bool) and count >= 0
                                              for count in value.values()):
        raise ManifestProblem(name, "expected an object of model string -> count (non-negative integers)")
    return json.dumps(dict(sorted(value.items())), ensure_ascii=False)


def _bool_field(document: dict[str, Any], name: str, default: bool | None) -> bool | None:
    value = document.get(name)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ManifestProblem(name, f"expected true, false or null, found {value!r}")
    return value


def manifest_row(document: Any, simulated_file: bool) -> dict[str, Any]:
    """The raw.runs row of a parsed manifest; ManifestProblem naming the first field that is wrong."""
    if not isinstance(document, dict):
        raise ManifestProblem("(top level)", "expected a JSON object")
    if document.get("manifest_version") != MANIFEST_VERSION:
        raise ManifestProblem("manifest_version", f"expected {MANIFEST_VERSION}, found "
                                                  f"{document.get('manifest_version')!r}")
    run_id = _text_field(document, "run_id")
    if run_id is None or len(run_id) > 200:
        raise ManifestProblem("run_id", "expected the run's id (text of 1-200 characters)")
    if document.get("run_kind") not in RUN_KINDS:
        raise ManifestProblem("run_kind", f"expected one of {', '.join(RUN_KINDS)}, found {document.get('run_kind')!r}")
    texts = {name: _text_field(document, name) for name in TEXT_FIELDS}
    sampling = document.get("sampling")
    if sampling is not None and not isinstance(sampling, dict):
        raise ManifestProblem("sampling", "expected an object of the settings sent, or null")
    started, finished = _time_field(document, "started_at"), _time_field(document, "finished_at")
    row = {
        "run_id": run_id, "run_kind": document["run_kind"], **texts,
        "model_canonical": texts["model_canonical"] or (canonical_model(texts["model"]) if texts["model"] else None),
        "base_url": safe_url(texts["base_url"]),
        **{name: _tally_field(document, name) for name in TALLY_FIELDS},
        "sampling": None if sampling is None else json.dumps(sampling, ensure_ascii=False, sort_keys=True),
        "git_dirty": _bool_field(document, "git_dirty", None), "started_at": started, "finished_at": finished,
        **{name: _count_field(document, name) for name in COUNT_FIELDS},
        "is_simulated": bool(_bool_field(document, "is_simulated", False)) or simulated_file,
        "is_synthesized": False, "source_row": 1,
    }
    row["manifest_json"] = json.dumps(safe_document(document), ensure_ascii=False, sort_keys=True)
    return row


def safe_document(value: Any) -> Any:
    """The parsed manifest with every `base_url`, at any depth (the invocations' too), made safe (lfh.runs.safe_url):
    what is stored never carries a credential-bearing URL, whatever the file said."""
    if isinstance(value, dict):
        return {key: (safe_url(item) if isinstance(item, str) else None) if key == "base_url" else safe_document(item)
                for key, item in value.items()}
    if isinstance(value, list):
        return [safe_document(item) for item in value]
    return value


@dataclass(frozen=True)
class ManifestLoad:
    runs: pl.DataFrame
    rejects: pl.DataFrame


def read_manifest_file(path: Path, simulated_file: bool) -> ManifestLoad:
    """The manifest as a raw.runs row, or as a raw.rejects row (reason bad_manifest) saying which field of which
    file is wrong. The rejected record is stored only when it parsed, with its base URL made safe."""
    document: Any = None
    try:
        if path.stat().st_size > MAX_MANIFEST_BYTES:
            raise ManifestProblem("(file)", f"larger than {MAX_MANIFEST_BYTES // 2**20} MB: not a run manifest")
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ManifestProblem("(file)", f"not valid JSON in UTF-8 ({exc})") from None
        row = manifest_row(document, simulated_file)
    except ManifestProblem as problem:
        raw = None
        if isinstance(document, dict | list):
            raw = json.dumps(safe_document(document), ensure_ascii=False, sort_keys=True, default=str)
        rejects = pl.DataFrame([{"source_row": 1, "target_table": "runs", "reason": "bad_manifest",
                                 "detail": f"{path}: {problem}; fix it or move it aside", "raw_record": raw}],
                               schema=REJECT_SCHEMA)
        return ManifestLoad(pl.DataFrame(schema=RUN_SCHEMA), rejects)
    return ManifestLoad(pl.DataFrame([row], schema=RUN_SCHEMA), pl.DataFrame(schema=REJECT_SCHEMA))
