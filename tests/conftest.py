"""Shared pytest fixtures. Topic-specific fixtures live beside their tests (tests/fixtures_*.py). The two test tiers
(fast: `make check`; slow: only `make test`) and the fast tier's time budget are in tests/tiers.py."""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner
from tiers import (  # noqa: F401  (the tiers' hooks, registered here)
    pytest_addoption,
    pytest_collection_modifyitems,
    pytest_runtest_makereport,
)
from tiers import pytest_configure as configure_tiers

from lfh.paths import project_root

pytest_plugins = ["pytester"]  # tests/test_tiers.py runs the tier check on a pytest run of its own
pytest_plugins += ["fixtures_shared_audit"]  # the shared audit builds and compiled correction SQL
pytest_plugins += ["fixtures_lexicon"]  # the real name tables, fetched and built once per run

SHARED_DATA = project_root().parent / "shared" / "data" / "laissez-faire"


def pytest_configure(config: pytest.Config) -> None:
    configure_tiers(config)
    # Parallel workers (pytest -n, make check / make test) each give dbt a target/ and logs/ of their own: two dbt
    # runs in one target/ overwrite each other's run_results.json, which lfh publish reads. A test that sets its
    # own (monkeypatch.setenv) still wins.
    # dbt's unit tests check each formula on rows they carry themselves: a test's corpus does not change them, so
    # the fixture builds leave them out, and one build runs every one of them (measures_build below, checked by
    # tests/test_measures_pipeline.py; tests/test_spark.py runs them on Spark). Set DBT_EXCLUDE_RESOURCE_TYPES=""
    # to run them in every build again.
    os.environ.setdefault("DBT_EXCLUDE_RESOURCE_TYPES", "unit_test")
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        os.environ.setdefault("DBT_TARGET_PATH", str(project_root() / "target" / f"pytest-{worker}"))
        os.environ.setdefault("DBT_LOG_PATH", str(project_root() / "logs" / f"pytest-{worker}"))


@pytest.fixture
def shared_data() -> Path:
    """The study's published workbooks (docs/DATA.md); tests that use them skip where ../shared is absent."""
    if not (SHARED_DATA / "audit_dev.xlsx").is_file():
        pytest.skip(f"{SHARED_DATA} not present (docs/DATA.md)")
    return SHARED_DATA


@pytest.fixture
def warehouse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh DuckDB file for one test, named through LFH_DB as every lfh command and dbt read it."""
    path = tmp_path / "warehouse" / "lfh.duckdb"
    monkeypatch.setenv("LFH_DB", str(path))
    return path


# Warehouses built once per test run. Under pytest-xdist each worker is a pytest session of its own, so a
# session-scoped fixture alone would build twice; the build goes to the run's common temp folder instead
# (getbasetemp().parent, pytest-xdist's documented pattern) under an exclusive file lock: the first worker to ask
# builds, the other waits for it, and every later asker reuses the folder. Tests read the shared warehouse
# read-only; a test that writes to it copies it first (a DuckDB file copy takes well under a second here).

@contextmanager
def _exclusive(lock_file: Path) -> Iterator[None]:
    with lock_file.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes, also if this process dies
        yield


def build_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder `name` after build(folder) filled it, built once per test run for every worker. A build that
    failed or skipped is not tried again: every later asker fails or skips with its message."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's folder, which every worker's own basetemp sits in
    folder = base / f"shared-{name}"
    with _exclusive(base / f"shared-{name}.lock"):
        built, failed, skipped = folder / ".built", folder / ".failed", folder / ".skipped"
        if skipped.exists():
            pytest.skip(skipped.read_text(encoding="utf-8"))
        if failed.exists():
            pytest.fail(f"the shared build {name!r} failed in another test: {failed.read_text(encoding='utf-8')}")
        if not built.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            try:
                build(folder)
            except pytest.skip.Exception as exc:
                skipped.write_text(str(exc.msg), encoding="utf-8")
                raise
            except BaseException as exc:
                failed.write_text(f"{type(exc).__name__}: {exc}"[-4000:], encoding="utf-8")
                raise
            built.touch()
    return folder


def reuse_parse(target: Path) -> None:
    """Give a build with a target folder of its own (DBT_TARGET_PATH) the project parse of the worker's target folder
    (its partial_parse.msgpack). dbt uses a parse only while the project's files, the vars and the profile (the
    warehouse's file name among them: lfh.build.runner) are those it was made with, and parses in full otherwise, so
    this saves the ~4.5 s of CPU of a full parse when it matches and costs nothing when it does not."""
    worker_target = Path(os.environ.get("DBT_TARGET_PATH") or project_root() / "target")
    parse = worker_target / "partial_parse.msgpack"
    if parse.is_file() and worker_target.resolve() != target.resolve():
        target.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(parse, target / parse.name)


MEASURES_CORPUS = Path(__file__).parent / "fixtures" / "measures"


@pytest.fixture(scope="session")
def measures_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repo's small corpus (tests/fixtures/measures: stories, label responses, a custom lexicon) landed with
    `lfh ingest` and `lfh lexicon` and built with `lfh build`, every dbt data and unit test included, once per run:
    the folder holding lfh.duckdb and dbt's target/ (run_results.json, manifest.json) and logs/. Read-only."""
    from lfh.cli import main

    def build(folder: Path) -> None:
        reuse_parse(folder / "target")
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("LFH_DB", str(folder / "lfh.duckdb"))
            patch.setenv("DBT_TARGET_PATH", str(folder / "target"))
            patch.setenv("DBT_LOG_PATH", str(folder / "logs"))
            patch.delenv("DBT_EXCLUDE_RESOURCE_TYPES", raising=False)  # the one build that runs the unit tests
            for arguments in (
                ["ingest", str(MEASURES_CORPUS / "stories.jsonl"), str(MEASURES_CORPUS / "labels.jsonl")],
                ["lexicon", "--custom", str(MEASURES_CORPUS / "lexicon.csv"), "--skip-census", "--skip-wikipedia",
                 "--skip-surnames"],
                ["build"],
            ):
                result = CliRunner().invoke(main, arguments, catch_exceptions=False)
                assert result.exit_code == 0, f"lfh {' '.join(arguments)}: {result.output}"

    return build_once(tmp_path_factory, "measures", build)


