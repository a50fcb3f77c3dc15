"""`lfh label`: ask a labeling model about every story not yet labeled under (labeler, prompt version,
samples), with the request text of docs/METHOD.md §3, and store each raw response untouched in
data/landing/labels/label-<labeler>-<prompt version>.jsonl (the format `lfh ingest` reads)."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from lfh import identity
from lfh.db import reading
from lfh.errors import EndpointError, InputError
from lfh.llm.client import Completion, Job
from lfh.llm.config import ModelConfig, api_key, pick_models
from lfh.llm.generate import check_run_name, default_landing, failures_file
from lfh.llm.journal import JournalWriter, count_records, keep_current, now_iso, read_records, repair_tail
from lfh.llm.manifest import RunManifest
from lfh.llm.prompts import PROMPT_VERSION, LabelKeys, label_keys, label_messages
from lfh.llm.reporting import RunReporter, Silent
from lfh.llm.run import execute, safe_file_stem
from lfh.paths import database_path


def label_set(prompt_version: str, run_name: str | None) -> str:
    """The label set a run labels under: the prompt version, and for a named run `<prompt version>@<run name>`
    (the build then uses the label set loaded last, or the one var labeling_prompt_version names)."""
    return f"{prompt_version}@{run_name}" if run_name else prompt_version


def labels_file(landing: Path, labeler: str, prompt_version: str) -> Path:
    return landing / "labels" / f"label-{safe_file_stem(labeler)}-{safe_file_stem(prompt_version)}.jsonl"


def sample_key(story_id: str, sample_index: int) -> bytes:
    """A compact key per (story, sample): the done-set of a 500,000-story run stays tens of megabytes."""
    return hashlib.blake2b(f"{story_id}\x1f{sample_index}".encode(), digest_size=16).digest()


def landed_samples(landing: Path, labeler: str, prompt_version: str) -> set[bytes]:
    """(story, sample) pairs already in any landing labels file for this labeler and prompt version."""
    done: set[bytes] = set()
    folder = landing / "labels"
    if not folder.is_dir():
        return done
    for path in sorted(folder.glob("*.jsonl")):
        repair_tail(path)
        for number, record in read_records(path):
            if record.get("labeler_model") != labeler or record.get("prompt_version") != prompt_version:
                continue
            story, sample = record.get("story_id"), record.get("sample_index")
            if not isinstance(story, str) or not isinstance(sample, int):
                raise InputError(f"{path}:{number}: label record lacks story_id or sample_index")
            done.add(sample_key(story, sample))
    return done


def landing_stories(landing: Path) -> Iterator[dict[str, Any]]:
    """Stories in the landing files, with story_id as `lfh ingest` gives it (derived from content when absent)."""
    folder = landing / "stories"
    if not folder.is_dir():
        return
    for path in sorted(folder.glob("*.jsonl")):
        repair_tail(path)
        occurrences: dict[bytes, int] = {}
        for number, record in read_records(path):
            text, query, model = record.get("text"), record.get("query"), record.get("model")
            if not isinstance(text, str) or not isinstance(query, str) or not isinstance(model, str):
                continue  # ingest rejects it with its reason; nothing to label
            story_id = record.get("story_id")
            if not story_id:
                canonical = identity.canonical_model(model)
                content = hashlib.blake2b(f"{canonical}\x1f{query}\x1f{text}".encode(), digest_size=16).digest()
                occurrences[content] = occurrences.get(content, 0) + 1
                story_id = identity.story_id(canonical, query, text, occurrences[content])
            yield {"story_id": str(story_id), "query": query, "subject": _text_or_none(record.get("subject")),
                   "object": _text_or_none(record.get("object")), "text": text, "source": f"{path}:{number}",
                   "from_landing": True}


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


SPOOL_COLUMNS = ("story_id", "query", "subject", "object", "text", "source", "from_landing")
SPOOL_SCHEMA = pa.schema([(name, pa.bool_() if name == "from_landing" else pa.string()) for name in SPOOL_COLUMNS])
SPOOL_BATCH = 5000


def spool_landing_stories(landing: Path, spool: Path) -> bool:
    """Landing stories to Parquet in batches: read (and their ids derived) once, then counted and labeled from it."""
    writer: pq.ParquetWriter | None = None
    rows: list[dict[str, Any]] = []
    try:
        for story in landing_stories(landing):
            rows.append(story)
            if len(rows) >= SPOOL_BATCH:
                writer = writer or pq.ParquetWriter(spool, SPOOL_SCHEMA)
                writer.write_table(pa.Table.from_pylist(rows, schema=SPOOL_SCHEMA))
                rows.clear()
        if rows:
            writer = writer or pq.ParquetWriter(spool, SPOOL_SCHEMA)
            writer.write_table(pa.Table.from_pylist(rows, schema=SPOOL_SCHEMA))
    finally:
        if writer is not None:
            writer.close()
    return writer is not None


def spool_warehouse_stories(db_path: Path, spool: Path) -> bool:
    """raw.stories to Parquet with the warehouse closed at once, so a labeling run of hours never holds the file
    against `lfh ingest` or `lfh build`."""
    if not db_path.exists():
        return False
    with _read_only_warehouse(db_path) as connection:
        if not _has_raw_table(connection, "stories"):
            return False
        source = _sql_text(f"{db_path} raw.stories")
        connection.execute(
            "copy (select story_id, query, subject, object, story_text as text, "
            f"{source} as source, false as from_landing from raw.stories) to {_sql_text(str(spool))} (format parquet)"
        )
    return True


@contextlib.contextmanager
def _read_only_warehouse(db_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    with reading(db_path, "read the stories to label") as connection:  # waits for a running build
        yield connection


def _has_raw_table(connection: duckdb.DuckDBPyConnection, table: str) -> bool:
    found = connection.execute(
        "select count(*) from information_schema.tables where table_schema = 'raw' and table_name = ?", [table]
    ).fetchone()
    return bool(found and found[0])


def _sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@contextlib.contextmanager
def spooled_stories(landing: Path, db_path: Path, include_landing: bool, spool_dir: Path) -> Iterator[list[Path]]:
    """The stories to consider, landing first, as Parquet files that exist for the run and are removed after it."""
    spool_dir.mkdir(parents=True, exist_ok=True)
    landing_spool, warehouse_spool = spool_dir / "landing-stories.parquet", spool_dir / "warehouse-stories.parquet"
    try:
        spools = []
        if include_landing and spool_landing_stories(landing, landing_spool):
            spools.append(landing_spool)
        if spool_warehouse_stories(db_path, warehouse_spool):
            spools.append(warehouse_spool)
        yield spools
    finally:
        landing_spool.unlink(missing_ok=True)
        warehouse_spool.unlink(missing_ok=True)


def read_spools(spools: list[Path], with_text: bool) -> Iterator[dict[str, Any]]:
    """Spooled stories in batches; the count pass leaves out the text, the bulk of every row."""
    columns = [name for name in SPOOL_COLUMNS if with_text or name != "text"]
    for spool in spools:
        for batch in pq.ParquetFile(spool).iter_batches(batch_size=SPOOL_BATCH, columns=columns):
            for values in zip(*(column.to_pylist() for column in batch.columns), strict=True):
                yield dict(zip(columns, values, strict=True))


def warehouse_samples(db_path: Path, labeler: str, prompt_version: str) -> set[bytes]:
    done: set[bytes] = set()
    if not db_path.exists():
        return done
    with _read_only_warehouse(db_path) as connection:
        if _has_raw_table(connection, "label_responses"):
            cursor = connection.execute(
                "select story_id, sample_index from raw.label_responses where labeler_model = ? and prompt_version = ?",
                [labeler, prompt_version],
            )
            while rows := cursor.fetchmany(20000):
                done.update(sample_key(story, sample) for story, sample in rows)
    return done


def select_stories(stories: Iterator[dict[str, Any]], samples: int, done: set[bytes],
                   skipped: list[dict[str, Any]] | None, limit: int | None
                   ) -> Iterator[tuple[dict[str, Any], list[int], LabelKeys]]:
    """Each story with samples still missing, its missing sample indexes and role keys; a story both in a landing
    file and in the warehouse counts once. Only landing ids are remembered (raw.stories is unique on story_id), so
    memory does not grow with the warehouse."""
    landed: set[bytes] = set()
    emitted = 0
    for story in stories:
        if limit is not None and emitted >= limit:
            return
        seen_key = sample_key(story["story_id"], -1)
        if seen_key in landed:
            continue
        if story["from_landing"]:
            landed.add(seen_key)
        missing = [index for index in range(samples) if sample_key(story["story_id"], index) not in done]
        if not missing:
            continue
        try:
            keys = label_keys(story["query"], story["subject"], story["object"])
        except ValueError as exc:
            if skipped is not None:
                skipped.append({"story_id": story["story_id"], "source": story["source"], "reason": str(exc)})
            continue
        emitted += 1
        yield story, missing, keys


@dataclass(frozen=True)
class Plan:
    stories: int
    requests: int
    samples: int


def plan_work(selected: Iterable[tuple[dict[str, Any], list[int], LabelKeys]], samples_per_call: int) -> Plan:
    stories = requests = samples = 0
    for _story, missing, _keys in selected:
        stories += 1
        samples += len(missing)
        requests += -(-len(missing) // samples_per_call)
    return Plan(stories, requests, samples)


def label_jobs(selected: Iterable[tuple[dict[str, Any], list[int], LabelKeys]], config: ModelConfig
               ) -> Iterator[Job]:
    """One job per story (or per `samples_per_call` of its missing samples)."""
    for story, missing, keys in selected:
        request = keys.request(story["text"])
        for start in range(0, len(missing), config.samples_per_call):
            chunk = missing[start:start + config.samples_per_call]
            yield Job(key=f"{story['story_id']}/{chunk[0]}/{len(chunk)}", messages=label_messages(request),
                      n=len(chunk), meta={"story_id": story["story_id"], "samples": chunk})


def label_records(config: ModelConfig, prompt_version: str, samples: int, stored: set[bytes] | None = None,
                  run_id: str | None = None) -> Any:
    """Records of one completion; each (story, sample) is also added to `stored`, the samples on disk now."""
    def to_records(completion: Completion) -> list[dict[str, Any]]:
        story = completion.job.meta["story_id"]
        request_text = completion.job.messages[0]["content"]
        stamp = now_iso()
        records = []
        for sample, text, usage in completion.samples():
            records.append({
                "response_id": identity.response_id(story, config.name, prompt_version, sample),
                "story_id": story, "labeler_model": config.name, "labeler_model_id": config.model,
                "prompt_version": prompt_version, "samples_requested": samples, "sample_index": sample,
                "request_text": request_text, "response_text": text, "time": stamp, **usage,
                "run_id": run_id, "labeler_version": completion.model,
                "system_fingerprint": completion.system_fingerprint,
            })
            if stored is not None:
                stored.add(sample_key(story, sample))
        return records

    return to_records


def failing_now(stored: set[bytes]) -> Callable[[dict[str, Any]], bool]:
    """Whether an older failure record is still failing: some of its request's samples are not stored yet.
    A story the run could not label at all (no samples in the record) is re-reported by every run that meets it."""
    def still_failing(record: dict[str, Any]) -> bool:
        meta = record.get("meta") or {}
        story, samples = meta.get("story_id"), meta.get("samples")
        if not isinstance(story, str) or not isinstance(samples, list):
            return False
        return any(sample_key(story, sample) not in stored for sample in samples)

    return still_failing


def _failure_key(record: dict[str, Any]) -> str:
    return str(record.get("key"))


def stored_check(done: set[bytes]) -> Callable[[dict[str, Any]], bool]:
    def already_stored(record: dict[str, Any]) -> bool:
        key = sample_key(record["story_id"], record["sample_index"])
        if key in done:
            return True
        done.add(key)
        return False

    return already_stored


def label_stories(models_file: Path, labeler: str, samples: int, prompt_version: str | None, json_mode: bool,
                  out_dir: Path | None, include_landing: bool, limit: int | None, use_batch: bool,
                  poll_seconds: float, reporter: RunReporter | None = None, run_name: str | None = None) -> None:
    """Label every story not yet labeled under this labeler, prompt version and sample count (`lfh label`).
    With run_name, a labeling run of its own: its label set is <prompt version>@<run name>, so every story is
    labeled again under it. Progress and the summary go to the reporter (the CLI renders them on stderr)."""
    reporter = reporter or Silent()
    run_name = check_run_name(run_name)
    landing = (out_dir or default_landing()).resolve()
    config = pick_models(models_file, (labeler,))[0]
    version = label_set(prompt_version or (PROMPT_VERSION + ("+json" if json_mode else "")), run_name)
    db_path = database_path()
    done = warehouse_samples(db_path, config.name, version) | landed_samples(landing, config.name, version)
    output = labels_file(landing, config.name, version)
    failure_path = failures_file(landing, f"label-{safe_file_stem(version)}", config)
    skipped: list[dict[str, Any]] = []
    earlier_failures = count_records(failure_path)
    reporter.note(f"{config.name}: labeling under prompt version {version}, {samples} sample(s) per story; "
                  f"{len(done):,} samples already stored")
    with spooled_stories(landing, db_path, include_landing, failure_path.parent / f"spool-{output.stem}") as spools:
        # two passes over the spool: a count without the story text, so progress has a total and a time left
        plan = plan_work(select_stories(read_spools(spools, with_text=False), samples, done, skipped, limit),
                         config.samples_per_call)
        reporter.note(f"{config.name}: {plan.stories:,} stories to label, {plan.samples:,} samples in "
                      f"{plan.requests:,} requests")
        jobs = label_jobs(select_stories(read_spools(spools, with_text=True), samples, done, None, limit), config)
        # the run manifest beside the output: written when there is something to ask (a resumed run keeps its id)
        manifest = None
        if plan.requests:
            api_key(config)  # a missing key stops here, before a manifest records a run that asked nothing
            manifest = RunManifest.start(output, "label", config, run_name, json_mode,
                                         extra={"prompt_version": version, "samples_per_story": samples})
        run_id = manifest.run_id if manifest else None
        checkpoint = manifest.update if manifest else None
        try:
            with JournalWriter(output) as writer, JournalWriter(failure_path) as failures:
                if use_batch:
                    from lfh.llm.batch import run_batch

                    # stored_check adds each written sample to `done`
                    stats = run_batch(config, list(jobs), label_records(config, version, samples, run_id=run_id),
                                      writer, failures, state_dir=failure_path.parent / f"batch-{output.stem}",
                                      json_mode=json_mode, poll_seconds=poll_seconds, reporter=reporter,
                                      already_stored=stored_check(done), checkpoint=checkpoint)
                else:
                    stats = execute(config, jobs, plan.requests, writer, failures,
                                    label_records(config, version, samples, done, run_id), json_mode, reporter,
                                    checkpoint=checkpoint)
        finally:
            if manifest is not None:
                manifest.finish()
                reporter.note(f"{config.name}: labeling run {manifest.run_id}" + (f" ({run_name})" if run_name else "")
                              + f", recorded in {manifest.path}")
        if skipped:
            with JournalWriter(failure_path) as failures:
                failures.append([{"time": now_iso(), "model": config.name, "key": item["story_id"],
                                  "meta": {"source": item["source"]}, "error": f"not labeled: {item['reason']}",
                                  "status": None, "tries": 0} for item in skipped])
    failing = keep_current(failure_path, earlier_failures, failing_now(done), _failure_key)
    reporter.summary("lfh label", [stats], [output], None)
    if skipped:
        reporter.note(f"{len(skipped):,} stories could not be labeled (reasons in {failure_path})", warning=True)
    if stats.jobs_failed:
        raise EndpointError(
            f"{stats.jobs_failed:,} of {stats.jobs_done + stats.jobs_failed:,} requests failed for good after "
            f"{config.max_tries} tries; every response that succeeded is stored in {output}. What is failing "
            f"now ({failing:,} entries, with reasons): {failure_path}. Retry them by running the same command "
            "again (it asks only for what is missing)."
        )
