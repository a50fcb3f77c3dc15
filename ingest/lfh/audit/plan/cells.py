"""The plan's cells from the warehouse's units: per cell and stratum, the moments of the machine labels and of the
residual (the pilot's hand labels shrunk towards what the labeler's confusion matrix implies)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

import polars as pl

from lfh.audit.plan.model import (
    NO_MOMENTS,
    Moments,
    PlanCell,
    PlanSettings,
    Stratum,
    StratumPart,
    StratumStories,
)
from lfh.audit.plan.terms import unbiased
from lfh.categories import ALL_MODEL_LEVEL, COUPLE_TYPES, GENDERS, PER_MODEL_LEVEL


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
          settings: PlanSettings, at: tuple[float, float] | None = None, level: str = "") -> PlanCell:
    """One cell from its units (columns stratum, machine, hand, is_hand_labeled, unit_count). The plan linearises
    the share where the confusion matrix expects it (`at` = (share, denominator mean) overrides it)."""
    machine_counts: dict[str, float] = defaultdict(float)
    for machine, count in units.group_by("machine").agg(pl.col("unit_count").sum()).iter_rows():
        machine_counts[machine] += count
    total = sum(machine_counts.values())
    # the shares the confusion matrix expects the hand labels to give: where the plan linearises
    expected_a = sum(count * matrix[i][group] for i, count in sorted(machine_counts.items()))
    expected_b = sum(count * sum(matrix[i][j] for j in members) for i, count in sorted(machine_counts.items()))
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
            unbiased(moments, pilot_n) for moments in (pilot_residual, pilot_cross, pilot_machine))
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
    return PlanCell(family, model, key, share, known, parts, level=level)


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
        occupation = settings.occupation_genders
        groups, members = (occupation, occupation) if family == "occupation" else (
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
                label = settings.all_models_label
                pool = _cell(family, label, (*key, group), keyed, group, members, matrix, stories, settings,
                             at.get((family, label, *key, group)), ALL_MODEL_LEVEL)
                cells.append(pool)
                for (model,), rows in keyed.group_by("model", maintain_order=True):
                    cell = _cell(family, model, (*key, group), rows, group, members, matrix, stories, settings,
                                 at.get((family, model, *key, group)), PER_MODEL_LEVEL)
                    cell.pool = pool
                    cells.append(cell)
    return cells
