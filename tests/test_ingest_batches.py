"""Reading a file in many small batches lands exactly what reading it whole lands: the same ids and occurrence
numbers, duplicates, rejects (with their raw records and row numbers) and counts, and still all or nothing."""

from __future__ import annotations

import json
import random
from pathlib import Path

import polars as pl
import pytest
from fixtures_ingest import label_records, query_all, run_ingest, story_records, write_csv, write_jsonl, write_parquet

from lfh.landing.records import BATCH_ROWS_ENV_VAR
from lfh.landing.stories import IDENTICAL, OccurrenceCounter

TABLES = {
    "stories": "select story_id, occurrence, source_row, story_text from raw.stories order by source_row",
    "label_responses": "select response_id, source_row from raw.label_responses order by source_row",
    "rejects": "select source_row, target_table, reason, detail, raw_record from raw.rejects order by 1, 2",
    "load_log": "select rows_read, rows_landed, duplicates, rejected, status from raw.load_log order by started_at",
}


def _awkward_stories() -> list[dict]:
    """Identical texts spread over batches, a repeated record, rejected rows."""
    records = story_records(12)
    for index in (3, 6, 10):  # the same story as row 1 three more times: occurrences 2, 3, 4
        records[index] = dict(records[0])
    records[5]["text"] = ""
    records[8]["model"] = None
    return records


def _landed(warehouse: Path) -> dict[str, list[tuple]]:
    return {name: query_all(warehouse, sql) for name, sql in TABLES.items()}


@pytest.mark.parametrize("writer", [write_jsonl, write_csv, write_parquet], ids=["jsonl", "csv", "parquet"])
def test_small_batches_land_what_one_batch_lands(tmp_path: Path, warehouse: Path, monkeypatch: pytest.MonkeyPatch,
                                                 writer) -> None:
    path = writer(tmp_path / f"stories.{writer.__name__.split('_')[1]}", _awkward_stories())
    run_ingest(path)
    whole = _landed(warehouse)
    warehouse.unlink()

    monkeypatch.setenv(BATCH_ROWS_ENV_VAR, "2")
    result = run_ingest(path)

    assert result.exit_code == 0, result.output
    assert _landed(warehouse) == whole
    assert [row[1] for row in whole["stories"] if row[3] == whole["stories"][0][3]] == [1, 2, 3, 4]
    assert len(whole["rejects"]) == 2


def test_bad_json_lines_in_later_batches_keep_their_text_and_reason(tmp_path: Path, warehouse: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BATCH_ROWS_ENV_VAR, "2")
    lines = [json.dumps(record) for record in story_records(5)]
    lines[3] = "not json, {"
    lines.insert(1, "[1, 2]")
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    result = run_ingest(path)

    assert "6 rows read, 4 landed, 0 duplicates, 2 rejected" in result.output
    assert query_all(warehouse, "select source_row, reason, raw_record from raw.rejects order by 1") == [
        (2, "not_an_object", "[1, 2]"), (5, "malformed_json", None)]


def test_labels_in_batches_and_a_grown_file_adds_only_its_new_rows(tmp_path: Path, warehouse: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BATCH_ROWS_ENV_VAR, "3")
    records = label_records([f"story-{index}" for index in range(4)], samples=2)
    path = write_jsonl(tmp_path / "labels.jsonl", records)
    assert "8 rows read, 8 landed" in run_ingest(path).output

    write_jsonl(path, records + records[:2] + label_records(["story-9"], samples=1))
    result = run_ingest(path)

    assert "11 rows read, 1 landed, 10 duplicates, 0 rejected" in result.output
    assert query_all(warehouse, "select count(*), count(distinct response_id) from raw.label_responses") == [(9, 9)]


def test_a_failure_in_a_later_batch_lands_nothing_of_the_file(tmp_path: Path, warehouse: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from lfh.landing import lander

    monkeypatch.setenv(BATCH_ROWS_ENV_VAR, "2")
    offered = []
    landing = lander.land_batch

    def failing_third_batch(sink, batch, rejects_now=True):
        offered.append(batch.rows_read)
        if len(offered) == 3:
            raise OSError("disk vanished in the third batch")
        return landing(sink, batch, rejects_now)

    monkeypatch.setattr("lfh.landing.ingest_file.land_batch", failing_third_batch)
    result = run_ingest(write_jsonl(tmp_path / "s.jsonl", story_records(7)))

    assert result.exit_code == 1 and "disk vanished in the third batch" in result.output
    assert query_all(warehouse, "select count(*) from raw.stories") == [(0,)]
    assert query_all(warehouse, "select status from raw.load_log") == [("failed",)]


def _numbers_in_batches(frame: pl.DataFrame, sizes: list[int]) -> list[int]:
    counter, numbers, start = OccurrenceCounter(), [], 0
    for size in sizes:
        numbers += counter.number(frame.slice(start, size)).to_list()
        start += size
    return numbers


@pytest.mark.parametrize("seed", range(5))
def test_occurrence_numbers_do_not_depend_on_the_batches(seed: int) -> None:
    generator = random.Random(seed)
    frame = pl.DataFrame({"model_canonical": [generator.choice(["a", "b"]) for _ in range(300)],
                          "query": "q", "story_text": [f"text {generator.randrange(25)}" for _ in range(300)]})
    expected = frame.select(pl.int_range(1, pl.len() + 1).over(IDENTICAL)).to_series().to_list()
    sizes = []
    while sum(sizes) < frame.height:
        sizes.append(generator.randint(1, 9))

    assert _numbers_in_batches(frame, sizes) == expected


def test_occurrence_numbers_stay_exact_when_keys_share_their_first_half(monkeypatch: pytest.MonkeyPatch) -> None:
    from lfh.landing import stories

    def colliding_key(frame: pl.DataFrame) -> pl.DataFrame:
        keyed = stories.__dict__["_real_content_key"](frame)
        return keyed.with_columns((pl.col("_key_a") % 3).alias("_key_a"))  # every key shares one of 3 halves

    monkeypatch.setitem(stories.__dict__, "_real_content_key", stories._content_key)
    monkeypatch.setattr(stories, "_content_key", colliding_key)
    frame = pl.DataFrame({"model_canonical": "m", "query": "q", "story_text": [f"t{i % 17}" for i in range(120)]})
    expected = frame.select(pl.int_range(1, pl.len() + 1).over(IDENTICAL)).to_series().to_list()

    assert _numbers_in_batches(frame, [7] * 17 + [1]) == expected
