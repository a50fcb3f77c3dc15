"""The cell/pool composite of the corrected shares (var ppi_cell_pool_rule = 'composite',
macros/stats/ppi_composite.sql, docs/CORRECTION.md "Cell and pool: a composite rectifier") against an independent
numpy statement of it, on random characters of five models whose labeler errs at model-dependent rates; and its
variance formula's properties (no own label: the pool plus tau2; tau2 = 0: the pool; never larger with more own
hand labels) evaluated from the macro itself over a grid.

The reference works from the units, not from the SQL's sums: each share by the paper's PPI formulas (as in
tests/test_ppi_reference.py), the share-linearised rectifier of every hand-labeled unit, the one-way ANOVA /
DerSimonian-Laird moments over models, the Wilson-Hilferty chi-square quantile (checked against scipy's), and the
composite of docs/CORRECTION.md.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import duckdb
import jinja2
import numpy as np
import polars as pl
import pytest
from scipy.stats import chi2, norm

from bench.correction_check import units_from_characters
from lfh.categories import GENDERS

pytestmark = pytest.mark.slow  # compiles the dbt project: tests/tiers.py

TAU2_Z = 1.2816  # dbt_project.yml var ppi_composite_tau2_z
MACROS = Path(__file__).resolve().parents[1] / "macros" / "stats" / "ppi_composite.sql"


def chi_square_lower_quantile(nu: float, z: float) -> float:
    """Wilson-Hilferty, as the macro computes it (base kept >= 0.01)."""
    return nu * max(0.01, 1 - 2 / (9 * nu) - z * (2 / (9 * nu)) ** 0.5) ** 3


def test_wilson_hilferty_is_close_to_the_exact_quantile() -> None:
    alpha = norm.cdf(-TAU2_Z)
    for nu in (3, 4, 5, 6, 9, 20):  # four models and more: within 1.5%
        assert chi_square_lower_quantile(nu, TAU2_Z) == pytest.approx(chi2.ppf(alpha, nu), rel=0.015), nu
    # two and three models: smaller than the exact quantile, i.e. a larger (more cautious) tau2
    for nu in (1, 2):
        assert chi_square_lower_quantile(nu, TAU2_Z) < chi2.ppf(alpha, nu), nu


def _characters(rng: np.random.Generator, model: str, unlabeled: int, labeled: int, error: float) -> list[tuple]:
    """Characters of one cell: hand gender drawn; the labeler turns a share `error` of them non-binary (the
    model-dependent "they" of a pair) and 5% unspecified."""
    rows = []
    for index in range(unlabeled + labeled):
        hand = rng.choice(["female", "male", "nonbinary"], p=[0.5, 0.45, 0.05])
        noise = rng.random()
        inferred = "nonbinary" if noise < error else "unspecified" if noise < error + 0.05 else hand
        is_labeled = index >= unlabeled
        rows.append((f"{model}-{index}", "subject", model, "labor", "baseline", None, "actor", inferred,
                     hand if is_labeled else None, is_labeled))
    return rows


def _arrays(rows: list[tuple], column: int, gender: str) -> tuple[np.ndarray, np.ndarray]:
    a = np.array([1.0 if row[column] == gender else 0.0 for row in rows])
    b = np.array([1.0 if row[column] in GENDERS else 0.0 for row in rows])
    return a, b


def _ppi_share(unlabeled: list[tuple], labeled: list[tuple], gender: str) -> tuple[float, float, float, float]:
    """PPI share a / b (lam = 1): raw share, b's estimate, total delta-method variance, its rectifier part."""
    fa_u, fb_u = _arrays(unlabeled, 7, gender)
    fa_l, fb_l = _arrays(labeled, 7, gender)
    ya, yb = _arrays(labeled, 8, gender)
    da, db = ya - fa_l, yb - fb_l
    theta_a, theta_b = fa_u.mean() + da.mean(), fb_u.mean() + db.mean()
    r = theta_a / theta_b
    f_part = np.var(fa_u - r * fb_u) / len(fa_u) / theta_b**2
    rectifier_part = np.var(da - r * db) / len(da) / theta_b**2
    return r, theta_b, f_part + rectifier_part, rectifier_part


def composite_reference(rows: list[tuple], model: str, gender: str) -> dict[str, float]:
    """docs/CORRECTION.md's composite for one per-model cell with unlabeled units (unstratified)."""
    cell = [row for row in rows if row[2] == model]
    unlabeled = [row for row in cell if not row[9]]
    pool_labeled = [row for row in rows if row[9]]
    own_labeled = [row for row in cell if row[9]]
    r_pool, b0, pool_variance, pool_rectifier = _ppi_share(unlabeled, pool_labeled, gender)
    models = sorted({row[2] for row in pool_labeled})
    sums, squares, counts = [], [], []
    for other in models:
        labeled = [row for row in pool_labeled if row[2] == other]
        fa, fb = _arrays(labeled, 7, gender)
        ya, yb = _arrays(labeled, 8, gender)
        e = ((ya - fa) - r_pool * (yb - fb)) / b0
        sums.append(e.sum())
        squares.append((e * e).sum())
        counts.append(len(e))
    s, q, n = np.array(sums), np.array(squares), np.array(counts, dtype=float)
    k, total = len(n), n.sum()
    within = (q - s * s / n).sum() / (total - k)
    between = (s * s / n).sum() - s.sum() ** 2 / total
    spread = total - (n * n).sum() / total
    tau2 = max(0.0, (k - 1) * (between / chi_square_lower_quantile(k - 1, TAU2_Z) - within) / spread) if k >= 2 else 0
    n_c = len(own_labeled)
    weight = 1.0 if n_c == 0 or within + n_c * tau2 <= 0 else within / (within + n_c * tau2)
    shrunk = tau2 if n_c == 0 else (within * tau2 / (within + n_c * tau2) if within + n_c * tau2 > 0 else 0.0)
    r_own = _ppi_share(unlabeled, own_labeled, gender)[0] if n_c else r_pool
    raw = (1 - weight) * r_own + weight * r_pool
    variance = pool_variance - pool_rectifier + shrunk + weight**2 * (pool_rectifier + tau2 * (n * n).sum() / total**2)
    return {"share": min(1.0, max(0.0, raw)), "variance": variance, "weight": weight, "tau2": tau2,
            "hand_labeled_n": len(pool_labeled)}


