"""The correction's formulas (macros/stats/ppi.sql, as compiled into the two correction models) against the
reference implementation of prediction-powered inference, ppi-python (Angelopoulos et al.; a test-only
dependency), and against the paper's formulas written out in numpy, on the same random numbers.

ppi_py has no ratio estimator, so the share a / b is checked two ways: its point estimate from two
`ppi_mean_pointestimate` calls, and its delta-method variance as the variance of one PPI mean of the linearised
outcome (a - r b) / b (`ppi_mean_ci` on those values): the delta method is exactly that, and it brings the
covariance of the two means with it. A numpy implementation of Var a, Var b and Cov(a, b) checks the same number.

The interval (macros/stats/ppi_interval.sql) is the hull of ppi_py's normal interval and, at the boundary, Wilson
bounds on the hand-labeled units: checked against `interval_reference` below, a plain-Python statement of
docs/CORRECTION.md's rule whose Wilson bounds are scipy's (`binomtest(...).proportion_ci(method="wilson")`).
"""

from __future__ import annotations

from collections.abc import Callable

import duckdb
import numpy as np
import pytest
from scipy.stats import binomtest, norm

from bench.correction_check import units_from_characters
from lfh.categories import GENDERS

pytestmark = pytest.mark.slow  # builds (or compiles) the dbt project: tests/tiers.py

ppi_py = pytest.importorskip("ppi_py")

Z = 1.96
ALPHA = 2 * (1 - norm.cdf(Z))  # ppi_py takes alpha; the project's z is var wilson_z = 1.96


def wilson(successes: float, trials: float) -> tuple[float, float]:
    """Wilson score interval at z = Z (closed form; scipy's for whole counts, test_wilson_matches_scipy)."""
    if trials <= 0:
        return 0.0, 1.0
    p, z2 = successes / trials, Z * Z
    center, scale = p + z2 / (2 * trials), 1 + z2 / trials
    half = Z * (p * (1 - p) / trials + z2 / (4 * trials * trials)) ** 0.5
    return max(0.0, (center - half) / scale), min(1.0, (center + half) / scale)


def interval_reference(raw: float, variance: float, total_n: float, hand_subset: float, hand_category: float,
                       cell_subset: float, cell_category: float) -> tuple[float, float]:
    """docs/CORRECTION.md, "The interval": the hull of (1) the PPI normal interval clamped to [0, 1], (2) where the
    variance degenerates (below 1e-12, i.e. 0 up to rounding, or the projected share at 0 or 1) the Wilson interval
    of the share on m hand-labeled units (m = hand_subset at most total_n), (3) where the hand labels show none of
    the category [0, Wilson upper of 0 of m], where they show all [Wilson lower of m of m, 1]; then a cell's own
    hand labels keep 0 (none of the category among them) or 1 (all)."""
    share = min(1.0, max(0.0, raw))
    sd = max(0.0, variance) ** 0.5
    lower, upper = min(1.0, max(0.0, raw - Z * sd)), max(0.0, min(1.0, raw + Z * sd))
    m = max(0.0, min(hand_subset, total_n))
    if variance < 1e-12 or share <= 0 or share >= 1:  # a rounding residue of 0 is 0 (ppi_interval_is_degenerate)
        fallback = wilson(share * m, m)
        lower, upper = min(lower, fallback[0]), max(upper, fallback[1])
    if m > 0 and hand_category <= 0:
        lower, upper = 0.0, max(upper, wilson(0, m)[1])
    if m > 0 and hand_category >= hand_subset:
        lower, upper = min(lower, wilson(m, m)[0]), 1.0
    if cell_subset > 0 and cell_category <= 0:
        lower = 0.0
    if cell_subset > 0 and cell_category >= cell_subset:
        upper = 1.0
    return lower, upper


def test_wilson_matches_scipy() -> None:
    for successes, trials in [(0, 1), (0, 20), (3, 20), (20, 20), (7, 131), (130, 131)]:
        ours = wilson(successes, trials)
        theirs = binomtest(successes, trials).proportion_ci(confidence_level=1 - ALPHA, method="wilson")
        assert ours == pytest.approx((theirs.low, theirs.high), abs=1e-9), (successes, trials)


@pytest.fixture(scope="module")
def queries(correction_sql: Callable[[dict], dict[str, str]]) -> dict[str, str]:
    """tests/fixtures_shared_audit.py: compiled once per run."""
    # ppi_py has no stratified estimator: the unstratified one here; tests/test_ppi_stratified.py checks the other.
    # The own-or-pool switch: its cells are plain PPI; tests/test_ppi_composite.py checks the composite. ppi_py takes
    # the f mean over the unlabeled units (ppi_machine_mean unlabeled); tests/test_ppi_machine_mean.py the other
    return correction_sql({"ppi_stratify": False, "ppi_cell_pool_rule": "switch", "ppi_machine_mean": "unlabeled"})


