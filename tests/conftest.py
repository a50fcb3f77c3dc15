"""Shared pytest fixtures. Topic-specific fixtures live beside their tests (tests/fixtures_*.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lfh.paths import project_root

SHARED_DATA = project_root().parent / "shared" / "data" / "laissez-faire"


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
