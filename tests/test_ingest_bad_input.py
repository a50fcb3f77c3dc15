"""Unusable rows go to raw.rejects with file, row and reason; unreadable files fail loudly and land nothing."""

from __future__ import annotations

import json
from pathlib import Path

from fixtures_ingest import (
    STUDY_STORY_COLUMNS,
    label_records,
    query_all,
    run_ingest,
    scalar,
    story_records,
    study_rows,
    write_jsonl,
    write_xlsx,
)


def test_unusable_story_rows_are_rejected_with_reason(tmp_path: Path, warehouse: Path) -> None:
    good = story_records(3)
    no_text = {**good[0], "text": None}
    blank_text = {**good[0], "text": "   "}
    number_text = {**good[0], "text": 42}
    unknown_prompt = {**good[0], "query": "Write a poem about the sea."}
    no_model = {**good[0], "model": ""}
    path = write_jsonl(tmp_path / "s.jsonl", [*good, no_text, blank_text, number_text, unknown_prompt, no_model])
    with open(path, "a", encoding="utf-8") as handle:
        handle.write('{"model": "x", "query": \n')  # a truncated line

    result = run_ingest(path)

    assert result.exit_code == 0, result.output
    assert "9 rows read, 3 landed, 0 duplicates, 6 rejected" in result.output
    rejects = query_all(warehouse, "select source_row, target_table, reason, raw_record, source_file "
                                   "from raw.rejects order by source_row")
    assert [(row, reason) for row, _, reason, _, _ in rejects] == [
        (4, "no_text"), (5, "no_text"), (6, "text_not_string"), (7, "unknown_prompt"), (8, "no_model"),
        (9, "malformed_json")]
    assert {table for _, table, _, _, _ in rejects} == {"stories"}
    assert json.loads(rejects[2][3])["text"] == 42
    assert rejects[0][4] == str(path.resolve())

    rerun = run_ingest(path, reread=True)
    assert "6 rejected" in rerun.output
    assert scalar(warehouse, "select count(*) from raw.rejects") == 6  # rejects are not recorded twice


def test_unusable_label_rows_are_rejected_with_reason(tmp_path: Path, warehouse: Path) -> None:
    good, *_ = label_records(["s1"], samples=1)
    bad = [
        {**good, "sample_index": "first"}, {**good, "sample_index": -1}, {**good, "response_text": None},
        {**good, "response_text": {"parsed": "already"}}, {**good, "story_id": ""},
        {**good, "prompt_tokens": "many"}, {**good, "labeler_model": None},
    ]
    result = run_ingest(write_jsonl(tmp_path / "labels.jsonl", [good, *bad]))

    assert "8 rows read, 1 landed, 0 duplicates, 7 rejected" in result.output
    reasons = query_all(warehouse, "select reason from raw.rejects where target_table = 'label_responses' "
                                   "order by source_row")
    assert [reason for (reason,) in reasons] == [
        "bad_sample_index", "bad_sample_index", "no_response_text", "response_not_string", "no_story_id",
        "bad_token_count", "no_labeler_model"]


def test_corrupt_files_fail_loudly_and_other_files_still_land(tmp_path: Path, warehouse: Path) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", story_records(4))
    corrupt_parquet = tmp_path / "broken.parquet"
    corrupt_parquet.write_bytes(b"PAR1 this is not parquet")
    corrupt_xlsx = tmp_path / "broken.xlsx"
    corrupt_xlsx.write_bytes(b"PK\x03\x04 truncated zip")
    not_json = tmp_path / "notes.jsonl"
    not_json.write_text("just some text\nand more\n", encoding="utf-8")

    result = run_ingest(corrupt_parquet, good, corrupt_xlsx, not_json)

    assert result.exit_code != 0
    assert "3 of 4 files could not be read" in result.output
    for path, problem in ((corrupt_parquet, "not a readable Parquet file"), (corrupt_xlsx, "not a readable .xlsx"),
                          (not_json, "no line of this file is valid JSON")):
        assert f"{path.resolve()}: FAILED, nothing landed: {problem}" in result.output
    assert scalar(warehouse, "select count(*) from raw.stories") == 4
    assert query_all(warehouse, "select status, count(*) from raw.load_log group by all order by 1") == \
        [("failed", 3), ("loaded", 1)]


def test_wrong_columns_name_the_expected_ones(tmp_path: Path, warehouse: Path) -> None:
    wrong_jsonl = write_jsonl(tmp_path / "wrong.jsonl", [{"title": "a", "body": "b"}])
    partial_labels = write_jsonl(tmp_path / "labels.jsonl", [{"story_id": "s", "response_text": "{}"}])
    columns = [name for name in STUDY_STORY_COLUMNS if name != "LLM Response"]
    wrong_xlsx = write_xlsx(tmp_path / "ChatGPT4_Bias_Benchmark_2023-08-16.xlsx", columns,
                            [row[:5] for row in study_rows(2)])

    result = run_ingest(wrong_jsonl, partial_labels, wrong_xlsx)

    assert result.exit_code != 0
    assert "neither stories (needs ['model', 'query', 'text']" in result.output
    assert "found columns ['body', 'title']" in result.output
    assert "label responses file without columns ['labeler_model', 'prompt_version', 'sample_index']" \
        in result.output
    assert "missing columns ['LLM Response']; a study workbook needs ['Time', 'Subject', 'Object', 'Query', " \
        "'LLM Response']" in result.output
    assert scalar(warehouse, "select count(*) from raw.stories") == 0


def test_missing_file_and_unknown_extension(tmp_path: Path, warehouse: Path) -> None:
    text_file = tmp_path / "stories.txt"
    text_file.write_text("hello", encoding="utf-8")
    result = run_ingest(tmp_path / "absent.jsonl", text_file)
    assert result.exit_code != 0
    assert "absent.jsonl: FAILED, nothing landed: no such file" in result.output
    assert "stories.txt: FAILED, nothing landed: unknown file type" in result.output
