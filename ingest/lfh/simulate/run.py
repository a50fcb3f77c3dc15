"""`lfh simulate`: a seeded, simulated corpus (stories + label responses in the project's own file formats)
with planted, configurable biases, and the planted truth next to it. The data are SIMULATED."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from lfh.atomic import write_text, written_aside
from lfh.landing.simulated import write_marker
from lfh.paths import database_path, project_root
from lfh.simulate.config import SimConfig
from lfh.simulate.corpus import draw_corpus, label_frame, story_frame
from lfh.simulate.design import build_design
from lfh.simulate.lexicon import build_pools, read_lexicon
from lfh.simulate.truth import planted_truth

STORY_COLUMNS = ["story_id", "model", "query", "subject", "object", "text", "time", "prompt_id"]
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


def _write(frame: pl.DataFrame, path: Path, file_format: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with written_aside(path) as partial:  # a cut-short write never leaves a file that looks whole to lfh ingest
        if file_format == "parquet":
            frame.write_parquet(partial)
        else:
            frame.write_ndjson(partial)


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
    _write(stories.select(STORY_COLUMNS), stories_path, file_format)
    _write(labels, labels_path, file_format)
    truth_path = out_dir / TRUTH_FILE
    truth = planted_truth(config, design, pools, config.stories_per_prompt)
    truth["stories_file"], truth["labels_file"] = str(stories_path), str(labels_path)
    truth["faults_drawn"] = {kind: int(count) for kind, count in
                             stories["fault_kind"].value_counts().iter_rows()}
    write_text(truth_path, json.dumps(truth, indent=1))
    write_marker(out_dir)
    return SimulationResult(stories_path, labels_path, truth_path, stories.height, labels.height,
                            time.perf_counter() - started)
