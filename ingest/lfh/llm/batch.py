"""The OpenAI Batch API for large runs: prepare the JSONL (at most 50,000 requests a file), upload it, create
the batch, poll, download, and map each result back to its job. The batch ids live in a state file beside the
run, so a run stopped at any point picks up its batches again instead of paying for them twice; results are
checked against what is already stored before they are written, so nothing is stored twice either.

The uploaded file's id and a tag (also sent as the batch's metadata) are saved BEFORE the batch is created: a
run killed while the provider is still answering the create call has a batch it never heard of, and the next
run finds it by listing the batches (by input file id or tag) before it creates anything."""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import openai

from lfh.errors import EndpointError, InputError
from lfh.llm.client import Completion, Failure, Job, scrub
from lfh.llm.config import ModelConfig, api_key
from lfh.llm.journal import JournalWriter
from lfh.llm.reporting import RunReporter
from lfh.llm.request import RunStats, request_body
from lfh.llm.run import failure_record

MAX_REQUESTS_PER_FILE = 50_000
ENDPOINT = "/v1/chat/completions"
FINISHED = {"completed", "failed", "expired", "cancelled"}
TAG_KEY = "lfh_batch_tag"  # the batch's metadata key carrying the tag saved in the state file


def _load_state(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {"batches": []}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: unreadable batch state ({exc}); it lists the batch ids of this run, "
                         "restore it or remove it to start over") from None


def _save_state(path: Path, state: dict[str, Any]) -> None:
    temporary = path.with_suffix(".tmp")
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(state, handle, indent=2)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def _prepare(state_dir: Path, number: int, jobs: list[Job], config: ModelConfig, json_mode: bool) -> Path:
    requests_path = state_dir / f"input-{number:04d}.jsonl"
    with open(requests_path, "w", encoding="utf-8") as requests, \
            open(requests_path.with_suffix(".meta.jsonl"), "w", encoding="utf-8") as metas:
        for job in jobs:
            line = {"custom_id": job.key, "method": "POST", "url": ENDPOINT,
                    "body": request_body(config, job.messages, job.n, json_mode)}
            requests.write(json.dumps(line, ensure_ascii=False) + "\n")
            metas.write(json.dumps({"custom_id": job.key, "meta": job.meta}, ensure_ascii=False) + "\n")
    return requests_path


def _create(client: openai.OpenAI, entry: dict[str, Any], state_path: Path, state: dict[str, Any]) -> None:
    batch = client.batches.create(input_file_id=entry["input_file_id"], endpoint=ENDPOINT, completion_window="24h",
                                  metadata={TAG_KEY: entry["tag"]})
    entry["id"] = batch.id
    _save_state(state_path, state)


def _find_created(client: openai.OpenAI, entry: dict[str, Any]) -> str | None:
    """The id of a batch made from this entry's uploaded file (a create call whose answer the run never got)."""
    not_before = entry.get("uploaded_at_epoch", 0) - 3600  # listed newest first: stop well before the upload
    for batch in client.batches.list(limit=100):
        metadata = batch.metadata or {}
        if batch.input_file_id == entry["input_file_id"] or metadata.get(TAG_KEY) == entry["tag"]:
            return batch.id
        if batch.created_at < not_before:
            return None
    return None


def _recover_unrecorded(client: openai.OpenAI, pending: list[dict[str, Any]], state_path: Path,
                        state: dict[str, Any], reporter: RunReporter, name: str) -> None:
    """Entries uploaded but without a batch id: adopt the batch the provider made, else create it now (the
    file is not uploaded again)."""
    for entry in pending:
        if entry.get("id"):
            continue
        found = _find_created(client, entry)
        if found:
            entry["id"] = found
            _save_state(state_path, state)
            reporter.note(f"{name}: found batch {found} created by an interrupted run; not creating another")
        else:
            _create(client, entry, state_path, state)
            reporter.note(f"{name}: submitted batch {entry['id']} (file uploaded by an interrupted run)")


def _jobs_of(requests_path: Path) -> Iterator[Job]:
    with open(requests_path, encoding="utf-8") as requests, \
            open(requests_path.with_suffix(".meta.jsonl"), encoding="utf-8") as metas:
        for request_line, meta_line in zip(requests, metas, strict=True):
            request, meta = json.loads(request_line), json.loads(meta_line)
            yield Job(key=request["custom_id"], messages=request["body"]["messages"],
                      n=int(request["body"].get("n", 1)), meta=meta["meta"])


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _results(client: openai.OpenAI, file_id: str | None) -> dict[str, dict[str, Any]]:
    if not file_id:
        return {}
    content = client.files.content(file_id).text
    results = {}
    for line in content.splitlines():
        if line.strip():
            item = json.loads(line)
            results[item["custom_id"]] = item
    return results


