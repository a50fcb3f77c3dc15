"""How two builds' doubles are compared: equal to a relative 1e-9, or both NaN. One rule for the tests that compare
whole tables (tests/test_spark.py: Spark against DuckDB; tests/test_build_incremental.py: incremental against
full). The same rows summed in another order (DuckDB's parallel sums, Spark's Java maths) can differ in the last
bits, which no fixed rounding absorbs (5e8 and 9.35 need different decimals, and a value can fall on either side of
a rounding boundary). Near zero a relative tolerance means nothing (1e-17 against 0), so each caller names the
absolute tolerance its rows need."""

from __future__ import annotations

import math

RELATIVE_TOLERANCE = 1e-9


def same_double(left: float, right: float, absolute: float) -> bool:
    """Equal to RELATIVE_TOLERANCE (or within `absolute` of each other, for values near zero), or both NaN."""
    return math.isclose(left, right, rel_tol=RELATIVE_TOLERANCE, abs_tol=absolute) or (
        math.isnan(left) and math.isnan(right))
