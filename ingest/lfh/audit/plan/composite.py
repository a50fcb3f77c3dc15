"""The predicted variance of a per-model cell under var ppi_cell_pool_rule = composite (the Fay-Herriot composite
of macros/stats/ppi_composite.sql)."""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict

from lfh.audit.plan.model import PlanCell, PlanSettings, Stratum, StratumPart
from lfh.audit.plan.terms import labeled_units, rectifier_term


def chi_square_lower_quantile(nu: float, z: float) -> float:
    """Wilson-Hilferty, as macros/stats/ppi_composite.sql: nu (max(0.01, 1 - 2/(9 nu) - z sqrt(2/(9 nu))))^3."""
    return nu * max(0.01, 1 - 2 / (9 * nu) - z * math.sqrt(2 / (9 * nu))) ** 3


def composite_variance(cell: PlanCell, labeled_stories: dict[Stratum, float], settings: PlanSettings,
                       machine: float, pooled_rectifier: float, own_n: float) -> float:
    """The variance of var ppi_cell_pool_rule = composite for a per-model cell with unlabeled units
    (macros/stats/ppi_composite.sql), unscaled by b^2 like its inputs:
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
        counted = [(part, labeled_units(part, labels)) for part in parts]
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
