"""`lfh ingest` on the project's own formats: JSON Lines, JSON arrays, CSV, Parquet; stories and label responses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures_ingest import (
    label_records,
    query_all,
    run_ingest,
    scalar,
    story_records,
    write_csv,
    write_jsonl,
    write_parquet,
)

from lfh.identity import response_id, story_id

WRITERS = {"jsonl": write_jsonl, "csv": write_csv, "parquet": write_parquet}


@pytest.mark.parametrize("extension", sorted(WRITERS))
def test_stories_land_with_content_ids_in_every_format(tmp_path: Path, warehouse: Path, extension: str) -> None:
    records = story_records(12)
    path = WRITERS[extension](tmp_path / f"stories.{extension}", records)

    result = run_ingest(path)

    assert result.exit_code == 0, result.output
    assert "12 rows read, 12 landed" in result.output
    rows = query_all(warehouse, "select story_id, model, model_canonical, query, story_text, occurrence, source_kind, "
                                "source_row, file_sha256, source_file from raw.stories order by source_row")
    assert len(rows) == 12
    first = rows[0]
    assert first[1] == "gpt-3.5-turbo" and first[2] == "ChatGPT3.5"
    assert first[0] == story_id("ChatGPT3.5", records[0]["query"], records[0]["text"], 1)
    assert first[6] == ("jsonl" if extension == "jsonl" else extension)
    assert [row[7] for row in rows] == list(range(1, 13))
    assert first[9] == str(path.resolve()) and len(first[8]) == 64


def test_the_same_stories_in_another_format_are_duplicates(tmp_path: Path, warehouse: Path) -> None:
    records = story_records(8)
    run_ingest(write_jsonl(tmp_path / "a.jsonl", records))

    result = run_ingest(write_parquet(tmp_path / "a.parquet", records), write_csv(tmp_path / "a.csv", records))

    assert result.exit_code == 0, result.output
    assert result.output.count("0 landed, 8 duplicates") == 2
    assert scalar(warehouse, "select count(*) from raw.stories") == 8


def test_given_story_id_is_used_as_is(tmp_path: Path, warehouse: Path) -> None:
    records = [{**record, "story_id": f"gen-{index}"} for index, record in enumerate(story_records(3))]
    run_ingest(write_jsonl(tmp_path / "s.jsonl", records))
    assert [row[0] for row in query_all(warehouse, "select story_id from raw.stories order by 1")] == \
        ["gen-0", "gen-1", "gen-2"]


def test_json_array_file_and_unknown_keys(tmp_path: Path, warehouse: Path) -> None:
    records = [{**record, "extra_field": {"nested": True}} for record in story_records(4)]
    path = tmp_path / "stories.json"
    path.write_text(json.dumps(records), encoding="utf-8")

    result = run_ingest(path)

    assert result.exit_code == 0, result.output
    assert scalar(warehouse, "select count(*) from raw.stories") == 4


@pytest.mark.parametrize("extension", sorted(WRITERS))
def test_label_responses_land_in_every_format(tmp_path: Path, warehouse: Path, extension: str) -> None:
    records = label_records(["s1", "s2", "s3"], samples=2)
    path = WRITERS[extension](tmp_path / f"labels.{extension}", records)

    result = run_ingest(path)

    assert result.exit_code == 0, result.output
    rows = query_all(warehouse, "select response_id, story_id, labeler_model, prompt_version, sample_index, "
                                "response_text, prompt_tokens, completion_tokens, responded_at "
                                "from raw.label_responses order by source_row")
    assert len(rows) == 6
    assert rows[1][0] == response_id("s1", "gpt-4o-mini", "method-v1", 1)
    assert rows[1][4] == 1 and rows[1][6] == 120 and rows[1][7] == 30
    assert rows[0][5] == records[0]["response_text"]
    assert rows[0][8] == "2024-05-02T10:00:00Z"
    # story ids not in raw.stories are still landed (staging reports them as orphans)
    assert scalar(warehouse, "select count(*) from raw.stories") == 0


def test_folder_is_searched_and_kind_comes_from_columns(tmp_path: Path, warehouse: Path) -> None:
    landing = tmp_path / "landing"
    stories = story_records(5)
    write_jsonl(landing / "stories" / "part1.jsonl", stories)
    write_parquet(landing / "stories" / "nested" / "part2.parquet", story_records(3, start=5))
    ids = [story_id("ChatGPT3.5", record["query"], record["text"], 1) for record in stories]
    write_jsonl(landing / "labels" / "run1.jsonl", label_records(ids, samples=1))
    # a label file placed in the stories folder is still read as label responses
    write_csv(landing / "stories" / "misplaced_labels.csv", label_records(ids[:2], samples=3)[4:])
    (landing / "README.txt").write_text("not data", encoding="utf-8")

    result = run_ingest(landing)

    assert result.exit_code == 0, result.output
    assert "README.txt: skipped" in result.output
    assert scalar(warehouse, "select count(*) from raw.stories") == 8
    assert scalar(warehouse, "select count(*) from raw.label_responses") == 7
    assert scalar(warehouse, "select count(*) from raw.load_log where status = 'loaded'") == 4
    assert scalar(warehouse, "select count(*) from raw.label_responses l join raw.stories s using (story_id)") == 7


@pytest.mark.parametrize("extension", sorted(WRITERS))
def test_story_token_usage_lands_when_given(tmp_path: Path, warehouse: Path, extension: str) -> None:
    # the shape `lfh generate` writes: usage on the call's first story, 0 on the others, plus keys ingest ignores
    records = [{**record, "prompt_id": "p01", "story_index": index, "model_id": "gpt-3.5-turbo-0125",
                "prompt_tokens": 40 if index == 0 else 0, "completion_tokens": 900 if index == 0 else 0}
               for index, record in enumerate(story_records(3))]
    path = WRITERS[extension](tmp_path / f"generated.{extension}", records)

    result = run_ingest(path)

    assert "3 rows read, 3 landed" in result.output, result.output
    assert query_all(warehouse, "select prompt_tokens, completion_tokens from raw.stories order by source_row") == \
        [(40, 900), (0, 0), (0, 0)]


def test_stories_without_token_usage_land_nulls(tmp_path: Path, warehouse: Path) -> None:
    run_ingest(write_jsonl(tmp_path / "s.jsonl", story_records(2)))
    assert query_all(warehouse, "select prompt_tokens, completion_tokens from raw.stories") == [(None, None)] * 2


def test_a_story_with_a_bad_token_count_is_rejected(tmp_path: Path, warehouse: Path) -> None:
    good, fractional, text, huge = story_records(4)
    records = [{**good, "prompt_tokens": "12"}, {**fractional, "prompt_tokens": 1.5},
               {**text, "completion_tokens": "many"}, {**huge, "completion_tokens": 2**40}]

    result = run_ingest(write_jsonl(tmp_path / "s.jsonl", records))

    assert "4 rows read, 1 landed, 0 duplicates, 3 rejected" in result.output
    assert query_all(warehouse, "select prompt_tokens from raw.stories") == [(12,)]
    assert query_all(warehouse, "select source_row, reason from raw.rejects order by 1") == \
        [(2, "bad_token_count"), (3, "bad_token_count"), (4, "bad_token_count")]


def test_an_older_warehouse_gains_the_story_token_columns(tmp_path: Path, warehouse: Path) -> None:
    import duckdb

    from lfh.landing.schema import RAW_TABLES

    older_stories = RAW_TABLES["stories"]
    for added in ("prompt_tokens integer,", "completion_tokens integer,"):
        older_stories = older_stories.replace(added, "")
    warehouse.parent.mkdir(parents=True, exist_ok=True)
    connection = duckdb.connect(str(warehouse))
    connection.execute("create schema raw")
    connection.execute(f"create table raw.stories ({older_stories})")
    connection.close()

    records = [{**record, "prompt_tokens": 7, "completion_tokens": 8} for record in story_records(1)]
    result = run_ingest(write_jsonl(tmp_path / "s.jsonl", records))

    assert result.exit_code == 0, result.output
    assert query_all(warehouse, "select prompt_tokens, completion_tokens from raw.stories") == [(7, 8)]
