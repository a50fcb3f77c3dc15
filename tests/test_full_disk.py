"""A full disk at any step (ingest, report, publish) is one line, and nothing is lost or half-written: the previous
report, publication and warehouse rows stay whole, and no partial file is left that looks like a finished one. The
disk fills by injection (an OSError ENOSPC, or DuckDB's own message for it) at the step's write, on copies of
conftest's measures build."""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

import duckdb
import matplotlib.figure
import pytest
from click.testing import CliRunner, Result

import lfh.serve.publish
from lfh.cli import main
from lfh.landing.duckdb_sink import DuckDBSink

pytestmark = pytest.mark.slow  # copies of the measures build: tests/tiers.py

STORIES = Path(__file__).parent / "fixtures" / "measures" / "stories.jsonl"
LABELS = Path(__file__).parent / "fixtures" / "measures" / "labels.jsonl"
FULL = "no space left on the device"


def full_disk(path: object = None) -> OSError:
    return OSError(errno.ENOSPC, "No space left on device", str(path) if path else None)


def one_line_failure(result: Result) -> str:
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert result.exit_code != 0 and len(errors) == 1, result.output
    assert FULL in errors[0], errors[0]
    return errors[0]


@pytest.fixture
def db(measures_build: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "lfh.duckdb"
    shutil.copyfile(measures_build / "lfh.duckdb", path)
    monkeypatch.setenv("LFH_DB", str(path))
    return path


def test_a_report_cut_short_leaves_the_previous_report_whole(db: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "report"
    assert CliRunner().invoke(main, ["report", "--out", str(out)]).exit_code == 0
    before = {path.relative_to(out): path.read_bytes() for path in out.rglob("*") if path.is_file()}
    saved = matplotlib.figure.Figure.savefig
    calls = []

    def savefig(self: matplotlib.figure.Figure, target: object, *args: object, **kwargs: object) -> None:
        if isinstance(target, Path):  # a PNG file (the SVGs are drawn into memory first)
            calls.append(target)
            if len(calls) == 2:  # the second figure file hits the full disk
                raise full_disk(target)
        saved(self, target, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", savefig)
    one_line_failure(CliRunner().invoke(main, ["report", "--out", str(out)]))
    after = {path.relative_to(out): path.read_bytes() for path in out.rglob("*") if path.is_file()}
    assert after == before  # the old page and figures, byte for byte; no partial file or folder beside them
    assert sorted(path.name for path in out.iterdir()) == ["figures", "index.html"]


def test_a_publication_cut_short_leaves_the_previous_one_current(db: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    destination = tmp_path / "published"
    assert CliRunner().invoke(main, ["publish", "--to", str(destination)]).exit_code == 0
    current = (destination / "current").resolve()
    manifest = (destination / "manifest.json").read_bytes()

    def export(*_: object, **__: object) -> None:
        raise full_disk(destination / "parquet")

    monkeypatch.setattr(lfh.serve.publish, "export_parquet", export)
    one_line_failure(CliRunner().invoke(main, ["publish", "--to", str(destination)]))

    def checkpoint(*_: object, **__: object) -> None:  # DuckDB's own words for it, as seen on a full disk
        raise duckdb.IOException('IO Error: Checkpoint failed: Could not write file "marts.duckdb": '
                                 "No space left on device")

    monkeypatch.setattr(lfh.serve.publish, "copy_marts", checkpoint)
    one_line_failure(CliRunner().invoke(main, ["publish", "--to", str(destination)]))
    assert (destination / "current").resolve() == current
    assert (destination / "manifest.json").read_bytes() == manifest
    assert [path.name for path in (destination / "versions").iterdir()] == [current.name]  # no building folder


def test_an_ingest_cut_short_lands_nothing_and_loses_nothing(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def counts() -> tuple:
        with duckdb.connect(str(db), read_only=True) as connection:
            return tuple(connection.execute(f"select count(*) from raw.{table}").fetchone()[0]
                         for table in ("stories", "label_responses", "load_log"))

    before = counts()
    extra = db.parent / "more_labels.jsonl"
    extra.write_text(LABELS.read_text(encoding="utf-8") + "\n", encoding="utf-8")  # new bytes: a new load

    def finish(*_: object, **__: object) -> None:
        raise duckdb.FatalException("FATAL Error: Could not write all bytes to file: No space left on device")

    monkeypatch.setattr(DuckDBSink, "finish_file", finish)
    line = one_line_failure(CliRunner().invoke(main, ["ingest", str(extra), str(STORIES)]))
    assert str(db) in line
    monkeypatch.undo()
    assert counts() == before