PLANTED_TRUTH = "planted_truth.json"


@pytest.fixture(scope="session")
def simulated_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A simulated corpus with known answers, built once per run: the three planted models of
    fixtures_simulate.planted_models (two identical, one with planted differences), 20 stories a catalog prompt
    and model (6,000 stories, 3 label responses each), the test lexicon, `dbt build` of every model and data test.
    The folder holds warehouse/lfh.duckdb and PLANTED_TRUTH (what the simulator planted). Read-only: the
    recovery, contrast and report tests read it."""
    from dataclasses import replace

    from fixtures_simulate import planted_models, write_test_lexicon

    from lfh.build.dbt import run_dbt
    from lfh.landing.ingest import ingest_paths
    from lfh.simulate.config import load_config
    from lfh.simulate.run import run_simulation

    def build(folder: Path) -> None:
        db_path = folder / "warehouse" / "lfh.duckdb"
        write_test_lexicon(db_path)
        config = replace(load_config(), stories_per_prompt=20, seed=5, models=planted_models())
        result = run_simulation(config, folder / "landing", db_path)
        results, _skipped = ingest_paths([result.stories_path, result.labels_path], db_path)
        assert all(item.error is None for item in results), [item.summary() for item in results]
        run_dbt(["build"], db_path=db_path, capture=True)
        shutil.copyfile(result.truth_path, folder / PLANTED_TRUTH)

    return build_once(tmp_path_factory, "simulated", build)


@pytest.fixture(scope="session")
def audit_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The study's development audit (audit_dev.xlsx: 1,001 stories, every one hand-labeled) with the test lexicon,
    `dbt build` of every model and data test at the default vars, once per run: the folder holding lfh.duckdb.
    Read-only; a test that rebuilds with other vars copies it first. Skips where ../shared is absent."""
    from fixtures_simulate import write_test_lexicon

    from lfh.build.dbt import run_dbt
    from lfh.landing.ingest import ingest_paths

    def build(folder: Path) -> None:
        workbook = SHARED_DATA / "audit_dev.xlsx"
        if not workbook.is_file():
            pytest.skip(f"{SHARED_DATA} not present (docs/DATA.md)")
        db_path = folder / "lfh.duckdb"
        write_test_lexicon(db_path)
        results, _skipped = ingest_paths([workbook], db_path)
        assert all(item.error is None for item in results), [item.summary() for item in results]
        run_dbt(["build"], db_path=db_path, capture=True)

    return build_once(tmp_path_factory, "audit", build)
