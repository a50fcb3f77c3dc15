"""`lfh audit-sample`: the click layer over lfh.audit.sample."""

from __future__ import annotations

from pathlib import Path

import click

from lfh.audit.plan import FAMILIES
from lfh.audit.sample import ALLOCATIONS, AuditSampleError, draw_audit_sample, write_audit_workbook
from lfh.paths import database_path


@click.command("audit-sample")
@click.option("--n", "n", type=int, required=True, help="How many stories to draw.")
@click.option("--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The workbook to write (.xlsx).")
@click.option("--seed", type=int, default=0, show_default=True, help="The same seed and warehouse give the same draw.")
@click.option("--min-per-stratum", type=int, default=3, show_default=True,
              help="At least this many stories per model x domain x condition (all of a smaller stratum).")
@click.option("--allocate", "allocation", type=click.Choice(ALLOCATIONS), default="proportional", show_default=True,
              help="proportional to stratum size, or optimal: where the hand labels so far say more labels narrow "
                   "the corrected intervals most (proportional while there are none; see `lfh audit-plan`).")
@click.option("--measure", "measures", type=click.Choice(FAMILIES), multiple=True,
              help="With --allocate optimal: the measure families to serve (repeat; default gender and couple).")
def audit_sample(n: int, out_path: Path, seed: int, min_per_stratum: int, allocation: str,
                 measures: tuple[str, ...]) -> None:
    """Draw a stratified random sample of labeled stories without hand labels, as a workbook to hand-label.

    Fill its Manual columns in a spreadsheet, then `lfh ingest FILE.xlsx` and `lfh build`: the hand labels feed
    fct_labeler_agreement, fct_labeler_confusion and fct_labeler_class_metrics.
    """
    if out_path.suffix.lower() != ".xlsx":
        raise click.BadParameter(f"{out_path}: the workbook must end in .xlsx", param_hint="--out")
    try:
        sample = draw_audit_sample(database_path().resolve(), n, seed=seed, min_per_stratum=min_per_stratum,
                                   allocation=allocation, families=measures or None)
    except AuditSampleError as exc:
        raise click.ClickException(str(exc)) from exc
    write_audit_workbook(sample, out_path)
    click.echo(f"{out_path}: {sample.stories.height} stories from {sample.strata.height} strata (model x domain x "
               f"condition, {sample.allocation} allocation), seed {seed}; {sample.skipped_hand_labeled} already "
               "hand-labeled stories skipped")
