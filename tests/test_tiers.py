"""The fast tier's budget (tests/tiers.py) fails a fast test that is too slow, and lets it pass marked slow; and
the ordering puts the Spark module first for make test's parallel workers."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import tiers

SLEEPY = """
import time

import pytest


def test_sleeps():
    time.sleep(0.5)


@pytest.mark.slow
def test_sleeps_marked_slow():
    time.sleep(0.5)
"""


def test_a_slow_unmarked_test_fails_the_fast_tier(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tiers, "load_factor", lambda: 1.0)  # as on a quiet machine
    pytester.makepyfile(test_sleepy=SLEEPY)
    result = pytester.runpytest_inprocess("-p", "tiers", "-p", "no:cacheprovider", "--fast-test-budget", "0.2")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*fast-tier test took 0.* s (setup and call), over the fast tier's budget "
                                 "of 0.2 s (*"])
    failed = [line for line in result.outlines if line.startswith("FAILED")]
    assert len(failed) == 1 and failed[0].startswith("FAILED test_sleepy.py::test_sleeps - "), failed


def test_within_the_budget_both_pass(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(tiers.BUDGET_ENV_VAR, "30")  # the environment's budget (the option is unset)
    pytester.makepyfile(test_sleepy=SLEEPY)
    result = pytester.runpytest_inprocess("-p", "tiers", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_the_budget_grows_with_the_load(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """At a load of 4 per core the same 0.5 s test is within a 0.2 s budget (0.8 s), and the message says why not
    when it is over."""
    monkeypatch.setattr(tiers, "load_factor", lambda: 4.0)
    pytester.makepyfile(test_sleepy=SLEEPY)
    result = pytester.runpytest_inprocess("-p", "tiers", "-p", "no:cacheprovider", "--fast-test-budget", "0.2")
    result.assert_outcomes(passed=2)
    monkeypatch.setattr(tiers, "load_factor", lambda: 2.0)
    result = pytester.runpytest_inprocess("-p", "tiers", "-p", "no:cacheprovider", "--fast-test-budget", "0.2")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*budget of 0.2 s x 2.0 for the machine's load*"])


def test_spark_is_scheduled_first() -> None:
    """make test's workers take modules in this order (--no-loadscope-reorder): the Spark build starts at once."""
    items = [SimpleNamespace(path=Path("tests") / name) for name in ("test_a.py", "test_spark.py", "test_b.py")]
    tiers.pytest_collection_modifyitems(items)  # type: ignore[arg-type]
    assert [item.path.name for item in items] == ["test_spark.py", "test_a.py", "test_b.py"]
