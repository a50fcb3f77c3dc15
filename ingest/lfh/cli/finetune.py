"""`lfh finetune-data WORKBOOK`: options and messages over lfh.llm.finetune.write_finetune_data."""

from __future__ import annotations

from pathlib import Path

import click

from lfh.cli.command import command
from lfh.llm.finetune import write_finetune_data


@command("finetune-data")
@click.argument("workbook", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Chat fine-tuning JSON Lines to write.")
@click.option("--use-workbook-request", is_flag=True,
              help="Use the workbook's Label Query cell as the user turn (the study's text, with its prompt "
                   "restatement) instead of the request lfh label sends.")
def finetune_data(workbook: Path, out_path: Path, use_workbook_request: bool) -> None:
    """Write hand-labeled stories as chat fine-tuning examples for a labeling model."""
    count = write_finetune_data(workbook, out_path, use_workbook_request)
    click.echo(f"wrote {count} examples to {out_path}")