def _characters(rng: np.random.Generator, model: str, condition: str, unlabeled: int, labeled: int) -> list[tuple]:
    """Characters whose hand gender is drawn, and whose machine gender is the hand gender with errors (some to
    'nonbinary', some to 'unspecified') so that the labeler is biased."""
    rows = []
    for index in range(unlabeled + labeled):
        hand = rng.choice(["female", "male", "nonbinary", "unspecified"], p=[0.45, 0.4, 0.05, 0.1])
        noise = rng.random()
        inferred = "nonbinary" if noise < 0.15 else "unspecified" if noise < 0.25 else hand
        is_labeled = index >= unlabeled
        rows.append((f"{model}-{condition}-{index}", "subject", model, "labor", condition, None, "actor",
                     inferred, hand if is_labeled else None, is_labeled))
    return rows


def _indicators(rows: list[tuple], gender: str) -> dict[str, np.ndarray]:
    def arrays(selected: list[tuple], column: int) -> tuple[np.ndarray, np.ndarray]:
        a = np.array([1.0 if row[column] == gender else 0.0 for row in selected])
        b = np.array([1.0 if row[column] in GENDERS else 0.0 for row in selected])
        return a, b
    labeled = [row for row in rows if row[9]]
    unlabeled = [row for row in rows if not row[9]]
    fa_u, fb_u = arrays(unlabeled, 7)
    fa_l, fb_l = arrays(labeled, 7)
    ya, yb = arrays(labeled, 8)
    return {"fa_u": fa_u, "fb_u": fb_u, "fa_l": fa_l, "fb_l": fb_l, "ya": ya, "yb": yb}


def _numpy_ratio(x: dict[str, np.ndarray]) -> tuple[float, float]:
    """The paper's formulas: theta = mean f (unlabeled) + mean (y - f) (labeled), Var = Var f / N + Var d / n,
    covariances alike (population moments, as ppi_py), then the delta method for a / b."""
    n_u, n_l = len(x["fa_u"]), len(x["ya"])
    da, db = x["ya"] - x["fa_l"], x["yb"] - x["fb_l"]
    theta_a, theta_b = x["fa_u"].mean() + da.mean(), x["fb_u"].mean() + db.mean()
    unlabeled = np.cov(np.vstack([x["fa_u"], x["fb_u"]]), bias=True)
    labeled = np.cov(np.vstack([da, db]), bias=True)
    covariance = unlabeled / n_u + labeled / n_l
    r = theta_a / theta_b
    variance = (covariance[0, 0] - 2 * r * covariance[0, 1] + r * r * covariance[1, 1]) / theta_b**2
    return r, variance


def _ppi_py_ratio(x: dict[str, np.ndarray]) -> tuple[float, float, tuple[float, float]]:
    theta_a = ppi_py.ppi_mean_pointestimate(x["ya"], x["fa_l"], x["fa_u"], lam=1)
    theta_b = ppi_py.ppi_mean_pointestimate(x["yb"], x["fb_l"], x["fb_u"], lam=1)
    theta_a, theta_b = float(np.squeeze(theta_a)), float(np.squeeze(theta_b))
    r = theta_a / theta_b
    linear_y = (x["ya"] - r * x["yb"]) / theta_b
    linear_f = (x["fa_l"] - r * x["fb_l"]) / theta_b
    linear_u = (x["fa_u"] - r * x["fb_u"]) / theta_b
    lower, upper = ppi_py.ppi_mean_ci(linear_y, linear_f, linear_u, alpha=ALPHA, lam=1)
    lower, upper = float(np.squeeze(lower)), float(np.squeeze(upper))
    variance = ((upper - lower) / (2 * Z)) ** 2
    return r, variance, (r - Z * variance**0.5, r + Z * variance**0.5)


def test_ppi_mean_matches_ppi_python_on_one_indicator() -> None:
    """The building block alone: our mean and variance formulas against ppi_mean_ci for a single indicator."""
    rng = np.random.default_rng(7)
    y = (rng.random(80) < 0.6).astype(float)
    f = np.where(rng.random(80) < 0.2, 1 - y, y)
    f_u = (rng.random(500) < 0.5).astype(float)
    lower, upper = ppi_py.ppi_mean_ci(y, f, f_u, alpha=ALPHA, lam=1)
    theta = f_u.mean() + (y - f).mean()
    sd = (f_u.var() / 500 + (y - f).var() / 80) ** 0.5
    assert float(np.squeeze(lower)) == pytest.approx(theta - Z * sd, abs=1e-12)
    assert float(np.squeeze(upper)) == pytest.approx(theta + Z * sd, abs=1e-12)


