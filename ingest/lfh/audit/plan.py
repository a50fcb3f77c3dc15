"""How many stories to hand-label, and from which strata (docs/CORRECTION.md, "Planning the hand labels").

For every corrected cell (the rows of int_gender_shares_corrected, int_couple_shares_corrected and
int_occupation_shares_corrected) the plan predicts the half-width of the corrected interval as a function of the
hand-labeled stories per stratum (model x domain x prompt condition, the strata of `lfh audit-sample`), from the
stratified PPI variance of the share's linearised outcome u = (a - r b) / b:

    Var(r) = sum_h w_h^2 [ Var_h(f_a - r f_b) / N_h + Var_h(d_a - r d_b) / n_h ] / b^2,   d = y - f,

with the same choices as the marts: a per-model cell uses its own hand labels from var ppi_cell_min_hand_labeled
(20) units on, else the pool over models; no value below var ppi_min_hand_labeled (20). Var_h(f...) comes from the
machine labels of the stratum; the residual variance Var_h(d...) from the hand labels already in the warehouse (the
pilot), shrunk towards the value the labeler's confusion matrix implies (the matrix of the family's hand labels,
itself smoothed towards a conservative default error rate; that default alone when there is no hand label).

`plan_allocation` spreads a budget (or reaches a target half-width) greedily, one step at a time to the stratum
that most lowers the summed predicted half-width of the selected cells (what the validation judges: their mean
width; PlanSettings.objective "variance" minimises the summed variance instead, which for one cell over strata is
Neyman's allocation in whole stories, n_h proportional to w_h S_h), with the marts' cell/pool rules included.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import polars as pl

from lfh.audit.allocation import allocate
from lfh.db import reading
from lfh.errors import LfhError

FAMILIES = ("gender", "couple", "occupation")
DEFAULT_FAMILIES = ("gender", "couple")
ALL_MODELS = "All"
GENDERS = ("female", "male", "nonbinary")
OCCUPATION_GENDERS = ("female", "male")
COUPLE_TYPES = tuple(f"{first}_{second}" for index, first in enumerate(GENDERS) for second in GENDERS[index:])
Stratum = tuple[str, ...]  # model, domain, prompt_condition[, machine_class]
# The sampling strata (`strata` of read_units): model x domain x prompt condition (audit-sample's, the marts'), or the
# same split by what the machine labels say about the story (machine_label_class; docs/CORRECTION.md, "Strata on the
# machine labels"): known for every story before anyone hand-labels it, so a design may sample the classes at
# different rates, provided the estimator weights each by its size (stratified PPI).
STRATA = ("model_domain_condition", "machine_label_class")
# A story's machine-label class: 'gendered' when the labeler gives every character of the story female or male,
# 'uncertain' otherwise (a character it calls non-binary, unspecified or unsure, or none). On the dev audit (gender
# rule study) 18 of 817 characters of gendered stories are mislabeled, 326 of 924 of the others: the residual y - f
# lives in the uncertain class, which is where Neyman's allocation sends the hand labels.
MACHINE_CLASSES = ("gendered", "uncertain")
STORY_CLASSES_SQL = """
    select
        story_id,
        case when min(case when inferred_gender in ('female', 'male') then 1 else 0 end) = 1
            then 'gendered' else 'uncertain' end as machine_class
    from {characters}
    group by story_id"""
NO_VALUE_VARIANCE = 0.25  # a cell without a corrected value counts as a share whose standard error is 0.5
NO_VALUE_HALF_WIDTH = 0.5  # ... and, judged by half-widths, as the whole of [0, 1]
OBJECTIVES = ("half_width", "variance")


class AuditPlanError(LfhError):
    """The warehouse cannot give a plan (not built, no labeled story), or the request cannot be met."""


MACHINE_MEANS = ("unlabeled", "all_units")


@dataclass(frozen=True)
class PlanSettings:
    """The marts' estimator (the dbt vars the warehouse was built with: `read_plan` reads them) and the plan's own
    assumptions."""

    z: float = 1.96
    cell_min_hand_labeled: int = 20     # var ppi_cell_min_hand_labeled
    min_hand_labeled: int = 20          # var ppi_min_hand_labeled
    assumed_error_rate: float = 0.10    # default labeler error when the family has no hand label
    prior_units: float = 10.0           # pseudo-units of the confusion-matrix prior in each residual moment
    lam: float = 1.0                    # var ppi_lambda
    machine_mean: str = "unlabeled"     # var ppi_machine_mean: the f mean over the unlabeled units or all units
    cell_pool_rule: str = "switch"      # var ppi_cell_pool_rule: own from cell_min_hand_labeled on, or composite
    tau2_z: float = 1.2816              # var ppi_composite_tau2_z: the composite's upper confidence value of tau^2
    # what an allocation minimises over the selected cells: the summed predicted half-width (what a reader of the
    # intervals, and the validation, judges: the mean width) or the summed variance (Neyman's objective, which
    # the cells of largest variance dominate)
    objective: str = "half_width"

    def __post_init__(self) -> None:
        if self.objective not in OBJECTIVES:
            raise AuditPlanError(
                f"unknown allocation objective {self.objective!r}: choose from {', '.join(OBJECTIVES)}")

    @classmethod
    def from_vars(cls, dbt_vars: dict, **overrides: object) -> PlanSettings:
        """The settings of a build with these dbt vars (missing ones: the defaults above)."""
        names = {"wilson_z": "z", "ppi_cell_min_hand_labeled": "cell_min_hand_labeled",
                 "ppi_min_hand_labeled": "min_hand_labeled", "ppi_lambda": "lam", "ppi_machine_mean": "machine_mean",
                 "ppi_cell_pool_rule": "cell_pool_rule", "ppi_composite_tau2_z": "tau2_z"}
        values = {field: dbt_vars[name] for name, field in names.items() if dbt_vars.get(name) is not None}
        return cls(**{**values, **overrides})


Moments = tuple[float, float, float, float]  # (aa, ab, ba, bb): Cov(x_a, z_a), Cov(x_a, z_b), Cov(x_b, z_a), ...
NO_MOMENTS: Moments = (0.0, 0.0, 0.0, 0.0)


def linearised(moments: Moments, share: float) -> float:
    """Cov(x_a - r x_b, z_a - r z_b) from the moments of (x_a, x_b) and (z_a, z_b): the share's linearised outcome."""
    aa, ab, ba, bb = moments
    return aa - share * (ab + ba) + share * share * bb


