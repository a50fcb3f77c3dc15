"""What an allocation is predicted to gain over the proportional one, and the error of that prediction.

The gain is 1 - W_a / W_p, W the mean predicted half-width of the selected cells (those with a value under both
allocations) under the allocation (a) and under the proportional allocation of as many stories (p). The widths the
marts will show are estimates: a cell's variance comes from its m hand-labeled units (interval_hand_units), so its
half-width has a relative standard error of about 1 / sqrt(2 (m - 1)) (a variance from m units, chi-square with
m - 1 degrees of freedom; the square root halves the relative error). Over the selection the cells share hand
labels, so the plan takes their errors as moving together (the mean of the cells' errors, not its reduction by
sqrt(cells)): W has a relative error cv = mean_c(w_c / sqrt(2 (m_c - 1))) / W, and the gain, from two independent
draws, an error of sqrt(cv_a^2 + cv_p^2) (1 - gain ~ W_a / W_p). A predicted gain within that error is one the
realised intervals cannot be expected to show: `lfh audit-sample --allocate optimal` then draws proportionally
(docs/CORRECTION.md, "lfh audit-plan"), unless the allocation gives more of the selected cells a corrected value
at all (a gain the widths of the cells valued under both do not show).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from lfh.audit.allocation import allocate
from lfh.audit.plan.model import Plan, PlanCell, Stratum
from lfh.audit.plan.selection import Selection
from lfh.audit.plan.variance import interval_hand_units, predicted_half_width


@dataclass(frozen=True)
class PredictedGain:
    optimal: float | None       # mean predicted half-width of the selected cells under the allocation
    proportional: float | None  # ... under the proportional allocation of as many stories
    gain: float | None          # 1 - optimal / proportional
    error: float | None         # the gain's prediction error (the module's docstring)
    cells: int                  # the selected cells with a value under both
    added: int = 0              # the stories allocated
    valued: tuple[int, int] = (0, 0)  # the selected cells with a value under the allocation, under proportional

    @property
    def worthwhile(self) -> bool:
        """Whether the allocation gives more selected cells a value, or its predicted gain exceeds its error."""
        if self.valued[0] != self.valued[1]:
            return self.valued[0] > self.valued[1]
        return self.gain is not None and self.error is not None and self.gain > self.error

    def describe(self) -> str:
        if not self.added:
            return "no story to allocate (no labeled story lacks a hand label)"
        values = ("" if self.valued[0] == self.valued[1] else
                  f"corrected values in {self.valued[0]} selected cells against {self.valued[1]} proportional; ")
        if self.gain is None or self.error is None:
            return values + "no selected cell has a predicted half-width under both allocations"
        return (f"{values}predicted mean half-width {self.optimal:.3f} against {self.proportional:.3f} proportional, "
                f"{self.gain:+.1%} narrower (prediction error {self.error:.1%})")


def proportional_extra(plan: Plan, added: int, min_per_stratum: int,
                       candidates: dict[Stratum, int] | None = None) -> dict[Stratum, int]:
    """The proportional allocation of `added` more stories over the plan's strata (as `lfh audit-sample` draws it)."""
    room = {stratum: (info.candidates if candidates is None else candidates.get(stratum, 0))
            for stratum, info in plan.strata.items()}
    return allocate(room, added, min_per_stratum) if added else {}


def _widths(plan: Plan, cells: Sequence[PlanCell], extra: dict[Stratum, int]) -> list[tuple[float, float] | None]:
    """Per cell: (predicted half-width, its relative error) with `extra` more stories, or None without a value."""
    now = plan.labeled_now()
    stories = {stratum: now[stratum] + extra.get(stratum, 0) for stratum in now}
    rows: list[tuple[float, float] | None] = []
    for cell in cells:
        width = predicted_half_width(cell, stories, plan.settings)
        units = interval_hand_units(cell, stories, plan.settings)
        rows.append(None if width is None else (width, 1 / math.sqrt(2 * max(units - 1, 1.0))))
    return rows


def predicted_gain(plan: Plan, extra: dict[Stratum, int], selection: Selection, min_per_stratum: int,
                   candidates: dict[Stratum, int] | None = None) -> PredictedGain:
    """The predicted gain of the allocation `extra` (more stories per stratum) over the proportional one of as many
    stories, for the cells of `selection`, with its prediction error (the module's docstring)."""
    added = sum(extra.values())
    if not added:
        return PredictedGain(None, None, None, None, 0, 0)
    proportional = proportional_extra(plan, added, min_per_stratum, candidates)
    cells = [cell for cell in plan.cells if selection.matches(cell)]
    chosen, even = _widths(plan, cells, extra), _widths(plan, cells, proportional)
    both = [(a, p) for a, p in zip(chosen, even, strict=True) if a is not None and p is not None]
    valued = (sum(a is not None for a in chosen), sum(p is not None for p in even))
    if not both:
        return PredictedGain(None, None, None, None, 0, added, valued)
    optimal = sum(a[0] for a, _ in both) / len(both)
    even_width = sum(p[0] for _, p in both) / len(both)
    cv_optimal = sum(a[0] * a[1] for a, _ in both) / len(both) / optimal
    cv_even = sum(p[0] * p[1] for _, p in both) / len(both) / even_width
    return PredictedGain(optimal, even_width, 1 - optimal / even_width, math.hypot(cv_optimal, cv_even), len(both),
                         added, valued)
