"""The two test tiers, as a pytest plugin (loaded by tests/conftest.py).

- slow: `@pytest.mark.slow` on the test, or `pytestmark = pytest.mark.slow` in its module: builds the dbt project,
  runs a subprocess pipeline or a real engine (Spark, PostgreSQL, Chromium). Run by `make test` only.
- fast: every other test. `make check` runs them all (`pytest -m "not slow"`), so each must stay fast: a fast
  test whose setup and call together take longer than the budget FAILS, naming the budget and what to do.
  The budget (30 s; LFH_FAST_TEST_BUDGET or --fast-test-budget) is for a quiet machine and is multiplied by the
  1-minute load average per core when that is above 1: on a shared machine (several builds on 2 cores) a test
  takes several times its quiet time. A module-scoped fixture is charged to the first test
  that uses it.

Every test is in exactly one tier by construction (the marker is there or not); this check keeps the fast tier
honest. tests/test_tiers.py shows it failing a slow unmarked test and passing the same test marked slow.

Order (make test: `pytest -n <cores + 1> --dist loadscope --no-loadscope-reorder`, one module per worker at a
time): the slowest modules first, longest first (SLOW_FIRST, from `--durations` on this machine), so that the
workers finish together: the Spark build starts at once on one worker while the others work through the rest.
xdist gives a worker its next module while the current one still runs (a worker only starts a test once the next
is queued), so the module queued right behind the Spark build waits for it: that place goes to a cheap module of
many tests (BEHIND_SPARK), never to another long one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

BUDGET_ENV_VAR = "LFH_FAST_TEST_BUDGET"
DEFAULT_BUDGET_SECONDS = 30.0
SLOW_MARKER = "slow"
# Modules scheduled first, about longest first: setup and calls in seconds on one worker, from the last quiet
# fresh-clone run's --durations (7 December: README, Test time; bench/results/test_time.md; three workers on two
# cores, so each figure is stretched by the others), with the targets set for the modules made cheaper
# (audit_allocation 40 s, correction_validation and correction_simulation 80 s together). Everything else keeps its
# collection order after them. tests/test_schedule.py checks that each still exists.
SLOW_FIRST = (
    "test_spark.py",               # 485 s, one test: the Spark build
    "test_build_incremental.py",   # 342
    "test_build_cli.py",           # 44 in its two slowest tests
    "test_human_work_safe.py",     # 183: its readers loop while its build runs, so it grows with the others' load
    "test_demo.py",                # 68
    "test_runs_end_to_end.py",     # 45: generate, label, ingest and a build of the runs marts
    "test_correction_validation.py",  # the first to ask for the audit under the biased rule and the one compile
    "test_audit_allocation.py",    # reads those two (fixtures_correction); its CPU is the planner's
    "test_label_resume.py",        # 23 in its slowest test
    "test_measures_pipeline.py",   # 56: the measures build every dbt unit test runs in
    "test_ppi_machine_mean.py",
    "test_occupation_correction.py",
    "test_correction_simulation.py",
    "test_cleaning_audit.py",
    "test_model_contrasts_recovery.py",  # 22-30: the first to ask for conftest's simulated build, which it pays
    "test_audit_sample.py",        # was 36 with a build of its own; now reads the simulated build (~10 s more)
    "test_race_names_audit.py",
    "test_report.py",
    "test_simulate_recovery.py",
    "test_ppi_stratified.py",
    "test_cleaning_pipeline.py",   # 16
    "test_ppi_composite.py",
)
# the third module in the queue: the first worker gets it with the Spark build and reaches it only after that build
# (see the docstring). Many fast tests, so that worker asks for nothing more meanwhile.
BEHIND_SPARK = "test_sql_style.py"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--fast-test-budget", type=float, default=None,
                     help=f"seconds a fast-tier test may take (default ${BUDGET_ENV_VAR}, "
                          f"else {DEFAULT_BUDGET_SECONDS:g})")


def budget_seconds(config: pytest.Config) -> float:
    given = config.getoption("--fast-test-budget", default=None)
    return float(given if given is not None else os.environ.get(BUDGET_ENV_VAR, DEFAULT_BUDGET_SECONDS))


def load_factor() -> float:
    """How much slower than on a quiet machine a test runs now: the 1-minute load average per core, at least 1.
    On a machine shared with other builds a fast test takes several times its quiet time; a build still takes
    several times the budget."""
    try:
        return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
    except OSError:
        return 1.0


def is_slow(item: pytest.Item) -> bool:
    return item.get_closest_marker(SLOW_MARKER) is not None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{SLOW_MARKER}: the slow tier (make test only): builds the dbt project, runs a "
                            "subprocess pipeline or a real engine")


def module_order() -> list[str]:
    """The modules scheduled first, in queue order: the Spark build, the next longest module (the other worker's
    first), the cheap module behind the Spark build, then the rest of SLOW_FIRST."""
    return [*SLOW_FIRST[:2], BEHIND_SPARK, *SLOW_FIRST[2:]]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    order = module_order()

    def rank(item: pytest.Item) -> int:
        name = item.path.name
        return order.index(name) if name in order else len(order)

    items.sort(key=rank)  # stable: the rest keep their collection order


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.when == "setup":
        item.stash[_setup_seconds] = report.duration
        return
    if report.when != "call" or not report.passed or is_slow(item):
        return
    spent = item.stash.get(_setup_seconds, 0.0) + report.duration
    budget, load = budget_seconds(item.config), load_factor()
    if spent > budget * load:
        report.outcome = "failed"
        scaled = f" x {load:.1f} for the machine's load" if load > 1 else ""
        report.longrepr = (f"fast-tier test took {spent:.1f} s (setup and call), over the fast tier's budget of "
                           f"{budget:g} s{scaled} ({BUDGET_ENV_VAR}): make it smaller, or mark it "
                           f"@pytest.mark.slow so that only `make test` runs it (tests/tiers.py)")


_setup_seconds = pytest.StashKey[float]()
