"""`lfh simulate`: a seeded, simulated corpus (stories + label responses in the project's own file formats)
with planted, configurable biases, and the planted truth next to it. The data are SIMULATED."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import polars as pl

from lfh.landing.simulated import write_marker
from lfh.llm.journal import now_iso
from lfh.llm.manifest import write_simulated_manifest
from lfh.paths import database_path, project_root
from lfh.runs import MANIFEST_SUFFIX
from lfh.simulate.config import SimConfig
from lfh.simulate.corpus import draw_corpus, label_frame, story_frame
from lfh.simulate.design import build_design
from lfh.simulate.lexicon import build_pools, read_lexicon
from lfh.simulate.truth import planted_truth

STORY_COLUMNS = ["story_id", "model", "query", "subject", "object", "text", "time", "prompt_id", "model_version"]
# Hidden so that `lfh ingest <folder>` (which reads every .json it finds) leaves it alone.
TRUTH_FILE = ".planted_truth.json"


@dataclass(frozen=True)
class SimulationResult:
    stories_path: Path
    labels_path: Path
    truth_path: Path
    stories: int
    responses: int
    seconds: float


def default_landing() -> Path:
    """data/landing/simulated: apart from data/landing/stories and labels, where lfh generate and label write."""
    return project_root() / "data" / "landing" / "simulated"


@dataclass(frozen=True)
class SimulatedRuns:
    frame: pl.DataFrame  # the rows, each with its run_id
    runs: list[tuple[str, str, str | None, int]]  # (run id, model, reported version or None, rows)


def simulated_runs(frame: pl.DataFrame, config: SimConfig, model_column: str) -> SimulatedRuns:
    """One run per simulated model (whatever spelling its stories carry) or labeler and, where the rows carry a
    model_version, per version: its id is the same for the same settings and seed
    (simulate:<settings sha256 prefix>:<model>[:<version>])."""
    described = {name: value for name, value in asdict(config).items() if name != "source"}  # not where it lies
    settings = hashlib.sha256(json.dumps(described, sort_keys=True, default=str).encode()).hexdigest()[:16]
    versioned = "model_version" in frame.columns and model_column == "model_canonical"
    parts = [pl.lit(f"simulate:{settings}:"), pl.col(model_column)]
    if versioned:
        parts += [pl.when(pl.col("model_version").is_not_null()).then(pl.lit(":") + pl.col("model_version"))
                  .otherwise(pl.lit(""))]
    frame = frame.with_columns(pl.concat_str(parts).alias("run_id"))
    keys = [model_column, "model_version"] if versioned else [model_column]
    counted = frame.group_by("run_id", *keys, maintain_order=True).agg(pl.len().alias("rows"))
    runs = [(row["run_id"], row[model_column], row.get("model_version"), int(row["rows"]))
            for row in counted.iter_rows(named=True)]
    return SimulatedRuns(frame, runs)


def write_run_manifests(runs: SimulatedRuns, output: Path, config: SimConfig, started_at: str) -> None:
    """A manifest (lfh.llm.manifest, marked simulated) per simulated run, beside the file holding its rows."""
    settings = {"seed": config.seed, "stories_per_prompt": config.stories_per_prompt,
                "samples_per_story": config.samples_per_story}
    finished_at = now_iso()
    for stale in output.parent.glob(f"{output.stem}.*{MANIFEST_SUFFIX}"):  # of an earlier simulation here
        stale.unlink()
    for run_id, model, version, rows in runs.runs:
        write_simulated_manifest(output, run_id, model, settings, rows, started_at, finished_at,
                                 {version: rows} if version else {})


def _write(frame: pl.DataFrame, path: Path, file_format: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if file_format == "parquet":
        frame.write_parquet(path)
    else:
        frame.write_ndjson(path)


def run_simulation(config: SimConfig, out_dir: Path, db_path: Path | None = None,
                   file_format: str = "jsonl") -> SimulationResult:
    """Draw the corpus and write stories/, labels/ and .planted_truth.json under out_dir."""
    started = time.perf_counter()
    census, wikipedia = read_lexicon(db_path or database_path())
    design = build_design(config)
    role_keys = [key for key in design.rows["role_key"].to_list() if key]
    pools = build_pools(config, census, wikipedia, role_keys)
    drawn, _characters = draw_corpus(config, design, pools)
    stories = story_frame(drawn, design)
    labels = label_frame(stories, design, config)

    extension = "parquet" if file_format == "parquet" else "jsonl"
    stories_path = out_dir / "stories" / f"simulated_stories.{extension}"
    labels_path = out_dir / "labels" / f"simulated_labels.{extension}"
    started_at = now_iso()
    story_runs = simulated_runs(stories, config, "model_canonical")
    label_runs = simulated_runs(labels, config, "labeler_model")
    _write(story_runs.frame.select(*STORY_COLUMNS, "run_id"), stories_path, file_format)
    _write(label_runs.frame, labels_path, file_format)
    for runs, path in ((story_runs, stories_path), (label_runs, labels_path)):
        write_run_manifests(runs, path, config, started_at)
    truth_path = out_dir / TRUTH_FILE
    truth = planted_truth(config, design, pools, config.stories_per_prompt)
    truth["stories_file"], truth["labels_file"] = str(stories_path), str(labels_path)
    truth["faults_drawn"] = {kind: int(count) for kind, count in
                             stories["fault_kind"].value_counts().iter_rows()}
    truth_path.write_text(json.dumps(truth, indent=1), encoding="utf-8")
    write_marker(out_dir)
    return SimulationResult(stories_path, labels_path, truth_path, stories.height, labels.height,
                            time.perf_counter() - started)
