"""The run manifest: what one run of `lfh generate`, `lfh label` or `lfh simulate` was, written beside the JSON
Lines it describes (<output stem>.manifest.json), so that `lfh ingest` lands it in raw.runs with the data.

A run is one output file: the default run of a model, or a run named with --run. Running the same command again
resumes the run: same run id, the manifest rewritten with the counts of every invocation added up (an invocation
that asks nothing leaves it untouched). The manifest is written when the run starts (so a killed run still has
one), every few seconds while it runs, and at its end, each time atomically (a kill leaves the old or the new one).

What it holds: the endpoint's base URL with any credentials taken out (never a key), the configured model id, every
model string and system_fingerprint the responses reported (counts per response), the sampling settings sent,
content hashes of the prompt catalog and of the labeling request template, lfh's version and git commit (with a
dirty flag; null where git or the checkout is absent), start and end times, and counts (requests, retries,
failures, tokens). docs/CONTRACTS.md lists the fields.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lfh import __version__, identity
from lfh.errors import InputError
from lfh.llm.config import ModelConfig
from lfh.llm.journal import now_iso
from lfh.llm.prompts import one_character_request, two_character_request
from lfh.llm.request import RunStats, request_body
from lfh.paths import project_root, seeds_dir
from lfh.runs import MANIFEST_SUFFIX, MANIFEST_VERSION, manifest_path, safe_url

COUNTS = ("requests", "retries", "failures", "prompt_tokens", "completion_tokens", "samples")
TALLIES = ("reported_models", "system_fingerprints")
CHECKPOINT_SECONDS = 5.0
DEFAULT_BASE_URL = "https://api.openai.com/v1"  # the OpenAI client's, when the models file names none


def sampling_sent(config: ModelConfig, json_mode: bool) -> dict[str, Any]:
    """The settings every request of the run sends besides the model and messages (a setting not listed is not
    sent: the endpoint's default applies). `n` is the most samples one request asks for."""
    sent = request_body(config, [], config.samples_per_call, json_mode)
    return {"n": config.samples_per_call, **{name: value for name, value in sent.items()
                                              if name not in ("model", "messages", "n")}}


def _sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def prompt_catalog_sha256(path: Path | None = None) -> str | None:
    """sha256 of the prompt catalog file's bytes (seeds/prompt_catalog.csv)."""
    try:
        return hashlib.sha256((path or seeds_dir() / "prompt_catalog.csv").read_bytes()).hexdigest()
    except OSError:
        return None


def label_template_sha256() -> str:
    """sha256 of the labeling request templates (both forms, rendered with placeholders): any change of the
    request text changes it."""
    return _sha256_text(one_character_request("{role}", "{story}") + "\x1f"
                        + two_character_request("{subject_key}", "{object_key}", "{story}"))


def git_state(root: Path | None = None) -> tuple[str | None, bool | None]:
    """(commit, dirty) of the checkout lfh runs from; (None, None) without git or outside a git checkout. Dirty:
    a tracked file differs from the commit (untracked files, e.g. data, do not count)."""
    folder = root or project_root()
    if not (folder / "dbt_project.yml").is_file():  # lfh installed outside its checkout: no commit to tell
        return None, None
    try:
        commit = subprocess.run(["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=10, check=True).stdout.strip()
        status = subprocess.run(["git", "-C", str(folder), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None, None
    return (commit or None), (bool(status.strip()) if commit else None)


def new_run_id() -> str:
    return uuid.uuid4().hex


def _write_atomically(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=1, ensure_ascii=False)
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def read_manifest(path: Path) -> dict[str, Any] | None:
    """The manifest at path, None when there is none; InputError when it cannot be read as one."""
    if not path.exists():
        return None
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: unreadable run manifest ({exc}); restore it, or move it aside to start the "
                         "run's record afresh (its stories keep their run id)") from None
    if not isinstance(document, dict) or not isinstance(document.get("run_id"), str):
        raise InputError(f"{path}: not a run manifest (no run_id); move it aside")
    return document


@dataclass
class RunManifest:
    """One run's manifest, kept up to date while an invocation runs."""

    path: Path
    document: dict[str, Any]
    earlier: dict[str, Any] = field(default_factory=dict)  # the counts of earlier invocations
    _written: float = 0.0
    _stats: RunStats | None = None  # this invocation's figures as last seen

    @property
    def run_id(self) -> str:
        return str(self.document["run_id"])

    @classmethod
    def start(cls, output: Path, kind: str, config: ModelConfig, run_name: str | None, json_mode: bool = False,
              extra: dict[str, Any] | None = None) -> RunManifest:
        """Open the run of this output file (its existing manifest, else a new run id) for a new invocation."""
        path = manifest_path(output)
        previous = read_manifest(path) or {}
        commit, dirty = git_state()
        started = now_iso()
        sampling, base_url = sampling_sent(config, json_mode), safe_url(config.base_url) or DEFAULT_BASE_URL
        # what this invocation used: a resumed run whose models file changed meanwhile shows it here
        invocation = {"started_at": started, "finished_at": None, "lfh_version": __version__,
                      "git_commit": commit, "git_dirty": dirty, "model_id": config.model, "base_url": base_url,
                      "sampling": sampling}
        document = {
            "manifest_version": MANIFEST_VERSION,
            "run_id": previous.get("run_id") or new_run_id(),
            "run_kind": kind,
            "run_name": run_name,
            "model": config.name,
            "model_canonical": identity.canonical_model(config.name),
            "model_id": config.model,
            "base_url": base_url,
            "output_file": output.name,
            "sampling": sampling,
            "prompt_catalog_sha256": prompt_catalog_sha256(),
            "label_template_sha256": label_template_sha256(),
            "lfh_version": __version__,
            "git_commit": commit,
            "git_dirty": dirty,
            "started_at": previous.get("started_at") or started,
            "finished_at": None,
            "is_simulated": False,
            **(extra or {}),
        }
        earlier = {name: _count(previous.get(name)) for name in COUNTS}
        earlier.update({name: _tally(previous.get(name)) for name in TALLIES})
        document["invocations"] = [*_invocations(previous.get("invocations")), invocation]
        manifest = cls(path, document, earlier)
        manifest.update(RunStats(model=config.name), force=True)
        return manifest

    def update(self, stats: RunStats, force: bool = False, finished: bool = False) -> None:
        """Write the run's figures so far: earlier invocations' plus this one's (at most every few seconds
        unless forced)."""
        self._stats = stats
        now = time.monotonic()
        if not force and now - self._written < CHECKPOINT_SECONDS:
            return
        this = {"requests": stats.requests, "retries": stats.retries, "failures": stats.jobs_failed,
                "prompt_tokens": stats.prompt_tokens, "completion_tokens": stats.completion_tokens,
                "samples": stats.samples_done}
        for name in COUNTS:
            self.document[name] = self.earlier[name] + this[name]
        for name, tally in (("reported_models", stats.reported_models),
                            ("system_fingerprints", stats.system_fingerprints)):
            merged = dict(self.earlier[name])
            for key, count in tally.items():
                merged[key] = merged.get(key, 0) + count
            self.document[name] = dict(sorted(merged.items()))
        invocation = self.document["invocations"][-1]
        invocation.update(this)
        if finished:
            stamp = now_iso()
            invocation["finished_at"] = stamp
            self.document["finished_at"] = stamp
        _write_atomically(self.path, self.document)
        self._written = now

    def finish(self, stats: RunStats | None = None) -> None:
        """The invocation's end (also when it was stopped): its figures, given or as last seen."""
        self.update(stats or self._stats or RunStats(model=str(self.document.get("model"))), force=True,
                    finished=True)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _tally(value: Any) -> dict[str, int]:
    if not isinstance(value, dict):
        return {}
    return {str(key): _count(count) for key, count in value.items()}


def _invocations(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def write_simulated_manifest(output: Path, run_id: str, model: str, settings: dict[str, Any], samples: int,
                             started_at: str, finished_at: str, reported_models: dict[str, int]) -> Path:
    """The manifest of one simulated run (`lfh simulate`), beside its file: no endpoint, no requests; marked
    simulated. reported_models: the version the simulation stands for, when it names one."""
    commit, dirty = git_state()
    document = {
        "manifest_version": MANIFEST_VERSION, "run_id": run_id, "run_kind": "simulate", "run_name": None,
        "model": model, "model_canonical": identity.canonical_model(model), "model_id": None, "base_url": None,
        "output_file": output.name, "reported_models": reported_models, "system_fingerprints": {},
        "sampling": settings,
        "prompt_catalog_sha256": prompt_catalog_sha256(), "label_template_sha256": label_template_sha256(),
        "lfh_version": __version__, "git_commit": commit, "git_dirty": dirty, "started_at": started_at,
        "finished_at": finished_at, "requests": 0, "retries": 0, "failures": 0, "prompt_tokens": 0,
        "completion_tokens": 0, "samples": samples, "is_simulated": True,
    }
    path = output.with_name(f"{output.stem}.{_file_part(run_id.split(':', 2)[-1])}{MANIFEST_SUFFIX}")
    _write_atomically(path, document)
    return path


def _file_part(name: str) -> str:
    return "".join(character if character.isalnum() or character in "._-" else "_" for character in name) or "run"
