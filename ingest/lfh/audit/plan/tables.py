"""The plan's output tables: per stratum, per measure family and level, per cell; and the proportional curve the
report draws."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from lfh.audit.allocation import allocate
from lfh.audit.plan.gain import PredictedGain, predicted_gain, proportional_extra
from lfh.audit.plan.model import DEFAULT_FAMILIES, FAMILIES, Plan, Stratum
from lfh.audit.plan.optimiser import plan_allocation
from lfh.audit.plan.selection import Selection
from lfh.audit.plan.variance import cell_variance, predicted_half_width
from lfh.categories import LEVELS


def family_summary(plan: Plan, stories: dict[Stratum, float]) -> pl.DataFrame:
    """Per family and level (lfh.categories.LEVELS): cells, cells with a value, median and largest half-width."""
    rows = []
    for family in FAMILIES:
        for level in LEVELS:
            cells = [cell for cell in plan.cells if cell.family == family and cell.level == level]
            if not cells:
                continue
            widths = sorted(w for cell in cells
                            if (w := predicted_half_width(cell, stories, plan.settings))
                            is not None)
            rows.append((family, level, len(cells), len(widths),
                         widths[len(widths) // 2] if widths else None, widths[-1] if widths else None))
    return pl.DataFrame(rows, schema={"family": pl.String, "level": pl.String, "cells": pl.Int64,
                                      "with_value": pl.Int64, "median_half_width": pl.Float64,
                                      "max_half_width": pl.Float64}, orient="row")


def cell_predictions(plan: Plan, stories: dict[Stratum, float]) -> pl.DataFrame:
    rows = []
    for cell in plan.cells:
        variance = cell_variance(cell, stories, plan.settings)
        rows.append((cell.family, cell.model, "/".join(cell.key), cell.share, variance,
                     predicted_half_width(cell, stories, plan.settings)))
    return pl.DataFrame(rows, schema={"family": pl.String, "model": pl.String, "cell": pl.String,
                                      "planned_share": pl.Float64, "predicted_variance": pl.Float64,
                                      "predicted_half_width": pl.Float64}, orient="row")


def strata_table(plan: Plan, extra: dict[Stratum, int], proportional: dict[Stratum, int] | None = None) -> pl.DataFrame:
    """Per stratum: stories, hand-labeled now, to add, planned; and what a proportional allocation of as many
    stories would add (`proportional`, when given)."""
    proportional = proportional if proportional is not None else {}
    rows = [(*stratum, info.stories, info.hand_labeled, extra.get(stratum, 0),
             info.hand_labeled + extra.get(stratum, 0), proportional.get(stratum, 0))
            for stratum, info in sorted(plan.strata.items())]
    keys = ["model", "domain", "prompt_condition", "machine_class"][:len(rows[0]) - 5 if rows else 3]
    return pl.DataFrame(rows, schema=[*keys, "stories", "hand_labeled", "add", "planned_hand_labeled",
                                      "proportional_add"], orient="row")


@dataclass
class PlanResult:
    strata: pl.DataFrame      # per stratum: stories, hand-labeled now, to add, planned
    families: pl.DataFrame    # per family and level: now and planned
    cells: pl.DataFrame       # per cell: predicted half-width now and planned
    added: int
    pilot_units: int
    gain: PredictedGain       # the allocation's predicted gain over a proportional one, and its prediction error


def make_plan(plan: Plan, families: Sequence[str] = DEFAULT_FAMILIES, budget: int | None = None,
              target_half_width: float | None = None, min_per_stratum: int = 3,
              selection: Selection | None = None) -> PlanResult:
    """The plan's tables: the allocation (for `selection`, default every cell of `families`) and what it buys,
    next to what the hand labels give now."""
    selection = selection or Selection(tuple(families))
    extra = plan_allocation(plan, families, budget, target_half_width, min_per_stratum, selection=selection)
    gain = predicted_gain(plan, extra, selection, min_per_stratum)
    now = plan.labeled_now()
    planned = {stratum: now[stratum] + extra.get(stratum, 0) for stratum in now}
    families_now = family_summary(plan, now)
    families_planned = family_summary(plan, planned)
    summary = families_now.join(families_planned.select(
        "family", "level", pl.col("with_value").alias("planned_with_value"),
        pl.col("median_half_width").alias("planned_median_half_width"),
        pl.col("max_half_width").alias("planned_max_half_width")), on=["family", "level"], how="left",
        maintain_order="left")
    cells_now = cell_predictions(plan, now)
    cells_planned = cell_predictions(plan, planned)
    cells = cells_now.rename({"predicted_variance": "variance_now", "predicted_half_width": "half_width_now"}).join(
        cells_planned.select("family", "model", "cell", pl.col("predicted_half_width").alias("planned_half_width")),
        on=["family", "model", "cell"], how="left",
        maintain_order="left")
    proportional = proportional_extra(plan, sum(extra.values()), min_per_stratum)
    return PlanResult(strata_table(plan, extra, proportional), summary, cells, sum(extra.values()),
                      plan.pilot_units, gain)


def proportional_curve(plan: Plan, additions: Sequence[int], min_per_stratum: int = 3) -> pl.DataFrame:
    """What more hand labels buy, drawn proportionally (the cheap curve the report draws; `lfh audit-plan` finds
    the optimal allocation for one budget): per number of added stories, family and level, the cells with a value
    and the median predicted half-width. A point below the floors' total is left out; points beyond the
    candidates become one point with every candidate labeled."""

    room = {stratum: info.candidates for stratum, info in plan.strata.items()}
    floors = sum(min(min_per_stratum, value) for value in room.values())
    now = plan.labeled_now()
    frames = []
    for added in sorted({min(added, sum(room.values())) for added in additions}):
        if added and added < floors:
            continue
        extra = allocate(room, added, min_per_stratum) if added else {}
        stories = {stratum: now[stratum] + extra.get(stratum, 0) for stratum in now}
        frames.append(family_summary(plan, stories).with_columns(pl.lit(added).alias("added")))
    return pl.concat(frames) if frames else pl.DataFrame()