def _map_back(client: openai.OpenAI, batch: Any, entry: dict[str, Any], to_records: Callable[[Completion], list],
              already_stored: Callable[[dict[str, Any]], bool], writer: JournalWriter, failures: JournalWriter,
              config: ModelConfig, stats: RunStats, secret: str) -> None:
    outputs = _results(client, batch.output_file_id)
    outputs.update({key: value for key, value in _results(client, batch.error_file_id).items() if key not in outputs})
    for job in _jobs_of(Path(entry["input_file"])):
        stats.requests += 1
        item = outputs.get(job.key)
        response = (item or {}).get("response") or {}
        body = response.get("body") or {}
        if item is None or response.get("status_code") != 200 or not body.get("choices"):
            detail = (item or {}).get("error") or body.get("error") or f"batch ended {batch.status}"
            stats.jobs_failed += 1
            failures.append([failure_record(Failure(job, scrub(f"batch {batch.id}: {detail}", secret)[:500],
                                                    response.get("status_code"), 1), config.name)])
            continue
        choices = sorted(body["choices"], key=lambda choice: choice.get("index") or 0)[:job.n]
        usage = body.get("usage") or {}
        reported, fingerprint = _text_or_none(body.get("model")), _text_or_none(body.get("system_fingerprint"))
        stats.count_response(reported, fingerprint)
        completion = Completion(job, [choice["message"].get("content") for choice in choices], 0,
                                usage.get("prompt_tokens"), usage.get("completion_tokens"), reported, fingerprint)
        records = [record for record in to_records(completion) if not already_stored(record)]
        writer.append(records)
        stats.samples_done += len(records)
        stats.jobs_done += 1
        stats.prompt_tokens += usage.get("prompt_tokens") or 0
        stats.completion_tokens += usage.get("completion_tokens") or 0
        stats.cost += config.cost(usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0)


def run_batch(config: ModelConfig, jobs: list[Job], to_records: Callable[[Completion], list[dict[str, Any]]],
              writer: JournalWriter, failures: JournalWriter, state_dir: Path, json_mode: bool, poll_seconds: float,
              reporter: RunReporter, already_stored: Callable[[dict[str, Any]], bool],
              checkpoint: Callable[[RunStats], None] | None = None) -> RunStats:
    """Submit the jobs not already in a pending batch, wait for every batch of this run, store the results.
    `already_stored(record)` says whether a record is in the output (and marks it stored when it was not);
    checkpoint(stats), when given, is called after each batch's results are stored."""
    secret = api_key(config)
    state_dir.mkdir(parents=True, exist_ok=True)
    state_path = state_dir / "state.json"
    state = _load_state(state_path)
    stats = RunStats(model=config.name, jobs_total=len(jobs))
    client = openai.OpenAI(api_key=secret, base_url=config.base_url, max_retries=5, timeout=config.timeout_seconds)
    pending = [entry for entry in state["batches"] if not entry.get("mapped")]
    in_flight = {job.key for entry in pending for job in _jobs_of(Path(entry["input_file"]))}
    fresh = [job for job in jobs if job.key not in in_flight]
    try:
        _recover_unrecorded(client, pending, state_path, state, reporter, config.name)
        for start in range(0, len(fresh), MAX_REQUESTS_PER_FILE):
            number = len(state["batches"]) + 1
            requests_path = _prepare(state_dir, number, fresh[start:start + MAX_REQUESTS_PER_FILE], config, json_mode)
            with open(requests_path, "rb") as handle:
                uploaded = client.files.create(file=handle, purpose="batch")
            entry = {"id": None, "input_file": str(requests_path), "input_file_id": uploaded.id,
                     "tag": f"lfh-{uuid.uuid4().hex}", "uploaded_at_epoch": int(time.time()),
                     "submitted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "mapped": False}
            state["batches"].append(entry)
            _save_state(state_path, state)  # before creating: a kill from here on is recovered by the tag
            pending.append(entry)
            _create(client, entry, state_path, state)
            reporter.note(f"{config.name}: submitted batch {entry['id']} ({requests_path.name})")
        while pending:
            for entry in list(pending):
                batch = client.batches.retrieve(entry["id"])
                entry["status"] = batch.status
                if batch.status not in FINISHED:
                    continue
                _map_back(client, batch, entry, to_records, already_stored, writer, failures, config, stats, secret)
                entry["mapped"] = True
                _save_state(state_path, state)
                if checkpoint is not None:
                    checkpoint(stats)
                pending.remove(entry)
                reporter.note(f"{config.name}: batch {batch.id} {batch.status}, results stored")
            if pending:
                reporter.note(f"{config.name}: waiting for {len(pending)} batch(es): "
                              + ", ".join(f"{entry['id']} {entry.get('status', '?')}" for entry in pending))
                time.sleep(poll_seconds)
    except openai.AuthenticationError:
        raise EndpointError(f"model {config.name}: the endpoint refused the key from ${config.api_key_env}") \
            from None
    except openai.OpenAIError as exc:
        raise EndpointError(f"model {config.name}: batch step failed: {scrub(str(exc), secret)[:300]}. "
                            f"Run the command again: the batch ids are kept in {state_path}") from None
    finally:
        client.close()
    return stats
