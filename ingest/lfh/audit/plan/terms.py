"""The two terms of a cell's predicted variance (the machine labels' and the rectifier's), with the marts' divisor
rules, per stratum of the cell."""

from __future__ import annotations

from collections.abc import Sequence

from lfh.audit.plan.model import Moments, PlanCell, PlanSettings, Stratum, StratumPart, linearised


def labeled_units(part: StratumPart, labeled_stories: dict[Stratum, float]) -> float:
    return min(float(part.units), part.per_story * labeled_stories.get(part.stratum, 0.0))


def _is_stratified(parts: Sequence[StratumPart]) -> bool:
    """Whether the marts use the stratified sums (sample moments) for these parts: over several strata, and always
    under machine-label strata (the cell's strata keys are then never empty)."""
    return len(parts) > 1 or (len(parts) == 1 and len(parts[0].stratum) > 3)


def _sample_factor(count: float, stratified: bool) -> float:
    """The marts' divisor correction: over several strata they use sample (co)variances (ppi_stratified_sums:
    count / (count - 1)), in one stratum population ones. Below 3 units the plan counts 2 (conservative; the marts
    give a one-unit stratum no variance)."""
    if not stratified:
        return 1.0
    return count / (count - 1) if count > 2 else 2.0


def _residual_factor(count: float, stratified: bool) -> float:
    """The marts' residual (co)variance at `count` hand-labeled units of a stratum, per unit of the stratum's variance
    sigma^2, which the plan keeps (the pilot's moments made unbiased, unbiased): over several strata the marts use
    sample moments (expectation sigma^2), in one stratum population ones ((count - 1) / count sigma^2). Below 2 units
    the plan counts sigma^2 (conservative; the marts give no variance)."""
    if stratified or count < 2:
        return 1.0
    return (count - 1) / count


def unbiased(moments: Moments, count: float) -> Moments:
    """Population moments of `count` units made unbiased for the stratum's (co)variances (divisor count - 1): the
    pilot's few units per stratum (3 to 6 at 100 stories over 30 strata) understate them by (count - 1) / count,
    and the plan forecasts the marts' variance at other counts from them (_residual_factor)."""
    if count <= 1:
        return moments
    return tuple(value * count / (count - 1) for value in moments)  # type: ignore[return-value]


def machine_term(cell: PlanCell, labeled_stories: dict[Stratum, float], settings: PlanSettings,
                 share: float | None = None) -> tuple[float, float]:
    """(the f-term's variance of the linearised share, unscaled by b^2; the cell's hand-labeled units): lam^2
    sum_h w_h^2 Var_h(f) / N_h with w_h = T_h / T_c (var ppi_machine_mean unlabeled, docs/METHOD.md §9) or N_h / T_c
    (all_units: the f mean over every unit, T_h / T_c x the scale N_h / T_h; macros/stats/ppi_machine_mean.sql)."""
    share = cell.share if share is None else share
    total = sum(part.units for part in cell.parts)
    stratified = _is_stratified(cell.parts)
    term = labeled_total = 0.0
    for part in cell.parts:
        n = labeled_units(part, labeled_stories)
        labeled_total += n
        unlabeled = part.units - n
        if unlabeled > 1e-9:
            weight = (unlabeled if settings.machine_mean == "all_units" else part.units) / total
            machine = cell.linearised_part(part)[0] if share == cell.share else linearised(part.machine, share)
            term += weight * weight * machine * _sample_factor(unlabeled, stratified) / unlabeled
    return settings.lam * settings.lam * term, labeled_total


def rectifier_term(parts: Sequence[StratumPart], labeled_stories: dict[Stratum, float], settings: PlanSettings,
                   share: float, cell: PlanCell) -> tuple[float, float]:
    """(the rectifier's variance of the linearised share, unscaled; its hand-labeled units) from the strata `parts`
    (the cell's own, or its pool's) for the cell `cell`: sum_h w'_h^2 Var_h(y - lam c_h f) / n_h, w'_h = T_h / T_L.
    c_h = 1 under docs/METHOD.md §9; under all_units c_h = 1 - n_h T_L / (T_c T_h) in the strata of the cell (the cell's
    hand-labeled f is in its f mean too), 1 in a pool's other strata; a cell with no unlabeled unit is its hand
    labels' own mean (lam 0: c = 0 in every mode)."""
    stratified = _is_stratified(parts)
    cell_strata = {part.stratum for part in cell.parts}
    cell_units = sum(part.units for part in cell.parts)
    labeled = [(part, labeled_units(part, labeled_stories)) for part in parts]
    labeled_total = sum(part.units for part, n in labeled if n > 0)
    cell_labeled = sum(n for part, n in labeled if part.stratum in cell_strata)
    fully_labeled = cell_labeled >= cell_units - 1e-9
    term = 0.0
    for part, n in labeled:
        if n <= 0:
            continue
        scale = 1.0
        if part.stratum in cell_strata and fully_labeled:
            scale = 0.0
        elif part.stratum in cell_strata and settings.machine_mean == "all_units":
            scale = 1.0 - n * labeled_total / (cell_units * part.units)
        weight = part.units / labeled_total
        if share == cell.share:
            _, residual, cross, machine = cell.linearised_part(part)
            shift = settings.lam * (1.0 - scale)
            variance = residual + 2 * shift * cross + shift * shift * machine
        else:
            variance = part.labeled_variance(share, scale, settings.lam)
        term += weight * weight * variance * _residual_factor(n, stratified) / n
    return term, sum(n for _, n in labeled)
