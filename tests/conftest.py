"""Shared pytest fixtures. Topic-specific fixtures live beside their tests (tests/fixtures_*.py). The two test tiers
(fast: `make check`; slow: only `make test`) and the fast tier's time budget are in tests/tiers.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tiers import (  # noqa: F401  (the tiers' hooks, registered here)
    pytest_addoption,
    pytest_collection_modifyitems,
    pytest_runtest_makereport,
)
from tiers import pytest_configure as configure_tiers

from lfh.paths import project_root

pytest_plugins = ["pytester"]  # tests/test_tiers.py runs the tier check on a pytest run of its own

SHARED_DATA = project_root().parent / "shared" / "data" / "laissez-faire"


def pytest_configure(config: pytest.Config) -> None:
    configure_tiers(config)
    # Parallel workers (pytest -n, make check / make test) each give dbt a target/ and logs/ of their own: two dbt
    # runs in one target/ overwrite each other's run_results.json, which lfh publish reads. A test that sets its
    # own (monkeypatch.setenv) still wins.
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        os.environ.setdefault("DBT_TARGET_PATH", str(project_root() / "target" / f"pytest-{worker}"))
        os.environ.setdefault("DBT_LOG_PATH", str(project_root() / "logs" / f"pytest-{worker}"))


@pytest.fixture
def shared_data() -> Path:
    """The study's published workbooks; tests that use them skip where ../shared is absent."""
    if not (SHARED_DATA / "audit_dev.xlsx").is_file():
        pytest.skip(f"{SHARED_DATA} not present")
    return SHARED_DATA


@pytest.fixture
def warehouse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh DuckDB file for one test, named through LFH_DB as every lfh command and dbt read it."""
    path = tmp_path / "warehouse" / "lfh.duckdb"
    monkeypatch.setenv("LFH_DB", str(path))
    return path
