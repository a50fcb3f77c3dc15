"""Where more hand-labeled stories go: a greedy allocation improved by exchanges between strata, and the least
half-width a budget could give one cell."""

from __future__ import annotations

import math
from collections.abc import Sequence

from lfh.audit.allocation import allocate
from lfh.audit.plan.model import (
    DEFAULT_FAMILIES,
    NO_VALUE_HALF_WIDTH,
    NO_VALUE_VARIANCE,
    AuditPlanError,
    Plan,
    PlanCell,
    Stratum,
)
from lfh.audit.plan.selection import Selection
from lfh.audit.plan.variance import (
    cell_variance,
    half_width,
    interval_hand_units,
    predicted_half_width,
    unthresholded_variance,
)


def stratum_floors(room: dict[Stratum, int], labeled: dict[Stratum, float], min_per_stratum: int,
                   min_labeled: int = 0) -> dict[Stratum, int]:
    """The least each stratum gets of an allocation: min_per_stratum more stories, and enough that it has min_labeled
    hand-labeled ones in all; never more than its candidates (`room`)."""
    return {stratum: min(value, max(min_per_stratum, min_labeled - int(labeled.get(stratum, 0))))
            for stratum, value in room.items()}


def selected_cells(plan: Plan, selection: Selection) -> list[PlanCell]:
    """The plan's cells `selection` names; refused when there is none (an allocation for nothing would be arbitrary)."""
    cells = [cell for cell in plan.cells if selection.matches(cell)]
    if not cells:
        raise AuditPlanError(f"the selection ({selection.label()}) names no corrected cell: {selection.why_empty()}; "
                             "widen --measure, --level, --category or --domain")
    return cells


