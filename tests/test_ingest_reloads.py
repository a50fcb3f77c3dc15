"""Re-running, growing files, identical texts, and a crash in the middle of a load."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fixtures_ingest import query_all, run_ingest, scalar, story_records, write_jsonl

from lfh.landing.lander import PAUSE_ENV_VAR


def test_rerun_adds_nothing(tmp_path: Path, warehouse: Path) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", story_records(10))
    run_ingest(path)

    result = run_ingest(path, reread=True)

    assert result.exit_code == 0
    assert "10 rows read, 0 landed, 10 duplicates, 0 rejected" in result.output
    assert scalar(warehouse, "select count(*) from raw.stories") == 10
    assert query_all(warehouse, "select rows_landed, duplicates from raw.load_log order by started_at") == \
        [(10, 0), (0, 10)]


def test_an_unchanged_file_is_skipped_without_reading_it(tmp_path: Path, warehouse: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from lfh.landing import ingest_file

    path = write_jsonl(tmp_path / "s.jsonl", story_records(10))
    other = write_jsonl(tmp_path / "other.jsonl", story_records(10))  # same content, another path: read
    run_ingest(path)

    def no_reading(*_: object) -> None:
        raise AssertionError("an unchanged file was read again")

    reading = ingest_file.open_records
    monkeypatch.setattr(ingest_file, "open_records", no_reading)
    result = run_ingest(path)
    monkeypatch.setattr(ingest_file, "open_records", reading)  # not monkeypatch.undo(): that would drop LFH_DB too
    again = run_ingest(other)

    assert result.exit_code == 0, result.output
    assert "unchanged since its load at" in result.output and "skipped: 0 landed" in result.output
    assert "10 rows read, 0 landed, 10 duplicates" in again.output
    assert scalar(warehouse, "select count(*) from raw.stories") == 10
    assert scalar(warehouse, "select count(*) from raw.load_log") == 2  # a skip writes no load_log row


def test_a_failed_load_is_not_mistaken_for_a_loaded_file(tmp_path: Path, warehouse: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text("not json at all\n", encoding="utf-8")
    assert run_ingest(path).exit_code != 0

    again = run_ingest(path)

    assert again.exit_code != 0 and "FAILED" in again.output


def test_grown_file_adds_only_new_rows_with_the_same_ids(tmp_path: Path, warehouse: Path) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", story_records(6))
    run_ingest(path)
    before = query_all(warehouse, "select story_id, source_row from raw.stories order by source_row")

    write_jsonl(path, story_records(6) + story_records(4, start=6) + story_records(2))  # 4 new + 2 repeats
    result = run_ingest(path)

    assert "12 rows read, 6 landed, 6 duplicates" in result.output
    after = query_all(warehouse, "select story_id, source_row, occurrence from raw.stories order by source_row")
    assert [(story, row) for story, row, _ in after[:6]] == before
    assert [occurrence for _, _, occurrence in after[-2:]] == [2, 2]


def test_identical_texts_stay_separate_stories(tmp_path: Path, warehouse: Path) -> None:
    record = story_records(1)[0]
    alias = {**record, "model": "ChatGPT3_5"}  # an alias of the same canonical model counts as identical
    run_ingest(write_jsonl(tmp_path / "s.jsonl", [record, record, alias]))

    rows = query_all(warehouse, "select occurrence, model from raw.stories order by source_row")
    assert rows == [(1, "gpt-3.5-turbo"), (2, "gpt-3.5-turbo"), (3, "ChatGPT3_5")]
    assert scalar(warehouse, "select count(distinct story_id) from raw.stories") == 3


def test_duplicate_rows_within_one_file_keep_the_first(tmp_path: Path, warehouse: Path) -> None:
    records = [{**record, "story_id": "same"} for record in story_records(3)]
    result = run_ingest(write_jsonl(tmp_path / "s.jsonl", records))
    assert "3 rows read, 1 landed, 2 duplicates" in result.output
    assert query_all(warehouse, "select source_row from raw.stories") == [(1,)]


def _ingest_process(paths: list[Path], database: Path, pause_file: Path | None) -> subprocess.Popen:
    environment = {**os.environ, "LFH_DB": str(database)}
    if pause_file is not None:
        environment[PAUSE_ENV_VAR] = str(pause_file)
    return subprocess.Popen([sys.executable, "-m", "lfh.cli", "ingest", *map(str, paths)], env=environment,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_kill_during_a_load_leaves_nothing_and_a_rerun_completes(tmp_path: Path, warehouse: Path) -> None:
    path = write_jsonl(tmp_path / "big.jsonl", story_records(3000))
    pause_file = tmp_path / "paused"
    process = _ingest_process([path], warehouse, pause_file)
    deadline = time.monotonic() + 60
    while not pause_file.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the load never reached its transaction"
        time.sleep(0.05)
    # the rows are inserted, the transaction is open: kill -9
    process.send_signal(signal.SIGKILL)
    process.wait()

    assert scalar(warehouse, "select count(*) from raw.stories") == 0
    assert scalar(warehouse, "select count(*) from raw.load_log") == 0

    rerun = _ingest_process([path], warehouse, None)
    output, errors = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, errors
    assert "3000 rows read, 3000 landed, 0 duplicates" in output
    assert query_all(warehouse, "select count(*), count(distinct story_id) from raw.stories") == [(3000, 3000)]


def test_an_error_inside_the_transaction_rolls_the_whole_file_back(tmp_path: Path, warehouse: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import duckdb

    from lfh.landing import duckdb_sink

    def failing_log(*_: object) -> None:
        raise duckdb.ConstraintException("simulated failure after the inserts")

    monkeypatch.setattr(duckdb_sink, "_pause_for_crash_test", failing_log)  # after every insert, before COMMIT
    result = run_ingest(write_jsonl(tmp_path / "s.jsonl", story_records(5)))

    assert result.exit_code != 0
    assert "FAILED, nothing landed: ConstraintException: simulated failure" in result.output
    assert scalar(warehouse, "select count(*) from raw.stories") == 0
    assert query_all(warehouse, "select status from raw.load_log") == [("failed",)]
