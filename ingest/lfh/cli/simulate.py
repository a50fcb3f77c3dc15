"""`lfh simulate`: options and messages over lfh.simulate.run.run_simulation."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click

from lfh.cli.command import command
from lfh.simulate.config import load_config
from lfh.simulate.run import default_landing, run_simulation


@command()
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Planted-bias settings (TOML). Default: configs/simulate.default.toml.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for stories/, labels/ and .planted_truth.json. Default: data/landing/simulated.")
@click.option("--stories-per-prompt", type=click.IntRange(min=1), default=None,
              help="Stories per model and catalog prompt (overrides the config). 1,667 x 3 models ~ 500,000.")
@click.option("--samples", type=click.IntRange(min=1), default=None, help="Label responses per story.")
@click.option("--seed", type=int, default=None, help="Random seed (overrides the config).")
@click.option("--format", "file_format", type=click.Choice(["jsonl", "parquet"]), default="jsonl",
              help="File format of stories and labels.")
def simulate(config_path: Path | None, out_dir: Path | None, stories_per_prompt: int | None, samples: int | None,
             seed: int | None, file_format: str) -> None:
    """Write a SIMULATED corpus with planted biases (needs `lfh lexicon` first: names come from the lexicon)."""
    config = load_config(config_path)
    overrides = {key: value for key, value in (("stories_per_prompt", stories_per_prompt),
                                               ("samples_per_story", samples), ("seed", seed)) if value is not None}
    config = replace(config, **overrides)
    result = run_simulation(config, (out_dir or default_landing()).resolve(), file_format=file_format)
    click.echo(f"simulated {result.stories:,} stories and {result.responses:,} label responses "
               f"in {result.seconds:.1f}s (SIMULATED data, seed {config.seed})")
    click.echo(f"  stories: {result.stories_path}\n  labels:  {result.labels_path}\n  truth:   {result.truth_path}")
