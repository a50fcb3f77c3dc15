"""`lfh audit-plan`: the click layer over lfh.audit.plan."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click
import polars as pl

from lfh.atomic import written_aside
from lfh.audit.plan import (
    COUPLE_TYPES,
    DEFAULT_FAMILIES,
    DOMAINS,
    FAMILIES,
    GENDERS,
    LEVELS,
    AuditPlanError,
    Selection,
    make_plan,
    read_plan,
)
from lfh.cli.command import command
from lfh.paths import database_path


def selection_options(function: Callable) -> Callable:
    """--measure, --level, --category, --domain: the corrected cells an allocation serves (lfh.audit.plan.Selection)."""
    for option in reversed((
        click.option("--measure", "measures", type=click.Choice(FAMILIES), multiple=True,
                     help="Measure families whose cells the plan serves (repeat; default: gender and couple)."),
        click.option("--level", "levels", type=click.Choice(LEVELS), multiple=True,
                     help="Only the all-model cells or only the per-model ones (default: both)."),
        click.option("--category", "categories", type=click.Choice((*GENDERS, *COUPLE_TYPES)), multiple=True,
                     help="Only cells of these genders or couple types (a gender also selects the couple types "
                          "with a partner of it; repeat; default: all)."),
        click.option("--domain", "domains", type=click.Choice(DOMAINS), multiple=True,
                     help="Only cells of these domains (couples are love stories, occupations labor; repeat)."),
    )):
        function = option(function)
    return function


def make_selection(measures: tuple[str, ...], levels: tuple[str, ...], categories: tuple[str, ...],
                   domains: tuple[str, ...]) -> Selection:
    try:
        return Selection(measures or DEFAULT_FAMILIES, levels or LEVELS, categories, domains)
    except AuditPlanError as exc:
        raise click.UsageError(str(exc)) from exc


def _width(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


@command("audit-plan")
@click.option("--target-halfwidth", "target", type=float, default=None,
              help="Plan the fewest stories that bring every reachable corrected cell to this half-width (e.g. 0.05).")
@click.option("--budget", type=int, default=None, help="Plan where this many more hand-labeled stories go.")
@selection_options
@click.option("--min-per-stratum", type=click.IntRange(min=0), default=3, show_default=True,
              help="At least this many more stories per model x domain x condition (all of a smaller stratum).")
@click.option("--assumed-error-rate", type=float, default=0.10, show_default=True,
              help="The labeler's error rate assumed where no hand label says otherwise (a conservative default).")
@click.option("--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the plan as CSV: the strata to FILE, the cells beside it (plan.csv: plan_cells.csv).")
def audit_plan(target: float | None, budget: int | None, measures: tuple[str, ...], levels: tuple[str, ...],
               categories: tuple[str, ...], domains: tuple[str, ...], min_per_stratum: int,
               assumed_error_rate: float, out_path: Path | None) -> None:
    """How many more stories to hand-label per stratum, and what half-width each measure family then reaches.

    Predicts the corrected intervals (docs/CORRECTION.md) from the warehouse's machine labels and the hand labels
    already in it, for a budget (--budget 400) or a target half-width (--target-halfwidth 0.05). Then draw the
    sample with `lfh audit-sample --allocate optimal --n N`.
    """
    if (target is None) == (budget is None):
        raise click.UsageError("give one of --budget N or --target-halfwidth W")
    if not 0 <= assumed_error_rate < 1:
        raise click.BadParameter(f"{assumed_error_rate} is not a rate in [0, 1)", param_hint="--assumed-error-rate")
    selection = make_selection(measures, levels, categories, domains)
    plan = read_plan(database_path().resolve(), assumed_error_rate=assumed_error_rate)
    result = make_plan(plan, selection.families, budget=budget, target_half_width=target,
                       min_per_stratum=min_per_stratum, selection=selection)
    goal = f"budget {budget}" if budget is not None else f"target half-width {target}"
    click.echo(f"Plan for {goal}, serving {selection.label()}: {result.added} more stories "
               f"to hand-label ({result.pilot_units} hand-labeled characters now"
               f"{'' if result.pilot_units else ': the labeler is assumed wrong ' + format(assumed_error_rate, '.0%')}"
               ").")
    gain = result.gain
    verdict = ("" if not gain.added or gain.worthwhile else
               ": not beyond its prediction error, so `lfh audit-sample --allocate optimal` draws proportionally")
    click.echo(f"Against a proportional allocation of as many stories: {gain.describe()}{verdict}.")
    click.echo("")
    click.echo(f"{'model':<14}{'domain':<10}{'condition':<15}{'stories':>8}{'labeled':>9}{'add':>6}"
               f"{'proportional':>14}")
    for row in result.strata.filter((pl.col("add") > 0) | (pl.col("proportional_add") > 0)).iter_rows(named=True):
        click.echo(f"{row['model']:<14}{row['domain']:<10}{row['prompt_condition']:<15}{row['stories']:>8}"
                   f"{row['hand_labeled']:>9}{row['add']:>6}{row['proportional_add']:>14}")
    click.echo("")
    click.echo(f"{'measure':<12}{'cells':<12}{'with a value now -> planned':>29}{'median half-width':>28}"
               f"{'largest':>18}")
    for row in result.families.iter_rows(named=True):
        click.echo(f"{row['family']:<12}{row['level']:<12}"
                   f"{row['cells']:>9} {row['with_value']:>7} -> {row['planned_with_value']:<8}"
                   f"{_width(row['median_half_width']):>15} -> {_width(row['planned_median_half_width']):<8}"
                   f"{_width(row['max_half_width']):>8} -> {_width(row['planned_max_half_width'])}")
    if out_path is not None:
        out_path.parent.mkdir(parents=True, exist_ok=True)
        cells_path = out_path.with_name(f"{out_path.stem}_cells.csv")
        with written_aside(out_path) as strata_aside, written_aside(cells_path) as cells_aside:  # whole or none
            result.strata.write_csv(strata_aside)
            result.cells.write_csv(cells_aside)
        click.echo(f"\nwrote {out_path} and {cells_path}")
