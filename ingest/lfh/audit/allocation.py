"""Stories per stratum for an audit sample (proportional, largest remainders), shared by `lfh audit-sample` and
`lfh audit-plan`: its own module so that neither imports the other."""

from __future__ import annotations

import math


class AuditSampleError(RuntimeError):
    """The warehouse cannot give the requested sample (no marts, no candidates, n too small for the strata)."""


def allocate(sizes: dict[tuple, int], n: int, min_per_stratum: int,
             floors: dict[tuple, int] | None = None) -> dict[tuple, int]:
    """Stories to draw per stratum: proportional to size by largest remainders, at least min(min_per_stratum,
    size) each (or the given `floors`), never more than the stratum holds; totals n (or every candidate when n
    exceeds them)."""
    if min_per_stratum < 0:
        raise AuditSampleError(f"--min-per-stratum must be 0 or more, got {min_per_stratum}")
    total = sum(sizes.values())
    if n >= total:
        return dict(sizes)
    floors = dict(floors) if floors is not None else {key: min(min_per_stratum, size) for key, size in sizes.items()}
    if sum(floors.values()) > n:
        raise AuditSampleError(
            f"n={n} is below the {sum(floors.values())} stories that at least {min_per_stratum} per stratum needs "
            f"({len(sizes)} strata of model x domain x condition): raise --n or lower --min-per-stratum")
    allocation = dict(floors)
    while sum(allocation.values()) < n:
        remaining = n - sum(allocation.values())
        open_strata = {key: size for key, size in sizes.items() if allocation[key] < size}
        open_total = sum(open_strata.values())
        quotas = {key: remaining * size / open_total for key, size in open_strata.items()}
        added = 0
        for key, quota in quotas.items():
            step = min(math.floor(quota), sizes[key] - allocation[key])
            allocation[key] += step
            added += step
        if added == 0:  # every quota below 1: the largest remainders take one each
            for key in sorted(quotas, key=lambda key: (-quotas[key], key))[:remaining]:
                allocation[key] += 1
    return allocation
