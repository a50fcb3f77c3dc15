"""`lfh generate`: options and messages over lfh.llm.generate.generate_stories."""

from __future__ import annotations

from pathlib import Path

import click

from lfh.cli.command import command
from lfh.cli.llm_progress import RichReporter
from lfh.llm.generate import BadRunName, UnknownPromptError, generate_stories


@command()
@click.option("--models", "models_file", type=click.Path(path_type=Path, dir_okay=False), required=True,
              help="Models file (TOML), see configs/models.example.toml.")
@click.option("--model", "model_names", multiple=True, help="Model name(s) from the file; default: all.")
@click.option("--stories-per-prompt", "-n", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--domain", "domains", multiple=True, type=click.Choice(["learning", "labor", "love"]),
              help="Only these domains (repeatable).")
@click.option("--prompt-id", "prompt_ids", multiple=True, help="Only these catalog prompts, e.g. P001 (repeatable).")
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Landing folder; stories go to <out>/stories/. Default: data/landing.")
@click.option("--batch", "use_batch", is_flag=True, help="Use the OpenAI Batch API (resumable by batch id).")
@click.option("--poll-seconds", type=float, default=30.0, show_default=True, help="Batch status poll interval.")
@click.option("--run", "run_name", default=None,
              help="Start (or resume) a run of this name: a new wave of the model, in a file of its own, whose "
                   "stories are its own even where a text repeats. Default: the model's one run, resumed.")
def generate(models_file: Path, model_names: tuple[str, ...], stories_per_prompt: int, domains: tuple[str, ...],
             prompt_ids: tuple[str, ...], out_dir: Path | None, use_batch: bool, poll_seconds: float,
             run_name: str | None) -> None:
    """Collect stories: each catalog prompt, exactly as written, N times per model."""
    try:
        generate_stories(models_file, model_names, stories_per_prompt, domains, prompt_ids, out_dir, use_batch,
                         poll_seconds, reporter=RichReporter(), run_name=run_name)
    except UnknownPromptError as exc:
        raise click.BadParameter(str(exc), param_hint="--prompt-id") from exc
    except BadRunName as exc:
        raise click.BadParameter(str(exc), param_hint="--run") from exc
