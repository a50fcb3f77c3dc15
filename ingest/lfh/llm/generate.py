"""`lfh generate`: ask chosen models for stories to the catalog's prompts, N per prompt, into
data/landing/stories/generate-<model>.jsonl (the format `lfh ingest` reads), with its run manifest beside it
(lfh.llm.manifest). Runs again do only what is missing: the same run, resumed. `--run NAME` starts a run of its
own (a new wave of the same model) in generate-<model>--<NAME>.jsonl, whose stories have ids of their own."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lfh import identity
from lfh.errors import ConfigError, InputError
from lfh.llm.client import Completion, Job
from lfh.llm.config import ModelConfig, api_key, pick_models
from lfh.llm.journal import JournalWriter, now_iso, read_records, repair_tail
from lfh.llm.manifest import RunManifest
from lfh.llm.prompts import CatalogPrompt, catalog, story_messages
from lfh.llm.reporting import RunReporter, Silent
from lfh.llm.request import RunStats
from lfh.llm.run import execute, safe_file_stem
from lfh.paths import project_root


def default_landing() -> Path:
    return project_root() / "data" / "landing"


RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class BadRunName(InputError):
    """A --run name that cannot name files."""


def check_run_name(name: str | None) -> str | None:
    """The run name as given (None: the default run); BadRunName when it is not 1-64 letters, digits, '.', '_'
    or '-' starting with a letter or digit (it becomes part of file names and story ids)."""
    if name is None:
        return None
    if not RUN_NAME.fullmatch(name):
        raise BadRunName(f"run name {name!r}: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or "
                         "digit (e.g. 2025-06)")
    return name


def run_suffix(run_name: str | None) -> str:
    return f"--{run_name}" if run_name else ""


def stories_file(out_dir: Path, config: ModelConfig, run_name: str | None = None) -> Path:
    return out_dir / "stories" / f"generate-{safe_file_stem(config.name)}{run_suffix(run_name)}.jsonl"


def failures_file(out_dir: Path, command: str, config: ModelConfig, run_name: str | None = None) -> Path:
    # beside the landing folder, not in it: `lfh ingest data/landing` must not read failure logs as data
    return (out_dir.parent / "llm_runs"
            / f"{command}-{safe_file_stem(config.name)}{run_suffix(run_name)}.failures.jsonl")


class UnknownPromptError(ConfigError):
    """Prompt ids asked for that the catalog does not have."""

    def __init__(self, unknown: list[str]) -> None:
        super().__init__(f"not in seeds/prompt_catalog.csv: {', '.join(unknown)}")
        self.unknown = unknown


def choose_prompts(domains: tuple[str, ...], prompt_ids: tuple[str, ...]) -> list[CatalogPrompt]:
    prompts = list(catalog())
    known_ids = {prompt.prompt_id for prompt in prompts}
    unknown = sorted(set(prompt_ids) - known_ids)
    if unknown:
        raise UnknownPromptError(unknown)
    if domains:
        prompts = [prompt for prompt in prompts if prompt.domain in domains]
    if prompt_ids:
        prompts = [prompt for prompt in prompts if prompt.prompt_id in prompt_ids]
    return prompts


def completed_samples(path: Path) -> dict[str, set[int]]:
    """prompt_id -> sample indices already stored (the output file is the journal)."""
    done: dict[str, set[int]] = {}
    if not path.exists():
        return done
    repair_tail(path)
    for number, record in read_records(path):
        prompt_id, sample = record.get("prompt_id"), record.get("story_index")
        if not isinstance(prompt_id, str) or not isinstance(sample, int):
            raise InputError(f"{path}:{number}: record lacks prompt_id/story_index; "
                             "this file was not written by lfh generate, move it aside")
        done.setdefault(prompt_id, set()).add(sample)
    return done


def story_jobs(prompts: list[CatalogPrompt], per_prompt: int, done: dict[str, set[int]],
               config: ModelConfig) -> list[Job]:
    jobs = []
    for prompt in prompts:
        missing = [index for index in range(per_prompt) if index not in done.get(prompt.prompt_id, set())]
        for start in range(0, len(missing), config.samples_per_call):
            chunk = missing[start:start + config.samples_per_call]
            jobs.append(Job(key=f"{prompt.prompt_id}/{chunk[0]}/{len(chunk)}", messages=story_messages(prompt.query),
                            n=len(chunk), meta={"prompt_id": prompt.prompt_id, "samples": chunk}))
    return jobs


def story_records(config: ModelConfig, run_id: str | None = None, run_name: str | None = None) -> Any:
    by_id = {prompt.prompt_id: prompt for prompt in catalog()}
    canonical = identity.canonical_model(config.name)

    def to_records(completion: Completion) -> list[dict[str, Any]]:
        prompt = by_id[completion.job.meta["prompt_id"]]
        stamp = now_iso()
        return [{
            # a generator's own id: one story per (model, prompt, sample[, named run]), stable across resumed runs
            "story_id": identity.story_id(canonical, prompt.query, text or "", sample + 1, run_name),
            "model": config.name, "model_id": config.model, "query": prompt.query,
            "subject": prompt.subject, "object": prompt.object, "text": text, "time": stamp,
            "prompt_id": prompt.prompt_id, "story_index": sample, **usage,
            "run_id": run_id, "model_version": completion.model, "system_fingerprint": completion.system_fingerprint,
        } for sample, text, usage in completion.samples()]

    return to_records


def stored_check(done: dict[str, set[int]]) -> Callable[[dict[str, Any]], bool]:
    def already_stored(record: dict[str, Any]) -> bool:
        samples = done.setdefault(record["prompt_id"], set())
        if record["story_index"] in samples:
            return True
        samples.add(record["story_index"])
        return False

    return already_stored


def generate_stories(models_file: Path, model_names: tuple[str, ...], stories_per_prompt: int,
                     domains: tuple[str, ...], prompt_ids: tuple[str, ...], out_dir: Path | None, use_batch: bool,
                     poll_seconds: float, reporter: RunReporter | None = None, run_name: str | None = None) -> None:
    """Collect stories: each catalog prompt, exactly as written, N times per model (`lfh generate`), in the
    model's default run or, with run_name, in that named run. Progress and the summary go to the reporter (the CLI
    renders them on stderr)."""
    reporter = reporter or Silent()
    run_name = check_run_name(run_name)
    landing = (out_dir or default_landing()).resolve()
    prompts = choose_prompts(domains, prompt_ids)
    all_stats, outputs = [], []
    failure_path = None
    for config in pick_models(models_file, model_names):
        output = stories_file(landing, config, run_name)
        done = completed_samples(output)
        jobs = story_jobs(prompts, stories_per_prompt, done, config)
        failure_path = failures_file(landing, "generate", config, run_name)
        reporter.note(f"{config.name}: {sum(job.n for job in jobs):,} stories to collect in {len(jobs):,} requests"
                      + (f" (run {run_name})" if run_name else ""))
        stats = _collect(config, jobs, output, failure_path, done, use_batch, poll_seconds, reporter, run_name)
        all_stats.append(stats)
        outputs.append(output)
    reporter.summary("lfh generate", all_stats, outputs, failure_path)


def _collect(config: ModelConfig, jobs: list[Job], output: Path, failure_path: Path, done: dict[str, set[int]],
             use_batch: bool, poll_seconds: float, reporter: RunReporter, run_name: str | None) -> RunStats:
    """One model's requests into its run's output, the run manifest kept beside it (untouched when there is
    nothing to ask)."""
    if not jobs:
        return RunStats(model=config.name, jobs_total=0)
    api_key(config)  # a missing key stops here, before a manifest records a run that asked nothing
    manifest = RunManifest.start(output, "generate", config, run_name)
    to_records = story_records(config, manifest.run_id, run_name)
    try:
        with JournalWriter(output) as writer, JournalWriter(failure_path) as failures:
            if use_batch:
                from lfh.llm.batch import run_batch

                state_dir = failure_path.parent / f"batch-{failure_path.name.removesuffix('.failures.jsonl')}"
                stats = run_batch(config, jobs, to_records, writer, failures, state_dir=state_dir, json_mode=False,
                                  poll_seconds=poll_seconds, reporter=reporter, already_stored=stored_check(done),
                                  checkpoint=manifest.update)
            else:
                stats = execute(config, jobs, len(jobs), writer, failures, to_records, False, reporter,
                                checkpoint=manifest.update)
    finally:
        manifest.finish()  # also when stopped: the figures of what was done
        reporter.note(f"{config.name}: run {manifest.run_id}" + (f" ({run_name})" if run_name else "")
                      + f", recorded in {manifest.path}")
    return stats