def test_corrected_gender_shares_match_ppi_python(queries: dict[str, str]) -> None:
    rng = np.random.default_rng(20231110)
    rows = (_characters(rng, "M1", "baseline", 400, 120)      # 120 >= 20: its own hand labels
            + _characters(rng, "M2", "baseline", 300, 10)     # 10 < 20: pooled with M1's (130)
            + _characters(rng, "M1", "dominant", 200, 60))
    connection = duckdb.connect()
    connection.execute("""create table characters (story_id varchar, role varchar, model varchar, domain varchar,
        condition varchar, prompt_id varchar, role_text varchar, inferred_gender varchar, hand_gender varchar,
        is_hand_labeled boolean)""")
    connection.executemany("insert into characters values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    units_from_characters(connection, "characters")
    result = connection.execute(
        f"select model, condition, gender, rectifier_source, hand_labeled_n, corrected_share, "
        f"corrected_share_variance, corrected_share_ci_lower, corrected_share_ci_upper "
        f"from ({queries['gender']})").fetchall()
    measured = {(model, condition, gender): rest for model, condition, gender, *rest in result}
    checked = interior = 0
    for (model, condition, gender), (source, n, share, variance, lower, upper) in measured.items():
        cell = [row for row in rows if row[4] == condition and (model == "All" or row[2] == model)]
        unlabeled = [row for row in cell if not row[9]]
        labeled = cell if source == "cell" else [row for row in rows if row[4] == condition]
        x = _indicators(unlabeled + [row for row in labeled if row[9]], gender)
        assert n == len(x["ya"])
        r_ref, variance_ref, (lower_ref, upper_ref) = _ppi_py_ratio(x)
        r_np, variance_np = _numpy_ratio(x)
        assert r_np == pytest.approx(r_ref, rel=1e-9) and variance_np == pytest.approx(variance_ref, rel=1e-9)
        assert share == pytest.approx(min(1.0, max(0.0, r_ref)), abs=1e-12), (model, condition, gender)
        assert variance == pytest.approx(variance_ref, rel=1e-9), (model, condition, gender)
        own = _indicators([row for row in cell if row[9]], gender)
        expected = interval_reference(r_ref, variance_ref, len(x["fa_u"]) + n, x["yb"].sum(), x["ya"].sum(),
                                      own["yb"].sum(), own["ya"].sum())
        assert (lower, upper) == pytest.approx(expected, abs=1e-9), (model, condition, gender)
        assert upper > lower
        if 0 < r_ref < 1 and 0 < x["ya"].sum() < x["yb"].sum() and 0 < own["ya"].sum() < own["yb"].sum():
            # inside the parameter space the interval is ppi_py's normal interval, clamped to [0, 1]
            assert (lower, upper) == pytest.approx((max(0.0, lower_ref), min(1.0, upper_ref)), abs=1e-12)
            interior += 1
        checked += 1
    assert interior >= 10
    assert checked == 3 * 5  # M1 and All baseline and dominant, M2 baseline: 5 cells x 3 genders
    assert {key[0]: value[0] for key, value in measured.items() if key[1] == "baseline"} == {
        "M1": "cell", "M2": "pooled", "All": "cell"}


def test_a_category_nobody_shows_gets_the_hand_labels_wilson_bound(queries: dict[str, str]) -> None:
    """Neither the labeler nor a hand label shows a non-binary character: the PPI variance is 0 and the normal
    interval [0, 0]. The published interval is [0, Wilson upper bound of 0 of m] (scipy's), m = the hand-labeled
    characters with a coded gender of the rectifier's source: the cell's own 40, the pool's 45 for M2 (5 own)."""
    rng = np.random.default_rng(3)
    rows = []
    for model, unlabeled, labeled in (("M1", 300, 40), ("M2", 100, 5)):
        for index in range(unlabeled + labeled):
            hand = "female" if rng.random() < 0.5 else "male"
            inferred = hand if rng.random() < 0.9 else ("male" if hand == "female" else "female")
            is_labeled = index >= unlabeled
            rows.append((f"{model}-{index}", "subject", model, "labor", "baseline", None, "actor", inferred,
                         hand if is_labeled else None, is_labeled))
    connection = duckdb.connect()
    connection.execute("""create table characters (story_id varchar, role varchar, model varchar, domain varchar,
        condition varchar, prompt_id varchar, role_text varchar, inferred_gender varchar, hand_gender varchar,
        is_hand_labeled boolean)""")
    connection.executemany("insert into characters values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    units_from_characters(connection, "characters")
    result = connection.execute(
        f"select model, corrected_share, corrected_share_variance, corrected_share_ci_lower, corrected_share_ci_upper "
        f"from ({queries['gender']}) where gender = 'nonbinary' order by model").fetchall()
    expected_m = {"All": 45, "M1": 40, "M2": 45}
    for model, share, variance, lower, upper in result:
        exact = binomtest(0, expected_m[model]).proportion_ci(confidence_level=1 - ALPHA, method="wilson")
        assert share == 0 and variance == pytest.approx(0, abs=1e-15) and lower == 0, model
        assert upper == pytest.approx(exact.high, abs=1e-12), model  # 3.8416 / (m + 3.8416)
        # the exact (Clopper-Pearson) bound for 0 of m is 1 - (alpha/2)^(1/m): within 0.01 of Wilson's here
        assert abs(upper - (1 - (ALPHA / 2) ** (1 / expected_m[model]))) < 0.01
    assert [row[0] for row in result] == ["All", "M1", "M2"]


def test_no_hand_labels_no_rows(queries: dict[str, str]) -> None:
    """Without hand labels the correction has nothing to say: no rows, so the marts' corrected columns are null."""
    rng = np.random.default_rng(1)
    rows = [row[:8] + (None, False) for row in _characters(rng, "M1", "baseline", 50, 0)]
    connection = duckdb.connect()
    connection.execute("""create table characters (story_id varchar, role varchar, model varchar, domain varchar,
        condition varchar, prompt_id varchar, role_text varchar, inferred_gender varchar, hand_gender varchar,
        is_hand_labeled boolean)""")
    connection.executemany("insert into characters values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    units_from_characters(connection, "characters")
    assert connection.execute(f"select count(*) from ({queries['gender']})").fetchone() == (0,)


def test_worked_example_of_the_unit_test_against_ppi_python() -> None:
    """The hand-worked cell of the dbt unit test corrected_gender_shares_by_hand (M1, female), through ppi_py."""
    x = {"fa_u": np.array([1.0, 1, 0, 0]), "fb_u": np.array([1.0, 1, 1, 1]),
         "fa_l": np.array([1.0, 0, 0, 0]), "fb_l": np.array([1.0, 1, 1, 0]),
         "ya": np.array([1.0, 0, 0, 1]), "yb": np.array([1.0, 0, 1, 1])}
    r, variance, _ = _ppi_py_ratio(x)
    assert r == pytest.approx(0.75) and variance == pytest.approx(0.0859375)


class _MacroReturn(Exception):  # noqa: N818 -- dbt's return(), as plain Jinja can run it
    def __init__(self, value: object) -> None:
        super().__init__()
        self.value = value


def _macro_return(value: object) -> None:
    raise _MacroReturn(value)


def test_a_rounding_residue_of_a_zero_variance_is_degenerate(monkeypatch: pytest.MonkeyPatch) -> None:
    """A variance that should be 0 but that floating-point rounding left at 1e-19 (a cell whose every unit agreed,
    projected share a hair below 1: seen on the dev audit) must not give a 1e-9-wide interval: the macro treats it
    as degenerate (the Wilson interval of the share on m hand labels joins the hull), as interval_reference does. A
    real variance (1e-6) keeps the plain normal interval."""
    import jinja2.runtime

    from lfh.paths import project_root

    stats = project_root() / "macros" / "stats"
    source = "".join((stats / name).read_text() for name in ("ppi.sql", "wilson.sql", "ppi_interval.sql"))
    environment = jinja2.Environment(extensions=["jinja2.ext.do"])
    environment.globals["var"] = {"wilson_z": Z}.__getitem__
    # dbt's return(value) ends a macro with a value (wilson_center_and_half_width): the same in plain Jinja
    environment.globals["return"] = _macro_return
    invoke = jinja2.runtime.Macro._invoke

    def invoke_returning(self: jinja2.runtime.Macro, arguments: list, autoescape: bool) -> object:
        try:
            return invoke(self, arguments, autoescape)
        except _MacroReturn as returned:
            return returned.value

    monkeypatch.setattr(jinja2.runtime.Macro, "_invoke", invoke_returning)
    lower = environment.from_string(source + "{{ ppi_interval_lower('raw', 'share', 'v', 'm', 'm', 'k') }}").render()
    upper = environment.from_string(source + "{{ ppi_interval_upper('raw', 'share', 'v', 'm', 'm', 'k') }}").render()
    connection = duckdb.connect()
    for variance in (1e-19, 1e-6):
        raw = 1 - 1e-15
        row = connection.execute(f"select {lower.strip()}, {upper.strip()} from (select ? as raw, ? as share, ? as v, "
                                 f"20.0 as m, 19.0 as k)", [raw, raw, variance]).fetchone()
        expected = interval_reference(raw, variance, 100, 20, 19, 20, 19)
        assert row == pytest.approx(expected, abs=1e-12), variance
        if variance < 1e-12:
            assert row[1] - row[0] > 0.05  # the Wilson interval of 19.99.. of 20, not [1 - 6e-10, 1]
        else:
            assert row[1] - row[0] == pytest.approx(Z * variance**0.5, rel=1e-6)  # upper clamped at 1