@pytest.fixture(scope="module")
def queries(correction_sql: Callable[[dict], dict[str, str]]) -> dict[str, str]:
    """tests/fixtures_shared_audit.py: compiled once per run."""
    return correction_sql({"ppi_stratify": False, "ppi_cell_pool_rule": "composite", "ppi_machine_mean": "unlabeled"})


UNIT_COLUMNS = ("story_id", "role", "model", "domain", "condition", "prompt_id", "role_text", "inferred_gender",
                "hand_gender", "is_hand_labeled")


def _run(queries: dict[str, str], rows: list[tuple]) -> dict[tuple, tuple]:
    """The compiled gender model on `rows` (the columns of int_characters_hand_paired it reads)."""
    connection = duckdb.connect()
    schema = {name: pl.Boolean if name == "is_hand_labeled" else pl.String for name in UNIT_COLUMNS}
    connection.register("characters", pl.DataFrame(rows, schema=schema, orient="row").to_arrow())
    units_from_characters(connection, "characters")
    sql = queries["gender"]
    result = connection.execute(f"select model, gender, rectifier_source, hand_labeled_n, corrected_share, "
                                f"corrected_share_variance from ({sql})").fetchall()
    return {(model, gender): rest for model, gender, *rest in result}


def test_composite_matches_the_numpy_reference(queries: dict[str, str]) -> None:
    rng = np.random.default_rng(20261203)
    plan = [("M1", 300, 0, 0.05), ("M2", 250, 3, 0.30), ("M3", 200, 12, 0.10), ("M4", 150, 30, 0.20),
            ("M5", 100, 80, 0.02)]
    rows = [row for model, unlabeled, labeled, error in plan for row in _characters(rng, model, unlabeled, labeled,
                                                                                   error)]
    measured = _run(queries, rows)
    weights = []
    for model, *_ in plan:
        for gender in GENDERS:
            source, n, share, variance = measured[(model, gender)]
            expected = composite_reference(rows, model, gender)
            assert source == "composite" and n == expected["hand_labeled_n"], (model, gender)
            assert share == pytest.approx(expected["share"], abs=1e-12), (model, gender)
            assert variance == pytest.approx(expected["variance"], rel=1e-9), (model, gender)
            weights.append(expected["weight"])
    # the data exercise the whole range: the pool alone (no own label), mixtures, and mostly the cell's own
    assert max(weights) == 1.0 and min(weights) < 0.5 and any(0.05 < w < 0.95 for w in weights)
    assert all(measured[("All", gender)][0] == "cell" for gender in GENDERS)


def _render(expression: str) -> str:
    """A macro of ppi_composite.sql rendered by plain Jinja (the variance macros use no dbt context)."""
    environment = jinja2.Environment(extensions=["jinja2.ext.do"])
    return environment.from_string(MACROS.read_text() + expression).render().strip()


def test_the_composite_variance_never_grows_with_more_own_hand_labels() -> None:
    """(1 - B) V_c + B^2 (V_P + tau2 sum w^2) from the macro, over a grid of sigma2, tau2, V_P, sum w^2 and
    n_c = 0..200: non-increasing in n_c; at n_c = 0 it is V_P + tau2 (1 + sum w^2); with tau2 = 0 it is V_P (the
    pool)."""
    variance = _render("{{ ppi_composite_rectifier_variance('sigma2', 'tau2', 'n', 'pool_variance', 'sum_w2') }}")
    weight = _render("{{ ppi_composite_weight('sigma2', 'tau2', 'n') }}")
    connection = duckdb.connect()
    rows = connection.execute(f"""
        select sigma2, tau2, pool_variance, sum_w2, n, {variance} as mse, {weight} as b
        from (select unnest([0.0, 0.01, 0.2, 1.5]::double[]) as sigma2),
             (select unnest([0.0, 0.0004, 0.01, 0.3]::double[]) as tau2),
             (select unnest([0.0, 0.001, 0.05]::double[]) as pool_variance),
             (select unnest([0.2, 1.0]::double[]) as sum_w2),
             (select cast(range as double) as n from range(0, 201))
        order by sigma2, tau2, pool_variance, sum_w2, n
    """).fetchall()
    previous = None
    for sigma2, tau2, pool_variance, sum_w2, n, mse, b in rows:
        if n == 0:
            assert b == 1.0 and mse == pytest.approx(pool_variance + tau2 * (1 + sum_w2), abs=1e-15)
        else:
            assert mse <= previous + 1e-15, (sigma2, tau2, pool_variance, sum_w2, n)
        if tau2 == 0:
            assert b == 1.0 and mse == pytest.approx(pool_variance, abs=1e-15)
        if sigma2 > 0 and tau2 > 0 and n == 200:
            assert b < 1 and mse < pool_variance + tau2 * (1 + sum_w2)  # own hand labels help
        previous = mse
