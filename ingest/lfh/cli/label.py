"""`lfh label`: options and messages over lfh.llm.label.label_stories."""

from __future__ import annotations

from pathlib import Path

import click

from lfh.cli.command import command
from lfh.cli.llm_progress import RichReporter
from lfh.llm.generate import BadRunName
from lfh.llm.label import label_stories
from lfh.llm.prompts import PROMPT_VERSION


@command()
@click.option("--models", "models_file", type=click.Path(path_type=Path, dir_okay=False), required=True,
              help="Models file (TOML), see configs/models.example.toml.")
@click.option("--labeler", required=True, help="The labeling model's name in the models file.")
@click.option("--samples", type=click.IntRange(min=1), default=1, show_default=True,
              help="Responses per story (the study's audit used 5, its final run 1).")
@click.option("--prompt-version", default=None,
              help=f"Label set name; default {PROMPT_VERSION} (with +json appended under --json-mode).")
@click.option("--json-mode", is_flag=True, help='Send response_format={"type": "json_object"} (where supported).')
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Landing folder; labels go to <out>/labels/. Default: data/landing.")
@click.option("--include-landing/--no-include-landing", default=True, show_default=True,
              help="Also label stories in <out>/stories/ that are not ingested yet.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Label at most this many stories.")
@click.option("--batch", "use_batch", is_flag=True, help="Use the OpenAI Batch API (resumable by batch id).")
@click.option("--poll-seconds", type=float, default=30.0, show_default=True, help="Batch status poll interval.")
@click.option("--run", "run_name", default=None,
              help="Start (or resume) a labeling run of this name: every story labeled again, under the label set "
                   "<prompt version>@<name>. Default: the labeler's one run, resumed.")
def label(models_file: Path, labeler: str, samples: int, prompt_version: str | None, json_mode: bool,
          out_dir: Path | None, include_landing: bool, limit: int | None, use_batch: bool,
          poll_seconds: float, run_name: str | None) -> None:
    """Label every story not yet labeled under this labeler, prompt version and sample count."""
    try:
        label_stories(models_file, labeler, samples, prompt_version, json_mode, out_dir, include_landing, limit,
                      use_batch, poll_seconds, reporter=RichReporter(), run_name=run_name)
    except BadRunName as exc:
        raise click.BadParameter(str(exc), param_hint="--run") from exc