def plan_allocation(plan: Plan, families: Sequence[str] = DEFAULT_FAMILIES, budget: int | None = None,
                    target_half_width: float | None = None, min_per_stratum: int = 3,
                    step: int | None = None, candidates: dict[Stratum, int] | None = None,
                    selection: Selection | None = None, min_labeled: int = 0) -> dict[Stratum, int]:
    """More stories to hand-label per stratum: `budget` of them spread to minimise the summed predicted half-width
    (settings.objective "half_width", the marts' interval with its boundary rule; "variance": the summed variance)
    of the selected cells (`selection`; without it, every cell of `families`), or as few as reach
    `target_half_width` in every cell that can reach it (the objective is then the summed max(half-width, target),
    or max(variance, target variance)). At least
    min(min_per_stratum, candidates) per stratum; never more than a stratum's candidates (`candidates` overrides
    the plan's count of stories without a hand label, e.g. with audit-sample's, which also skips stories that carry
    only a hand name). `min_labeled`: besides, enough stories that every stratum has at least that many hand-labeled
    ones in all (2: each stratum's own variance estimate; stratum_floors)."""
    if (budget is None) == (target_half_width is None):
        raise AuditPlanError("give either a budget (--budget N) or a target half-width (--target-halfwidth W)")
    if budget is not None and budget < 1:
        raise AuditPlanError(f"the budget must be at least 1 story, got {budget}")
    if target_half_width is not None and not 0 < target_half_width < 0.5:
        raise AuditPlanError(f"the target half-width must lie in (0, 0.5), got {target_half_width}")
    if min_per_stratum < 0:
        raise AuditPlanError(f"--min-per-stratum must be 0 or more, got {min_per_stratum}")
    settings = plan.settings
    selection = selection or Selection(tuple(families))
    selected = selected_cells(plan, selection)
    selected_names = {id(cell) for cell in selected}
    floor_variance = (target_half_width / settings.z) ** 2 if target_half_width is not None else 0.0
    labeled = plan.labeled_now()
    room_in = {stratum: (info.candidates if candidates is None else candidates.get(stratum, 0))
               for stratum, info in plan.strata.items()}
    floors = stratum_floors(room_in, labeled, min_per_stratum, min_labeled)
    extra = dict(floors)
    candidates_total = sum(room_in.values())
    if budget is not None and sum(extra.values()) > budget:
        raise AuditPlanError(f"a budget of {budget} is below the {sum(extra.values())} stories that at least "
                             f"{min_per_stratum} per stratum needs: raise it or lower --min-per-stratum")

    def current(stratum_extra: dict[Stratum, int]) -> dict[Stratum, float]:
        return {stratum: labeled[stratum] + stratum_extra.get(stratum, 0) for stratum in plan.strata}

    relevant: dict[int, tuple[Stratum, ...]] = {}
    cache: dict[tuple, float] = {}
    by_variance = settings.objective == "variance"

    def objective(cell: PlanCell, stories: dict[Stratum, float]) -> float:
        # a cell's variance depends only on the labels of its strata and its pool's: computed once per such state
        strata = relevant.get(id(cell))
        if strata is None:
            pool_parts = cell.pool.parts if cell.pool else ()
            strata = relevant[id(cell)] = tuple(sorted({part.stratum for part in (*cell.parts, *pool_parts)}))
        key = (id(cell), *(stories.get(stratum, 0.0) for stratum in strata))
        value = cache.get(key)
        if value is None:
            variance = cell_variance(cell, stories, settings)
            if variance is None:  # no value yet: a penalty, less as the cell's own labels approach the minimum
                penalty = min(unthresholded_variance(cell, stories, settings), NO_VALUE_VARIANCE)
                value = (NO_VALUE_VARIANCE + penalty if by_variance
                         else NO_VALUE_HALF_WIDTH + settings.z * math.sqrt(penalty))
            elif by_variance:
                value = max(variance, floor_variance)
            else:
                width = half_width(cell, variance, settings, interval_hand_units(cell, stories, settings))
                value = max(width, target_half_width or 0.0)
            cache[key] = value
        return value

    reachable = selected
    if target_half_width is not None:
        everything = {stratum: float(info.stories) for stratum, info in plan.strata.items()}
        reachable = [cell for cell in selected
                     if (v := cell_variance(cell, everything, settings)) is not None and v <= floor_variance]
    reachable_ids = {id(cell) for cell in reachable}
    target_total = budget if budget is not None else candidates_total
    step = step or max(1, target_total // 300)
    while sum(extra.values()) < min(target_total, candidates_total):
        stories = current(extra)
        if target_half_width is not None and all(
                (v := cell_variance(cell, stories, settings)) is not None and v <= floor_variance
                for cell in reachable):
            break
        room = min(target_total, candidates_total) - sum(extra.values())
        best, best_gain = None, -1.0
        for stratum in plan.strata:
            size = min(step, room, room_in[stratum] - extra[stratum])
            if size <= 0:
                continue
            affected = [cell for cell in plan.cells_by_stratum.get(stratum, ()) if id(cell) in selected_names
                        and (target_half_width is None or id(cell) in reachable_ids)]
            after = dict(stories)
            after[stratum] += size
            gain = sum(objective(cell, stories) - objective(cell, after) for cell in affected) / size
            if gain > best_gain + 1e-15:
                best, best_gain = (stratum, size), gain
        if best is None:
            break
        if best_gain <= 0 and budget is None:
            # No single story helps any more: in a small cell each label also removes an unlabeled unit from the
            # machine-label mean. What still reaches the target is labeling the cell's strata whole (then the
            # estimate is the hand labels' own, lam = 0): do that for every reachable cell still short of it.
            stories = current(extra)
            for cell in reachable:
                variance = cell_variance(cell, stories, settings)
                if variance is None or variance > floor_variance:
                    for part in cell.parts:
                        extra[part.stratum] = room_in[part.stratum]
            break
        extra[best[0]] += best[1]
    if budget is None:
        return extra
    # The marts' cell/pool rule makes a cell's variance jump where its own hand labels reach the minimum, so the
    # greedy path can stop short of the best allocation: improve it, and the proportional one, by exchanges of
    # `step` stories between two strata while the summed variance falls, and keep the better.
    proportional = dict(floors)
    if sum(proportional.values()) < budget:
        proportional = allocate(room_in, min(budget, candidates_total), min_per_stratum, floors)
    chosen = [cell for cell in plan.cells if id(cell) in selected_names]

    def total(stratum_extra: dict[Stratum, int]) -> float:
        stories = current(stratum_extra)
        return sum(objective(cell, stories) for cell in chosen)

    def delta(stratum_extra: dict[Stratum, int], moves: dict[Stratum, int]) -> float:
        before = current(stratum_extra)
        after = dict(before)
        for stratum, size in moves.items():
            after[stratum] += size
        affected = {id(cell): cell for stratum in moves for cell in plan.cells_by_stratum.get(stratum, ())
                    if id(cell) in selected_names}
        return sum(objective(cell, after) - objective(cell, before) for cell in affected.values())

    def exchanged(start: dict[Stratum, int]) -> dict[Stratum, int]:
        allocation = dict(start)
        for _ in range(10 * len(allocation) + 200):
            gains = {stratum: -delta(allocation, {stratum: size}) / size for stratum in allocation
                     if (size := min(step, room_in[stratum] - allocation[stratum])) > 0}
            losses = {stratum: delta(allocation, {stratum: -size}) / size for stratum in allocation
                      if (size := min(step, allocation[stratum] - floors[stratum])) > 0}
            if not gains or not losses:
                break
            up = max(gains, key=gains.get)
            down = min((stratum for stratum in losses if stratum != up), key=losses.get, default=None)
            if down is None:
                break
            size = min(step, room_in[up] - allocation[up], allocation[down] - floors[down])
            if delta(allocation, {up: size, down: -size}) >= -1e-12:
                break
            allocation[up] += size
            allocation[down] -= size
        return allocation

    return min((exchanged(extra), exchanged(proportional)), key=total)


def best_cell_half_width(plan: Plan, cell: PlanCell, budget: int, candidates: dict[Stratum, int] | None = None,
                         step: int | None = None) -> float | None:
    """The smallest half-width the plan sees for `cell` (predicted_half_width) when `budget` more stories go where
    they serve it alone (its strata and its pool's, greedily, the lowest point on the way): no allocation of the
    budget gives this cell less, so over a selection the mean of these is the ceiling of what any allocation can
    gain (the machine-label term and the cells' sizes set it). None where the cell cannot get a value."""
    settings = plan.settings
    room = {stratum: (info.candidates if candidates is None else candidates.get(stratum, 0))
            for stratum, info in plan.strata.items()}
    relevant = sorted({part.stratum for part in (*cell.parts, *(cell.pool.parts if cell.pool else ()))})
    stories = plan.labeled_now()
    step = step or max(1, budget // 100)
    best = predicted_half_width(cell, stories, settings)
    used = 0
    while used < budget:
        choice, choice_value = None, None
        for stratum in relevant:
            added = stories[stratum] - plan.strata[stratum].hand_labeled
            size = min(step, budget - used, room.get(stratum, 0) - added)
            if size <= 0:
                continue
            after = {**stories, stratum: stories[stratum] + size}
            variance = cell_variance(cell, after, settings)
            value = variance if variance is not None else NO_VALUE_VARIANCE + unthresholded_variance(
                cell, after, settings)
            if choice_value is None or value < choice_value:
                choice, choice_value = (stratum, size), value
        if choice is None:
            break
        stories[choice[0]] += choice[1]
        used += choice[1]
        width = predicted_half_width(cell, stories, settings)
        if width is not None and (best is None or width < best):
            best = width
    return best