@dataclass
class StratumPart:
    """The units of one cell inside one stratum; d = y - lam f. `machine`: population moments of the unlabeled units
    (as the marts compute them; thousands of units). The hand-labeled units' moments (residual, residual_machine,
    labeled_machine) are the stratum's (co)variances, unbiased (the pilot's made so by _unbiased, then shrunk):
    _residual_factor turns them into what the marts compute at a given count."""

    stratum: Stratum
    units: int                # T_h
    per_story: float          # units per story of the stratum (a story gives 0, 1 or 2 units to a cell)
    machine: Moments          # of (f_a, f_b) over the stratum's units without a hand label (all, where none)
    residual: Moments         # of (d_a, d_b): the pilot's, shrunk to the confusion-matrix value
    pilot_units: int          # hand-labeled units now
    residual_machine: Moments = NO_MOMENTS   # Cov(d, f) over hand-labeled units, shrunk alike
    labeled_machine: Moments | None = None   # of (f_a, f_b) over hand-labeled units (None: `machine`)
    residual_mean: tuple[float, float] = (0.0, 0.0)  # mean of (d_a, d_b): the labeler's error, shrunk alike

    def labeled_variance(self, share: float, scale: float, lam: float) -> float:
        """Var(u(y) - lam scale u(f)) = Var(u(d) + lam (1 - scale) u(f)) on a hand-labeled unit, u = x_a - r x_b:
        the rectifier's variance when this stratum's f enters it scaled by `scale` (1: docs/METHOD.md §9; c_h: the f
        mean over all units, macros/stats/ppi_machine_mean.sql)."""
        shift = lam * (1.0 - scale)
        labeled = self.labeled_machine if self.labeled_machine is not None else self.machine
        return (linearised(self.residual, share) + 2 * shift * linearised(self.residual_machine, share)
                + shift * shift * linearised(labeled, share))


@dataclass
class PlanCell:
    family: str
    model: str
    key: tuple[str, ...]      # the cell keys besides model: (domain, condition, gender), (couple_type,), ...
    share: float              # r: the share the plan linearises at
    known: float              # b: the mean of the denominator indicator
    parts: list[StratumPart]
    pool: PlanCell | None = None  # the 'All' cell of the same key: the pooled rectifier of a per-model cell
    linear: dict[int, tuple[float, float, float, float]] = field(default_factory=dict, repr=False, compare=False)
    # the composite's row of each pool model at given hand labels of its strata, and its between-model spread at the
    # pilot's: the allocation asks for them again and again
    model_rows: dict[tuple, tuple | None] = field(default_factory=dict, repr=False, compare=False)

    @property
    def name(self) -> str:
        return "/".join((self.family, self.model, *self.key))

    def linearised_part(self, part: StratumPart) -> tuple[float, float, float, float]:
        """A stratum's moments linearised at this cell's share (machine, residual, residual x machine, labeled
        machine), computed once: the allocation asks for them hundreds of thousands of times."""
        values = self.linear.get(id(part))
        if values is None:
            labeled = part.labeled_machine if part.labeled_machine is not None else part.machine
            values = tuple(linearised(moments, self.share) for moments in (
                part.machine, part.residual, part.residual_machine, labeled))
            self.linear[id(part)] = values
        return values


@dataclass
class StratumStories:
    stories: int              # labeled stories
    hand_labeled: int         # of them, with a hand label
    candidates: int           # without one: what audit-sample can still draw


