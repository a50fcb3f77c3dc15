"""`lfh audit-sample`: the click layer over lfh.audit.sample."""

from __future__ import annotations

from pathlib import Path

import click

from lfh.audit.sample import ALLOCATIONS, AuditSampleError, check_workbook_path, draw_audit_sample, write_audit_workbook
from lfh.cli.audit_plan import make_selection, selection_options
from lfh.cli.command import command
from lfh.paths import database_path


@command("audit-sample")
@click.option("--n", "n", type=int, required=True, help="How many stories to draw.")
@click.option("--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The workbook to write (.xlsx), in an existing folder; never an existing file unless --force.")
@click.option("--force", is_flag=True, help="Replace an existing --out workbook (its hand labels are lost).")
@click.option("--seed", type=int, default=0, show_default=True, help="The same seed and warehouse give the same draw.")
@click.option("--min-per-stratum", type=click.IntRange(min=0), default=3, show_default=True,
              help="At least this many stories per model x domain x condition (all of a smaller stratum).")
@click.option("--allocate", "allocation", type=click.Choice(ALLOCATIONS), default="proportional", show_default=True,
              help="proportional to stratum size, or optimal: where the hand labels so far say more labels narrow "
                   "the corrected intervals most (proportional while there are none; see `lfh audit-plan`).")
@selection_options
@click.option("--wait", "wait", type=click.FloatRange(min=0), default=None, metavar="SECONDS",
              help="Wait this long for a running build or ingest to finish (default: LFH_LOCK_WAIT or 600).")
def audit_sample(n: int, out_path: Path, force: bool, seed: int, min_per_stratum: int, allocation: str,
                 measures: tuple[str, ...], levels: tuple[str, ...], categories: tuple[str, ...],
                 domains: tuple[str, ...], wait: float | None) -> None:
    """Draw a stratified random sample of labeled stories without hand labels, as a workbook to hand-label.

    Fill its Manual columns in a spreadsheet, then `lfh ingest FILE.xlsx` and `lfh build`: the hand labels feed
    fct_labeler_agreement, fct_labeler_confusion and fct_labeler_class_metrics.
    """
    try:
        check_workbook_path(out_path, force)  # before the draw: refuse at once, not after reading the warehouse
        sample = draw_audit_sample(database_path().resolve(), n, seed=seed, min_per_stratum=min_per_stratum,
                                   allocation=allocation, wait=wait,
                                   selection=make_selection(measures, levels, categories, domains))
        write_audit_workbook(sample, out_path, force=force)
    except AuditSampleError as exc:
        raise click.ClickException(str(exc)) from exc
    if sample.note:
        click.echo(f"--allocate optimal: {sample.note}")
    click.echo(f"{out_path}: {sample.stories.height} stories from {sample.strata.height} strata (model x domain x "
               f"condition, {sample.allocation} allocation), seed {seed}; {sample.skipped_hand_labeled} already "
               "hand-labeled stories skipped")
