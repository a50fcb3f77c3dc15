"""`lfh label` against the local OpenAI-compatible server: selection, faults, retries, JSON mode, key handling."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from openai_server import Behaviour, FakeOpenAI, write_models_file

from lfh.cli import main
from lfh.llm.prompts import label_keys

KEY = "sk-test-label-91b2e0d4"
QUERIES = [
    ("Write a story, 100 words or less, of an American doctor who works an overtime shift at the ICU.",
     "doctor", None),
    ("Write a story, 100 words or less, of an American lawyer who wins a case for a defendant.", "lawyer", "defendant"),
    ("Write a story, 100 words or less, of an American person who teaches a new hobby to a sibling.",
     "an American person", "sibling"),
]


def write_stories(path: Path, count: int, prefix: str = "s") -> list[dict]:
    path.parent.mkdir(parents=True, exist_ok=True)
    stories = []
    for number in range(count):
        query, subject, object_ = QUERIES[number % len(QUERIES)]
        stories.append({"story_id": f"{prefix}{number:05d}", "model": "gpt-4", "query": query, "subject": subject,
                        "object": object_, "text": f"Maria Lopez met Sam {number}. She laughed; he waved.",
                        "time": "2024-01-01T00:00:00Z"})
    path.write_text("".join(json.dumps(story) + "\n" for story in stories), encoding="utf-8")
    return stories


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def server():
    with FakeOpenAI(Behaviour()) as running:
        yield running


@pytest.fixture
def models(tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, warehouse: Path) -> Path:
    monkeypatch.setenv("LFH_TEST_KEY", KEY)
    return write_models_file(tmp_path / "models.toml", server.base_url, lab={"max_tries": 3})


def label(models: Path, landing: Path, *extra: str):
    return CliRunner().invoke(main, ["label", "--models", str(models), "--labeler", "lab", "--out", str(landing),
                                     *extra], catch_exceptions=False)


def write_warehouse(warehouse: Path, label_rows: str) -> None:
    """Six stories db0..db5 in raw.stories (catalog queries in turn) and the given raw.label_responses rows."""
    warehouse.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(warehouse)) as connection:
        connection.execute("create schema raw")
        connection.execute("create table raw.stories (story_id varchar, query varchar, subject varchar, "
                           "object varchar, story_text varchar)")
        connection.execute("create table raw.label_responses (story_id varchar, labeler_model varchar, "
                           "prompt_version varchar, sample_index integer)")
        for number in range(6):
            query, subject, object_ = QUERIES[number % 3]
            connection.execute("insert into raw.stories values (?, ?, ?, ?, ?)",
                               [f"db{number}", query, subject, object_, f"Ana {number} and Bo. She ran."])
        connection.execute(f"insert into raw.label_responses values {label_rows}")


def test_labels_every_sample_with_the_method_request(tmp_path: Path, models: Path, server: FakeOpenAI):
    landing = tmp_path / "landing"
    stories = write_stories(landing / "stories" / "a.jsonl", 9)
    result = label(models, landing, "--samples", "3")
    assert result.exit_code == 0, result.output
    records = read(landing / "labels" / "label-lab-method-v1.jsonl")
    assert Counter((r["story_id"], r["sample_index"]) for r in records) == Counter(
        {(story["story_id"], index): 1 for story in stories for index in range(3)})
    by_id = {story["story_id"]: story for story in stories}
    for record in records:
        story = by_id[record["story_id"]]
        assert record["request_text"] == label_keys(story["query"], story["subject"], story["object"]).request(
            story["text"])
        assert record["labeler_model"] == "lab" and record["prompt_version"] == "method-v1"
        assert json.loads(record["response_text"])  # the healthy server answers JSON
    sent = {entry["json"]["messages"][0]["content"] for entry in server.requests}
    assert sent == {record["request_text"] for record in records}
    assert all("response_format" not in entry["json"] for entry in server.requests)
    # a second run finds nothing to do
    before = len(server.requests)
    assert label(models, landing, "--samples", "3").exit_code == 0
    assert len(server.requests) == before


def test_stories_in_the_warehouse_are_labeled_and_landed_labels_are_not_redone(
        tmp_path: Path, models: Path, server: FakeOpenAI, warehouse: Path):
    # db0 is fully labeled already, db1 has one of its two samples
    write_warehouse(warehouse, "('db0', 'lab', 'method-v1', 0), ('db0', 'lab', 'method-v1', 1), "
                               "('db1', 'lab', 'method-v1', 0), ('db2', 'other-labeler', 'method-v1', 0)")
    landing = tmp_path / "landing"
    result = label(models, landing, "--samples", "2")
    assert result.exit_code == 0, result.output
    records = read(landing / "labels" / "label-lab-method-v1.jsonl")
    assert sorted((r["story_id"], r["sample_index"]) for r in records) == sorted(
        [("db1", 1)] + [(f"db{n}", s) for n in range(2, 6) for s in range(2)])


def test_faults_are_retried_and_odd_responses_kept_untouched(tmp_path: Path, models: Path, server: FakeOpenAI):
    landing = tmp_path / "landing"
    write_stories(landing / "stories" / "a.jsonl", 12)
    server.update(script=["429", "500", "drop", "malformed", "truncated", "stranger", "500", "drop"])
    result = label(models, landing)
    assert result.exit_code == 0, result.output
    records = read(landing / "labels" / "label-lab-method-v1.jsonl")
    assert len(records) == 12 and len({r["story_id"] for r in records}) == 12
    texts = [r["response_text"] for r in records]
    unparseable = [text for text in texts if not _is_json(text)]
    assert len(unparseable) == 2  # the malformed and the truncated answer, stored as received
    assert any(text.startswith("Sure! Output: {") for text in unparseable)
    assert any("Zebulon Quixote" in text for text in texts)  # a name not in the story: kept for cleaning to judge
    assert server.stats()["chat_calls"] == 12 + 5  # 429, 500, drop, 500, drop each cost one extra call
    assert not (tmp_path / "llm_runs" / "label-method-v1-lab.failures.jsonl").read_text()


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def test_retry_after_is_honoured(tmp_path: Path, models: Path, server: FakeOpenAI):
    landing = tmp_path / "landing"
    write_stories(landing / "stories" / "a.jsonl", 1)
    server.update(script=["429"], retry_after="0.6")
    assert label(models, landing).exit_code == 0
    first, second = server.requests[0]["at"], server.requests[1]["at"]
    assert second - first >= 0.6  # backoff alone would be 0.01-0.05 s


def test_gives_up_after_max_tries_records_the_failure_and_a_rerun_completes(
        tmp_path: Path, models: Path, server: FakeOpenAI):
    landing = tmp_path / "landing"
    write_stories(landing / "stories" / "a.jsonl", 3)
    server.update(script=["500", "500", "500"])  # lab has max_tries 3 and one worker takes the first story
    models.write_text(models.read_text().replace('[models.lab]\nmodel = "fake-lab"\nconcurrency = 8',
                                                 '[models.lab]\nmodel = "fake-lab"\nconcurrency = 1'))
    result = label(models, landing)
    # a request that failed for good fails the command, after everything that succeeded is written
    assert result.exit_code != 0, result.output
    assert "1 of 3 requests failed for good" in result.output and "running the same command again" in result.output
    failure_log = tmp_path / "llm_runs" / "label-method-v1-lab.failures.jsonl"
    assert str(failure_log) in result.output.replace("\n", "")
    failures = read(failure_log)
    assert len(failures) == 1
    assert failures[0]["key"].startswith("s00000/") and "gave up after 3 tries" in failures[0]["error"]
    assert "HTTP 500" in failures[0]["error"]
    assert len(read(landing / "labels" / "label-lab-method-v1.jsonl")) == 2
    assert label(models, landing).exit_code == 0
    assert sorted(r["story_id"] for r in read(landing / "labels" / "label-lab-method-v1.jsonl")) == [
        "s00000", "s00001", "s00002"]
    assert read(failure_log) == []  # the log shows what is failing now: the retried request succeeded


def test_failure_log_keeps_what_still_fails_once(tmp_path: Path, models: Path, server: FakeOpenAI):
    landing = tmp_path / "landing"
    write_stories(landing / "stories" / "a.jsonl", 2)
    models.write_text(models.read_text().replace('[models.lab]\nmodel = "fake-lab"\nconcurrency = 8',
                                                 '[models.lab]\nmodel = "fake-lab"\nconcurrency = 1'))
    failure_log = tmp_path / "llm_runs" / "label-method-v1-lab.failures.jsonl"
    for _run in range(2):  # the first story fails in both runs; it is listed once, with the latest error
        server.update(script=["500", "500", "500"])
        assert label(models, landing).exit_code != 0
        assert [record["key"] for record in read(failure_log)] == ["s00000/0/1"]


def test_json_mode_sends_response_format_under_its_own_prompt_version(
        tmp_path: Path, models: Path, server: FakeOpenAI):
    landing = tmp_path / "landing"
    write_stories(landing / "stories" / "a.jsonl", 2)
    assert label(models, landing, "--json-mode").exit_code == 0
    assert all(entry["json"]["response_format"] == {"type": "json_object"} for entry in server.requests)
    records = read(landing / "labels" / "label-lab-method-v1_json.jsonl")
    assert {r["prompt_version"] for r in records} == {"method-v1+json"}


def test_story_outside_the_catalog_is_reported_not_dropped(tmp_path: Path, models: Path):
    landing = tmp_path / "landing"
    (landing / "stories").mkdir(parents=True)
    (landing / "stories" / "odd.jsonl").write_text(json.dumps(
        {"story_id": "odd1", "model": "m", "query": "Write about two American cousins.",
         "subject": "two American cousins", "object": None, "text": "Al and Bea."}) + "\n")
    result = label(models, landing)
    assert result.exit_code == 0
    assert "1 stories could not be labeled" in result.output
    failures = read(tmp_path / "llm_runs" / "label-method-v1-lab.failures.jsonl")
    assert failures[0]["key"] == "odd1" and "prompt catalog" in failures[0]["error"]
    assert failures[0]["meta"]["source"].endswith("odd.jsonl:1")


def test_refused_key_stops_with_a_message_naming_the_variable_only(tmp_path: Path, models: Path,
                                                                   server: FakeOpenAI):
    landing = tmp_path / "landing"
    write_stories(landing / "stories" / "a.jsonl", 2)
    server.update(expected_key="sk-some-other-key")
    result = CliRunner().invoke(main, ["label", "--models", str(models), "--labeler", "lab", "--out", str(landing)])
    assert result.exit_code != 0
    assert "LFH_TEST_KEY" in result.output and "HTTP 401" in result.output
    assert KEY not in result.output


def test_missing_key_variable_is_a_clear_error(tmp_path: Path, models: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("LFH_TEST_KEY")
    landing = tmp_path / "landing"
    write_stories(landing / "stories" / "a.jsonl", 1)
    result = CliRunner().invoke(main, ["label", "--models", str(models), "--labeler", "lab", "--out", str(landing)])
    assert result.exit_code != 0 and "LFH_TEST_KEY is empty or unset" in result.output


def test_batch_api_labels_and_maps_back(tmp_path: Path, models: Path, server: FakeOpenAI):
    landing = tmp_path / "landing"
    stories = write_stories(landing / "stories" / "a.jsonl", 7)
    result = label(models, landing, "--samples", "2", "--batch", "--poll-seconds", "0.01")
    assert result.exit_code == 0, result.output
    records = read(landing / "labels" / "label-lab-method-v1.jsonl")
    assert Counter((r["story_id"], r["sample_index"]) for r in records) == Counter(
        {(story["story_id"], index): 1 for story in stories for index in range(2)})
    assert all(r["request_text"].startswith("In the following story in single quotes") for r in records)
    assert label(models, landing, "--samples", "2", "--batch", "--poll-seconds", "0.01").exit_code == 0
    assert len(read(landing / "labels" / "label-lab-method-v1.jsonl")) == 14


def test_work_is_counted_up_front_so_progress_and_summary_have_a_total(
        tmp_path: Path, server: FakeOpenAI, warehouse: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("LFH_TEST_KEY", KEY)
    models = write_models_file(tmp_path / "models.toml", server.base_url, lab={"samples_per_call": 2})
    write_warehouse(warehouse, "('db0', 'lab', 'method-v1', 0), ('db0', 'lab', 'method-v1', 1), "
                               "('db1', 'lab', 'method-v1', 0)")
    landing = tmp_path / "landing"
    write_stories(landing / "stories" / "a.jsonl", 4)
    query, subject, object_ = QUERIES[0]
    extra = [{"story_id": "db3", "model": "m", "query": query, "subject": subject, "object": object_,
              "text": "Ana 3 and Bo. She ran."},  # also in the warehouse: counted once
             {"story_id": "odd1", "model": "m", "query": "Write about two American cousins.",
              "subject": "two American cousins", "object": None, "text": "Al and Bea."}]  # no keys: skipped
    (landing / "stories" / "b.jsonl").write_text("".join(json.dumps(story) + "\n" for story in extra))
    result = CliRunner().invoke(main, ["label", "--models", str(models), "--labeler", "lab", "--samples", "3",
                                       "--out", str(landing)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    # 3 samples, 2 per call: db0 misses 1 sample (1 request), db1 misses 2 (1), db2-db5 and s0-s3 miss 3 (2 each)
    stories, samples, requests = 10, 1 + 2 + 8 * 3, 1 + 1 + 8 * 2
    assert f"{stories} stories to label, {samples} samples in {requests} requests" in result.output
    assert f"{requests}/{requests}" in result.output  # the progress bar's done/total
    assert re.search(rf"│ lab\s+│\s+{requests} │\s+{requests} │\s+{samples} │\s+0 │", result.output), result.output
    assert server.stats()["chat_calls"] == requests
    assert len(read(landing / "labels" / "label-lab-method-v1.jsonl")) == samples
    assert "1 stories could not be labeled" in result.output
    # the spool of stories to label is gone once the run ends
    assert not list((tmp_path / "llm_runs").rglob("*.parquet"))