@dataclass
class Plan:
    cells: list[PlanCell]
    strata: dict[Stratum, StratumStories]
    settings: PlanSettings
    pilot_units: int
    cells_by_stratum: dict[Stratum, list[PlanCell]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        index: dict[Stratum, list[PlanCell]] = defaultdict(list)
        for cell in self.cells:
            touched = {part.stratum for part in cell.parts}
            if cell.pool is not None:
                touched |= {part.stratum for part in cell.pool.parts}
            for stratum in touched:
                index[stratum].append(cell)
        self.cells_by_stratum = dict(index)

    def labeled_now(self) -> dict[Stratum, float]:
        return {stratum: float(info.hand_labeled) for stratum, info in self.strata.items()}


# ---------------------------------------------------------------- the variance of one cell


def _labeled_units(part: StratumPart, labeled_stories: dict[Stratum, float]) -> float:
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
    sigma^2, which the plan keeps (the pilot's moments made unbiased, _unbiased): over several strata the marts use
    sample moments (expectation sigma^2), in one stratum population ones ((count - 1) / count sigma^2). Below 2 units
    the plan counts sigma^2 (conservative; the marts give no variance)."""
    if stratified or count < 2:
        return 1.0
    return (count - 1) / count


def _unbiased(moments: Moments, count: float) -> Moments:
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
        n = _labeled_units(part, labeled_stories)
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
    c_h = 1 under docs/METHOD.md §9; under all_units c_h = 1 - n_h T_L / (T_c T_h) in the strata of the cell (the
    cell's hand-labeled f is in its f mean too), 1 in a pool's other strata; a cell with no unlabeled unit is its hand
    labels' own mean (lam 0: c = 0 in every mode)."""
    stratified = _is_stratified(parts)
    cell_strata = {part.stratum for part in cell.parts}
    cell_units = sum(part.units for part in cell.parts)
    labeled = [(part, _labeled_units(part, labeled_stories)) for part in parts]
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


def chi_square_lower_quantile(nu: float, z: float) -> float:
    """Wilson-Hilferty, as macros/stats/ppi_composite.sql: nu (max(0.01, 1 - 2/(9 nu) - z sqrt(2/(9 nu))))^3."""
    return nu * max(0.01, 1 - 2 / (9 * nu) - z * math.sqrt(2 / (9 * nu))) ** 3


def composite_variance(cell: PlanCell, labeled_stories: dict[Stratum, float], settings: PlanSettings,
                       machine: float, pooled_rectifier: float, own_n: float) -> float:
    """The variance of var ppi_cell_pool_rule = composite for a per-model cell with unlabeled units
    (macros/stats/ppi_composite.sql; docs/CORRECTION.md, "Cell and pool"), unscaled by b^2 like its inputs:
        F + (1 - B) V_c + B^2 (V_P + tau2 sum_k w_k^2),   B = sigma2 / (sigma2 + n_c tau2)
    F = the f-term, V_P = the pooled rectifier's; sigma2 (pooled within-model variance of the linearised rectifier
    e) and tau2 (the upper confidence value of its between-model variance) from the pool's models k with hand labels,
    each model's rectifier unscaled by the f-term option (as the marts' model_sums). The between-model sum of squares
    at the planned labels: the pilot's, its heterogeneity part n0 tau2_DL moved with n0 (the noise part stays)."""
    plain = dataclasses.replace(settings, machine_mean="unlabeled")
    models: dict[str, list[StratumPart]] = defaultdict(list)
    for part in cell.pool.parts:
        models[part.stratum[0]].append(part)

    def model_row(model: str, parts: list[StratumPart], labels: dict[Stratum, float]) -> tuple | None:
        counted = [(part, _labeled_units(part, labels)) for part in parts]
        key = (model, settings.lam, *(n for _, n in counted))
        if key in cell.model_rows:
            return cell.model_rows[key]
        n_k = sum(n for _, n in counted)
        row = None
        if n_k > 0:
            labeled_total = sum(part.units for part, n in counted if n > 0)
            mean = sum(part.units / labeled_total * (part.residual_mean[0] - cell.share * part.residual_mean[1])
                       for part, n in counted if n > 0)
            variance, _ = rectifier_term(parts, labels, plain, cell.share, cell)
            row = (n_k, mean, n_k * n_k * variance)
        cell.model_rows[key] = row
        return row

    def moments(labels: dict[Stratum, float]) -> list[tuple[float, float, float]]:
        """(n_k, mean e_k, n_k^2 Var(mean e_k)) of each model with hand labels."""
        return [row for model, parts in models.items() if (row := model_row(model, parts, labels)) is not None]

    def spread(rows: list[tuple[float, float, float]]) -> tuple[float, float, float, float]:
        """(K, N, sigma2, SSB, n0) of the models' rows."""
        total = sum(n for n, _, _ in rows)
        within = sum(q for _, _, q in rows)
        sigma2 = within / (total - len(rows)) if total > len(rows) else None
        ssb = sum(n * mean * mean for n, mean, _ in rows) - sum(n * mean for n, mean, _ in rows) ** 2 / total
        n0 = total - sum(n * n for n, _, _ in rows) / total
        return total, sigma2, ssb, n0

    planned = moments(labeled_stories)
    pilot_spread = cell.model_rows.get(("pilot", settings.lam))
    if pilot_spread is None:
        pilot = moments({part.stratum: part.pilot_units / part.per_story if part.per_story else 0.0
                         for part in cell.pool.parts})
        pilot_spread = cell.model_rows[("pilot", settings.lam)] = (
            (len(pilot), *spread(pilot)) if len(pilot) >= 2 else (len(pilot),))
    count = len(planned)
    total, sigma2, ssb, n0 = spread(planned) if planned else (0.0, None, 0.0, 0.0)
    tau2 = 0.0
    if count >= 2 and n0 > 0 and sigma2 is not None:
        if pilot_spread[0] >= 2:
            pilot_count, _, pilot_sigma2, pilot_ssb, pilot_n0 = pilot_spread
            if pilot_sigma2 is not None and pilot_n0 > 0:
                tau2_dl = max(0.0, (pilot_ssb - (pilot_count - 1) * pilot_sigma2) / pilot_n0)
                if abs(n0 - pilot_n0) > 1e-9 or abs(total - pilot_spread[1]) > 1e-9:
                    # at other labels than the pilot's: the expected SSB, (K - 1) sigma2 + n0 tau2 (DerSimonian-Laird),
                    # not the pilot's realised noise part (below its expectation whenever tau2_dl is truncated at 0)
                    ssb = (count - 1) * sigma2 + n0 * tau2_dl
                else:
                    ssb = pilot_ssb
        tau2 = max(0.0, (count - 1) * (ssb / chi_square_lower_quantile(count - 1, settings.tau2_z) - sigma2) / n0)
    sum_w2 = sum(n * n for n, _, _ in planned) / total ** 2 if total > 0 else 0.0
    if own_n <= 0 or sigma2 is None or sigma2 + own_n * tau2 <= 0:
        weight = 1.0
        own_part = tau2 if (own_n <= 0 or sigma2 is None) else 0.0
    else:
        weight = sigma2 / (sigma2 + own_n * tau2)
        own_part = sigma2 * tau2 / (sigma2 + own_n * tau2)
    return machine + own_part + weight * weight * (pooled_rectifier + tau2 * sum_w2)


def _unthresholded_variance(cell: PlanCell, labeled_stories: dict[Stratum, float], settings: PlanSettings) -> float:
    """The cell's own stratified variance with every minimum ignored (a stratum without a hand label counted as
    half a unit): what the allocation steers by while a cell has no value yet, so that labels towards the
    minimum count before it is reached."""
    total = sum(part.units for part in cell.parts)
    machine, _ = machine_term(cell, labeled_stories, settings)
    variance = machine
    for part in cell.parts:
        n = _labeled_units(part, labeled_stories)
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
    n = sum(_labeled_units(part, labeled_stories) for part in cell.parts)
    unlabeled = sum(part.units for part in cell.parts) - n
    own = (cell.pool is None or (unlabeled <= 1e-9 and n > 0)
           or (settings.cell_pool_rule != "composite" and n >= settings.cell_min_hand_labeled))
    if own:
        return n * cell.known
    return sum(_labeled_units(part, labeled_stories) for part in cell.pool.parts) * cell.pool.known


def predicted_half_width(cell: PlanCell, labeled_stories: dict[Stratum, float], settings: PlanSettings) -> float | None:
    """The half-width the marts would show with `labeled_stories` hand-labeled stories per stratum (None: no value)."""
    return half_width(cell, cell_variance(cell, labeled_stories, settings), settings,
                      interval_hand_units(cell, labeled_stories, settings))


# ---------------------------------------------------------------- building the cells from units


def _default_confusion(classes: Sequence[str], error_rate: float,
                       prevalence: dict[str, float] | None = None) -> dict[str, dict[str, float]]:
    """Each machine class right 1 - error_rate of the time, wrong towards the other classes in proportion to how
    common they are (`prevalence`; evenly without it): a couple type nobody assigns draws little of the error."""
    weights = {j: (prevalence or {}).get(j, 0.0) + 1e-3 for j in classes} if prevalence else dict.fromkeys(classes, 1.0)
    matrix = {}
    for i in classes:
        others = sum(weight for j, weight in weights.items() if j != i) or 1.0
        matrix[i] = {j: (1 - error_rate) if i == j else error_rate * weights[j] / others for j in classes}
    return matrix


def confusion_matrix(units: pl.DataFrame, classes: Sequence[str], settings: PlanSettings,
                     prior: dict[str, dict[str, float]] | None = None) -> dict[str, dict[str, float]]:
    """P(hand class | machine class) from the hand-labeled units, each row smoothed towards `prior` (by default
    the matrix of error rate settings.assumed_error_rate) with settings.prior_units pseudo-units; the prior alone
    without any hand label."""
    if prior is None:
        counts_by_class = units.group_by("machine").agg(pl.col("unit_count").sum()).iter_rows()
        total = sum(count for _, count in units.group_by("machine").agg(pl.col("unit_count").sum()).iter_rows())
        prior = _default_confusion(classes, settings.assumed_error_rate,
                                   {machine: count / total for machine, count in counts_by_class} if total else None)
    default = prior
    counts: dict[str, dict[str, float]] = {i: dict.fromkeys(classes, 0.0) for i in classes}
    labeled = units.filter(pl.col("is_hand_labeled"))
    for machine, hand, count in labeled.group_by("machine", "hand").agg(pl.col("unit_count").sum()).iter_rows():
        counts[machine][hand] += count
    matrix = {}
    for i in classes:
        row_total = sum(counts[i].values())
        matrix[i] = {j: (counts[i][j] + settings.prior_units * default[i][j]) / (row_total + settings.prior_units)
                     for j in classes}
    return matrix


def _indicators(value: str, group: str, members: Sequence[str]) -> tuple[float, float]:
    return float(value == group), float(value in members)


def _moments(pairs: Iterable[tuple[float, float]]) -> tuple[float, float, float]:
    """(weight, mean, variance with divisor weight) of weighted values."""
    weight = total = square = 0.0
    for value, count in pairs:
        weight += count
        total += value * count
        square += value * value * count
    if weight <= 0:
        return 0.0, 0.0, 0.0
    mean = total / weight
    return weight, mean, max(square / weight - mean * mean, 0.0)


def _joint(rows: Iterable[tuple[tuple[float, float], tuple[float, float], float]]) -> tuple[float, Moments]:
    """(weight, population moments Cov(x_i, z_j)) of weighted pairs of 2-vectors (x, z)."""
    rows = list(rows)
    weight = sum(count for _, _, count in rows)
    if weight <= 0:
        return 0.0, NO_MOMENTS
    mean_x = [sum(x[k] * count for x, _, count in rows) / weight for k in (0, 1)]
    mean_z = [sum(z[k] * count for _, z, count in rows) / weight for k in (0, 1)]
    moments = tuple(sum(x[i] * z[j] * count for x, z, count in rows) / weight - mean_x[i] * mean_z[j]
                    for i in (0, 1) for j in (0, 1))
    return weight, moments  # type: ignore[return-value]


def _mean(rows: Iterable[tuple[tuple[float, float], float]]) -> tuple[float, float]:
    rows = list(rows)
    weight = sum(count for _, count in rows)
    if weight <= 0:
        return 0.0, 0.0
    return (sum(x[0] * count for x, count in rows) / weight, sum(x[1] * count for x, count in rows) / weight)


def _shrunk(pilot: Moments, pilot_n: float, prior: Moments, prior_units: float) -> Moments:
    if pilot_n + prior_units <= 0:
        return prior
    return tuple((pilot_n * p + prior_units * q) / (pilot_n + prior_units)
                 for p, q in zip(pilot, prior, strict=True))  # type: ignore[return-value]


def _cell(family: str, model: str, key: tuple[str, ...], units: pl.DataFrame, group: str, members: Sequence[str],
          matrix: dict[str, dict[str, float]], stories: dict[Stratum, StratumStories],
          settings: PlanSettings, at: tuple[float, float] | None = None) -> PlanCell:
    """One cell from its units (columns stratum, machine, hand, is_hand_labeled, unit_count). The plan linearises
    the share where the confusion matrix expects it (`at` = (share, denominator mean) overrides it)."""
    machine_counts: dict[str, float] = defaultdict(float)
    for machine, count in units.group_by("machine").agg(pl.col("unit_count").sum()).iter_rows():
        machine_counts[machine] += count
    total = sum(machine_counts.values())
    # the shares the confusion matrix expects the hand labels to give: where the plan linearises
    expected_a = sum(count * matrix[i][group] for i, count in machine_counts.items())
    expected_b = sum(count * sum(matrix[i][j] for j in members) for i, count in machine_counts.items())
    known = expected_b / total if total else 0.0
    share = expected_a / expected_b if expected_b > 0 else 0.0
    if at is not None:
        share, known = at
    lam = settings.lam

    def indicators(value: str) -> tuple[float, float]:
        return _indicators(value, group, members)

    def residual(hand: str, machine: str) -> tuple[float, float]:
        (ya, yb), (fa, fb) = indicators(hand), indicators(machine)
        return ya - lam * fa, yb - lam * fb

    parts = []
    for (stratum,), rows in units.group_by("stratum", maintain_order=True):
        stratum = tuple(stratum)
        everything: dict[str, float] = defaultdict(float)
        unlabeled: dict[str, float] = defaultdict(float)
        pilot: list[tuple[str, str, float]] = []
        for machine, hand, labeled, count in rows.select(
                "machine", "hand", "is_hand_labeled", "unit_count").iter_rows():
            everything[machine] += count
            if labeled:
                pilot.append((machine, hand, count))
            else:
                unlabeled[machine] += count
        units_here = int(sum(everything.values()))
        _, machine = _joint((indicators(i), indicators(i), count) for i, count in (unlabeled or everything).items())
        _, machine_all = _joint((indicators(i), indicators(i), count) for i, count in everything.items())
        # the moments the confusion matrix implies for this stratum's machine labels
        implied = [(residual(j, i), indicators(i), count * p) for i, count in everything.items()
                   for j, p in matrix[i].items()]
        _, implied_residual = _joint((d, d, count) for d, _, count in implied)
        _, implied_cross = _joint(implied)
        pilot_n, pilot_residual = _joint((residual(j, i), residual(j, i), count) for i, j, count in pilot)
        _, pilot_cross = _joint((residual(j, i), indicators(i), count) for i, j, count in pilot)
        _, pilot_machine = _joint((indicators(i), indicators(i), count) for i, _, count in pilot)
        pilot_residual, pilot_cross, pilot_machine = (
            _unbiased(moments, pilot_n) for moments in (pilot_residual, pilot_cross, pilot_machine))
        k = settings.prior_units
        implied_mean = _mean((d, count) for d, _, count in implied)
        pilot_mean = _mean((residual(j, i), count) for i, j, count in pilot)
        shrunk_mean = tuple((pilot_n * p + k * q) / (pilot_n + k) if pilot_n + k > 0 else q
                            for p, q in zip(pilot_mean, implied_mean, strict=True))
        story_count = stories[stratum].stories if stratum in stories else 0
        parts.append(StratumPart(
            stratum, units_here, units_here / story_count if story_count else 0.0, machine,
            _shrunk(pilot_residual, pilot_n, implied_residual, k), int(pilot_n),
            _shrunk(pilot_cross, pilot_n, implied_cross, k), _shrunk(pilot_machine, pilot_n, machine_all, k),
            shrunk_mean))
    return PlanCell(family, model, key, share, known, parts)


def build_cells(units: dict[str, pl.DataFrame], stories: dict[Stratum, StratumStories],
                settings: PlanSettings, linearise_at: dict[tuple, tuple[float, float]] | None = None) -> list[PlanCell]:
    """The corrected cells of each family from its units: `units[family]` has the columns model, stratum (a list
    of model, domain, prompt_condition), key (a list of strings), machine, hand, is_hand_labeled, unit_count.
    `linearise_at` ((family, model, *key) -> (share, denominator mean)) replaces where a cell's share is
    linearised, e.g. by the marts' own estimates (then the plan at today's hand labels is the marts' variance)."""
    cells: list[PlanCell] = []
    at = linearise_at or {}
    for family, frame in units.items():
        if frame.is_empty():
            continue
        groups, members = (OCCUPATION_GENDERS, OCCUPATION_GENDERS) if family == "occupation" else (
            (COUPLE_TYPES, COUPLE_TYPES) if family == "couple" else (GENDERS, GENDERS))
        classes = sorted({*frame["machine"].to_list(), *frame["hand"].drop_nulls().to_list(), *members})
        family_matrix = confusion_matrix(frame, classes, settings)
        for (key,), keyed in frame.group_by("key", maintain_order=True):
            key = () if family == "couple" else tuple(key)  # a couple cell is the model's romantic stories
            # the labeler's errors differ by domain and condition (on the study's audit 1% of Learning baseline
            # characters against 25% of Labor baseline ones): each key's own matrix, over every model as the
            # marts' pools, smoothed towards the family's
            matrix = confusion_matrix(keyed, classes, settings, prior=family_matrix)
            for group in (groups[:1] if family == "occupation" else groups):
                pool = _cell(family, ALL_MODELS, (*key, group), keyed, group, members, matrix, stories, settings,
                             at.get((family, ALL_MODELS, *key, group)))
                cells.append(pool)
                for (model,), rows in keyed.group_by("model", maintain_order=True):
                    cell = _cell(family, model, (*key, group), rows, group, members, matrix, stories, settings,
                                 at.get((family, model, *key, group)))
                    cell.pool = pool
                    cells.append(cell)
    return cells


# ---------------------------------------------------------------- reading the warehouse


def read_units(connection: duckdb.DuckDBPyConnection,
               strata: str = "model_domain_condition") -> tuple[dict[str, pl.DataFrame], pl.DataFrame]:
    """One row per unit of each family (story_id, model, stratum, key, machine, hand, is_hand_labeled) and the
    labeled stories (story_id, model, domain, prompt_condition, hand: whether the story has a hand label). With
    `strata` machine_label_class the stories also carry machine_class and the strata end with it."""
    if strata not in STRATA:
        raise AuditPlanError(f"unknown strata {strata!r}: choose from {', '.join(STRATA)}")
    present = {row[0] for row in connection.execute(
        "select table_schema || '.' || table_name from information_schema.tables").fetchall()}
    for needed in ("marts.dim_stories", "intermediate.int_characters_hand_paired"):
        if needed not in present:
            raise AuditPlanError(f"the warehouse has no {needed}: run `lfh ingest` and `lfh build` first")
    stories = connection.sql("""
        select story_id, model, domain, prompt_condition
        from marts.dim_stories
        where is_labeled and domain is not null
    """).pl()
    characters = connection.sql("""
        select story_id, domain, condition, role, prompt_id, coalesce(inferred_gender, 'none') as machine,
               hand_gender as hand, is_hand_labeled
        from intermediate.int_characters_hand_paired
    """).pl()
    stratum_columns = ["model", "domain", "prompt_condition"]
    if strata == "machine_label_class":
        classes = connection.sql(STORY_CLASSES_SQL.format(
            characters="intermediate.int_characters_hand_paired")).pl()
        stories = stories.join(classes, on="story_id", how="left").with_columns(
            pl.col("machine_class").fill_null("uncertain"))
        stratum_columns.append("machine_class")
    stratum = pl.concat_list(*stratum_columns).alias("stratum")
    characters = characters.join(stories.select("story_id", "model", stratum), on="story_id", how="inner")
    columns = ["story_id", "model", "stratum", "key", "machine", "hand", "is_hand_labeled"]
    units = {"gender": characters.with_columns(pl.concat_list("domain", "condition").alias("key")).select(columns)}
    if "reference.prompt_catalog" in present:
        catalog = connection.sql("select prompt_id, subject as occupation from reference.prompt_catalog "
                                 "where domain = 'labor'").pl()
        units["occupation"] = characters.filter((pl.col("domain") == "labor") & (pl.col("role") == "subject")).join(
            catalog, on="prompt_id", how="inner").with_columns(
            pl.concat_list("occupation", "condition").alias("key")).select(columns)
    if "intermediate.int_couples_typed" in present:
        units["couple"] = connection.sql("""
            select story_id, coalesce(inferred_couple_type, 'untyped') as machine,
                   case when is_hand_labeled then coalesce(hand_couple_type, 'untyped') end as hand, is_hand_labeled
            from intermediate.int_couples_typed
            where characters = 2
        """).pl().join(stories.select("story_id", "model", stratum), on="story_id", how="inner").with_columns(
            pl.concat_list(pl.lit("romantic")).alias("key")).select(columns)
    hand_stories = characters.filter(pl.col("is_hand_labeled")).select("story_id").unique()
    return units, stories.join(hand_stories.with_columns(pl.lit(True).alias("hand")), on="story_id", how="left")


def mask_units(units: dict[str, pl.DataFrame], stories: pl.DataFrame,
               kept: Iterable[str]) -> tuple[dict[str, pl.DataFrame], pl.DataFrame]:
    """The same units with hand labels only on the `kept` stories (for checking a plan on a fully hand-labeled
    audit, as lfh.build.correction_check does)."""
    kept_frame = pl.DataFrame({"story_id": sorted(set(kept))}, schema={"story_id": pl.String})
    keep = pl.col("story_id").is_in(kept_frame["story_id"].implode())
    masked = {family: frame.with_columns((pl.col("is_hand_labeled") & keep).alias("is_hand_labeled")).with_columns(
        pl.when(pl.col("is_hand_labeled")).then(pl.col("hand")).alias("hand")) for family, frame in units.items()}
    return masked, stories.with_columns(pl.when(keep & pl.col("hand").fill_null(False)).then(True).alias("hand"))


def _aggregate(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.group_by("model", "stratum", "key", "machine", "hand", "is_hand_labeled").agg(
        pl.len().alias("unit_count"))


def stratum_columns(stories: pl.DataFrame) -> list[str]:
    """The columns of `stories` (read_units') that make its sampling stratum."""
    return ["model", "domain", "prompt_condition", *(["machine_class"] if "machine_class" in stories.columns else [])]


def strata_stories(stories: pl.DataFrame) -> dict[Stratum, StratumStories]:
    """Per stratum: labeled stories, of which hand-labeled (column `hand` true) and candidates."""
    summary = stories.group_by(*stratum_columns(stories)).agg(
        pl.len().alias("stories"), pl.col("hand").fill_null(False).sum().alias("hand_labeled"))
    return {tuple(key): StratumStories(int(total), int(hand), int(total - hand))
            for *key, total, hand in summary.iter_rows()}


def build_plan(units: dict[str, pl.DataFrame], stories: pl.DataFrame, settings: PlanSettings | None = None,
               linearise_at: dict[tuple, tuple[float, float]] | None = None) -> Plan:
    """A plan from unit frames (as `read_units` reads them) and the labeled stories with their hand-label flag: the
    library entry the tests use on masked copies of a fully hand-labeled audit."""
    settings = settings or PlanSettings()
    strata = strata_stories(stories)
    if not strata:
        raise AuditPlanError("no labeled story to plan for: run `lfh ingest` and `lfh build` first")
    aggregated = {family: _aggregate(frame) for family, frame in units.items()}
    pilot = int(units["gender"]["is_hand_labeled"].sum()) if "gender" in units else 0
    return Plan(build_cells(aggregated, strata, settings, linearise_at), strata, settings, pilot)


def build_vars(connection: duckdb.DuckDBPyConnection) -> dict:
    """The dbt vars the warehouse was last built with (lfh build's fingerprint, meta.build_fingerprint), over the
    project's defaults: the estimator the plan must predict."""
    from lfh.build.fingerprint import stored_fingerprint
    from lfh.build.vars import project_var_defaults

    stored = stored_fingerprint(connection) or {}
    return {**project_var_defaults(), **(stored.get("vars") or {})}


def read_plan(db_path: Path, settings: PlanSettings | None = None, **overrides: object) -> Plan:
    """The plan of the warehouse at db_path, opened read-only under the shared warehouse lock (lfh.db.reading:
    waits for a running build, as every reader does). Without `settings`, those of the vars it was built with
    (`overrides`: e.g. assumed_error_rate)."""
    if not db_path.is_file():
        raise AuditPlanError(f"{db_path} does not exist: run `lfh ingest` and `lfh build` first")
    with reading(db_path, "plan hand labels") as connection:
        units, stories = read_units(connection)
        if settings is None:
            settings = PlanSettings.from_vars(build_vars(connection), **overrides)
    return build_plan(units, stories, settings)


# ---------------------------------------------------------------- allocation


LEVELS = ("all-model", "per-model")
DOMAINS = ("learning", "labor", "love")


@dataclass(frozen=True)
class Selection:
    """The corrected cells an allocation serves (the issue: "the summed variance of the corrected shares the user
    selects"): measure families, levels (the all-model cells, the per-model cells), categories (a gender, e.g.
    nonbinary, or a couple type; a gender also selects the couple types with a partner of it) and domains (gender
    cells of that domain; couples are love stories; occupations labor). Empty categories / domains: all."""

    families: tuple[str, ...] = DEFAULT_FAMILIES
    levels: tuple[str, ...] = LEVELS
    categories: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name, given, known in (("measure family", self.families, FAMILIES), ("level", self.levels, LEVELS),
                                   ("domain", self.domains, DOMAINS),
                                   ("category", self.categories, (*GENDERS, *COUPLE_TYPES))):
            unknown = sorted(set(given) - set(known))
            if unknown:
                raise AuditPlanError(f"unknown {name} {', '.join(unknown)}: choose from {', '.join(known)}")
        if not self.families or not self.levels:
            raise AuditPlanError("select at least one measure family and one level")

    def matches_key(self, family: str, model: str, key: Sequence[str]) -> bool:
        if family not in self.families or ("all-model" if model == ALL_MODELS else "per-model") not in self.levels:
            return False
        category = key[-1] if key else ""
        if self.categories and not any(
                category == wanted or (family == "couple" and wanted in GENDERS and wanted in category.split("_"))
                for wanted in self.categories):
            return False
        domain = {"couple": "love", "occupation": "labor"}.get(family, key[0] if key else "")
        return not self.domains or domain in self.domains

    def matches(self, cell: PlanCell) -> bool:
        return self.matches_key(cell.family, cell.model, cell.key)

    def search(self, name: str) -> bool:
        """Whether a cell named family/model/key... (lfh.build.correction_check's keys joined by '/') is selected:
        a re.Pattern's `search`, so a selection can stand where a pattern over cell names is taken."""
        family, model, *key = name.split("/")
        return self.matches_key(family, model, key)

    def label(self) -> str:
        parts = ["+".join(self.families)]
        if set(self.levels) != set(LEVELS):
            parts.append("/".join(self.levels))
        parts += ["/".join(values) for values in (self.categories, self.domains) if values]
        return ", ".join(parts)


# The selections a user would naturally make, each judged on its own in the validation (bench/bench_audit_allocation.py,
# tests/test_audit_allocation.py, docs/CORRECTION.md).
NATURAL_SELECTIONS = {
    "gender and couple (default)": Selection(),
    "gender": Selection(("gender",)),
    "couple": Selection(("couple",)),
    "all-model cells": Selection(levels=("all-model",)),
    "per-model cells": Selection(levels=("per-model",)),
    "non-binary (shares, couple types)": Selection(categories=("nonbinary",)),
    "learning": Selection(domains=("learning",)),
    "labor": Selection(domains=("labor",)),
    "love (gender, couples)": Selection(domains=("love",)),
}


def stratum_floors(room: dict[Stratum, int], labeled: dict[Stratum, float], min_per_stratum: int,
                   min_labeled: int = 0) -> dict[Stratum, int]:
    """The least each stratum gets of an allocation: min_per_stratum more stories, and enough that it has min_labeled
    hand-labeled ones in all; never more than its candidates (`room`)."""
    return {stratum: min(value, max(min_per_stratum, min_labeled - int(labeled.get(stratum, 0))))
            for stratum, value in room.items()}


def _selected(plan: Plan, selection: Selection) -> list[PlanCell]:
    return [cell for cell in plan.cells if selection.matches(cell)]


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
    settings = plan.settings
    selected = _selected(plan, selection or Selection(tuple(families)))
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
                penalty = min(_unthresholded_variance(cell, stories, settings), NO_VALUE_VARIANCE)
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
    selected_cells = [cell for cell in plan.cells if id(cell) in selected_names]

    def total(stratum_extra: dict[Stratum, int]) -> float:
        stories = current(stratum_extra)
        return sum(objective(cell, stories) for cell in selected_cells)

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
    relevant = {part.stratum for part in cell.parts} | {part.stratum for part in (cell.pool.parts if cell.pool else [])}
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
            value = variance if variance is not None else NO_VALUE_VARIANCE + _unthresholded_variance(
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


def family_summary(plan: Plan, stories: dict[Stratum, float]) -> pl.DataFrame:
    """Per family and level ('All' / per model): cells, cells with a value, median and largest half-width."""
    rows = []
    for family in FAMILIES:
        for level in ("All", "per model"):
            cells = [cell for cell in plan.cells
                     if cell.family == family and (cell.model == ALL_MODELS) == (level == "All")]
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


def strata_table(plan: Plan, extra: dict[Stratum, int]) -> pl.DataFrame:
    rows = [(*stratum, info.stories, info.hand_labeled, extra.get(stratum, 0),
             info.hand_labeled + extra.get(stratum, 0)) for stratum, info in sorted(plan.strata.items())]
    keys = ["model", "domain", "prompt_condition", "machine_class"][:len(rows[0]) - 4 if rows else 3]
    return pl.DataFrame(rows, schema=[*keys, "stories", "hand_labeled", "add", "planned_hand_labeled"], orient="row")


@dataclass
class PlanResult:
    strata: pl.DataFrame      # per stratum: stories, hand-labeled now, to add, planned
    families: pl.DataFrame    # per family and level: now and planned
    cells: pl.DataFrame       # per cell: predicted half-width now and planned
    added: int
    pilot_units: int


def make_plan(plan: Plan, families: Sequence[str] = DEFAULT_FAMILIES, budget: int | None = None,
              target_half_width: float | None = None, min_per_stratum: int = 3,
              selection: Selection | None = None) -> PlanResult:
    """The plan's tables: the allocation (for `selection`, default every cell of `families`) and what it buys,
    next to what the hand labels give now."""
    extra = plan_allocation(plan, families, budget, target_half_width, min_per_stratum, selection=selection)
    now = plan.labeled_now()
    planned = {stratum: now[stratum] + extra.get(stratum, 0) for stratum in now}
    families_now = family_summary(plan, now)
    families_planned = family_summary(plan, planned)
    summary = families_now.join(families_planned.select(
        "family", "level", pl.col("with_value").alias("planned_with_value"),
        pl.col("median_half_width").alias("planned_median_half_width"),
        pl.col("max_half_width").alias("planned_max_half_width")), on=["family", "level"], how="left")
    cells_now = cell_predictions(plan, now)
    cells_planned = cell_predictions(plan, planned)
    cells = cells_now.rename({"predicted_variance": "variance_now", "predicted_half_width": "half_width_now"}).join(
        cells_planned.select("family", "model", "cell", pl.col("predicted_half_width").alias("planned_half_width")),
        on=["family", "model", "cell"], how="left")
    return PlanResult(strata_table(plan, extra), summary, cells, sum(extra.values()), plan.pilot_units)


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
