"""A cell's predicted variance and interval half-width at given hand-labeled stories per stratum, with the marts'
cell/pool rules and the interval's boundary rule."""

from __future__ import annotations

import math

from lfh.audit.plan.composite import composite_variance
from lfh.audit.plan.model import PlanCell, PlanSettings, Stratum, linearised
from lfh.audit.plan.terms import labeled_units, machine_term, rectifier_term


def cell_variance(cell: PlanCell, labeled_stories: dict[Stratum, float], settings: PlanSettings) -> float | None:
    """Predicted variance of the corrected share with `labeled_stories` hand-labeled stories per stratum, or None
    where the marts would give no value (too few hand labels in the cell and its pool)."""
    if cell.known <= 0:
        return None
    machine, n = machine_term(cell, labeled_stories, settings)
    unlabeled = sum(part.units for part in cell.parts) - n
    own_rule = settings.cell_pool_rule != "composite" and n >= settings.cell_min_hand_labeled
    if cell.pool is None or own_rule or (unlabeled <= 1e-9 and n > 0):
        rectifier, _ = rectifier_term(cell.parts, labeled_stories, settings, cell.share, cell)
        return (machine + rectifier) / cell.known ** 2 if n >= settings.min_hand_labeled else None
    pooled_rectifier, pooled_n = rectifier_term(cell.pool.parts, labeled_stories, settings, cell.share, cell)
    if pooled_n < settings.min_hand_labeled:
        return None
    if settings.cell_pool_rule == "composite":
        return composite_variance(cell, labeled_stories, settings, machine, pooled_rectifier, n) / cell.known ** 2
    return (machine + pooled_rectifier) / cell.known ** 2


def unthresholded_variance(cell: PlanCell, labeled_stories: dict[Stratum, float], settings: PlanSettings) -> float:
    """The cell's own stratified variance with every minimum ignored (a stratum without a hand label counted as
    half a unit): what the allocation steers by while a cell has no value yet, so that labels towards the
    minimum count before it is reached."""
    total = sum(part.units for part in cell.parts)
    machine, _ = machine_term(cell, labeled_stories, settings)
    variance = machine
    for part in cell.parts:
        n = labeled_units(part, labeled_stories)
        weight = (part.units / total) ** 2
        variance += weight * max(linearised(part.residual, cell.share), 1e-6) / max(n, 0.5)
    return variance / max(cell.known, 1e-6) ** 2


def half_width(cell: PlanCell, variance: float | None, settings: PlanSettings,
               hand_units: float | None = None) -> float | None:
    """Half the width of the interval the marts would show: r -/+ z sd, clamped to [0, 1]; with `hand_units` (m,
    the rectifier's hand-labeled units in the subset) its expectation under the boundary rule of
    macros/stats/ppi_interval.sql: when none of the m shows the category (probability (1 - r)^m) the interval
    reaches at least [0, z^2 / (m + z^2)], when all do (r^m) at least [m / (m + z^2), 1]."""
    if variance is None:
        return None
    spread = settings.z * math.sqrt(max(variance, 0.0))
    share = min(1.0, max(0.0, cell.share))
    normal = (min(1.0, share + spread) - max(0.0, share - spread)) / 2
    if not hand_units or hand_units <= 0:
        return normal
    z2 = settings.z * settings.z
    none, every = (1.0 - share) ** hand_units, share ** hand_units
    at_zero = max(min(1.0, share + spread), z2 / (hand_units + z2)) / 2
    at_one = (1.0 - min(max(0.0, share - spread), hand_units / (hand_units + z2))) / 2
    return (1.0 - none - every) * normal + none * at_zero + every * at_one


def interval_hand_units(cell: PlanCell, labeled_stories: dict[Stratum, float], settings: PlanSettings) -> float:
    """m: the expected hand-labeled units in the share's subset behind the cell's interval (the rectifier source's:
    the cell's own, or its pool's for a pooled or composite cell), n times the denominator's mean."""
    n = sum(labeled_units(part, labeled_stories) for part in cell.parts)
    unlabeled = sum(part.units for part in cell.parts) - n
    own = (cell.pool is None or (unlabeled <= 1e-9 and n > 0)
           or (settings.cell_pool_rule != "composite" and n >= settings.cell_min_hand_labeled))
    if own:
        return n * cell.known
    return sum(labeled_units(part, labeled_stories) for part in cell.pool.parts) * cell.pool.known


def predicted_half_width(cell: PlanCell, labeled_stories: dict[Stratum, float], settings: PlanSettings) -> float | None:
    """The half-width the marts would show with `labeled_stories` hand-labeled stories per stratum (None: no value)."""
    return half_width(cell, cell_variance(cell, labeled_stories, settings), settings,
                      interval_hand_units(cell, labeled_stories, settings))
