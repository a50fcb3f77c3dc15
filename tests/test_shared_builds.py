"""tests/conftest.py's build_once: a shared fixture warehouse is built once per run, whoever asks first, and a build
that failed or skipped is reported to every later asker rather than tried again."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from conftest import build_once


def test_the_first_asker_builds_and_later_askers_reuse_the_folder(tmp_path_factory: pytest.TempPathFactory) -> None:
    calls: list[Path] = []

    def build(folder: Path) -> None:
        calls.append(folder)
        (folder / "lfh.duckdb").write_text("built", encoding="utf-8")

    name = f"selftest-{uuid.uuid4().hex}"
    first = build_once(tmp_path_factory, name, build)
    again = build_once(tmp_path_factory, name, build)
    assert first == again == calls[0] and len(calls) == 1
    assert (again / "lfh.duckdb").read_text(encoding="utf-8") == "built"


def test_a_failed_build_fails_later_askers_without_building_again(tmp_path_factory: pytest.TempPathFactory) -> None:
    calls = []

    def build(folder: Path) -> None:
        calls.append(folder)
        raise RuntimeError("dbt build failed: no column x")

    name = f"selftest-{uuid.uuid4().hex}"
    with pytest.raises(RuntimeError, match="no column x"):
        build_once(tmp_path_factory, name, build)
    with pytest.raises(pytest.fail.Exception, match="RuntimeError: dbt build failed: no column x"):
        build_once(tmp_path_factory, name, build)
    assert len(calls) == 1


def test_a_skipped_build_skips_later_askers(tmp_path_factory: pytest.TempPathFactory) -> None:
    def build(_folder: Path) -> None:
        pytest.skip("the study's data not present")

    name = f"selftest-{uuid.uuid4().hex}"
    for _ in range(2):
        with pytest.raises(pytest.skip.Exception, match="the study's data not present"):
            build_once(tmp_path_factory, name, build)
