"""`lfh generate` against the local OpenAI-compatible server."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from openai_server import Behaviour, FakeOpenAI, write_models_file

from lfh import identity
from lfh.cli import main
from lfh.llm.prompts import catalog

KEY = "sk-test-generate-7f3a9c"


@pytest.fixture
def server():
    with FakeOpenAI(Behaviour()) as running:
        yield running


@pytest.fixture
def models(tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("LFH_TEST_KEY", KEY)
    return write_models_file(tmp_path / "models.toml", server.base_url)


def run(*arguments: str):
    result = CliRunner().invoke(main, list(arguments), catch_exceptions=False)
    return result


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_generates_n_stories_per_prompt_with_the_catalog_text(tmp_path: Path, models: Path, server: FakeOpenAI):
    landing = tmp_path / "landing"
    result = run("generate", "--models", str(models), "--model", "gen", "-n", "3", "--domain", "love",
                 "--out", str(landing))
    assert result.exit_code == 0, result.output
    records = read(landing / "stories" / "generate-gen.jsonl")
    love = {prompt.prompt_id: prompt for prompt in catalog() if prompt.domain == "love"}
    assert len(records) == 40 * 3
    assert Counter((r["prompt_id"], r["story_index"]) for r in records) == Counter(
        {(pid, index): 1 for pid in love for index in range(3)})
    for record in records:
        prompt = love[record["prompt_id"]]
        assert record["query"] == prompt.query
        assert record["object"] == prompt.object and record["subject"] == prompt.subject
        assert record["story_id"] == identity.story_id("gen", prompt.query, record["text"], record["story_index"] + 1)
        assert isinstance(record["prompt_tokens"], int) and isinstance(record["completion_tokens"], int)
    # the prompt goes out exactly as catalogued, as the only message; samples_per_call=2 asks n=2 then n=1
    sent = [entry["json"] for entry in server.requests]
    assert {body["messages"][0]["content"] for body in sent} == {prompt.query for prompt in love.values()}
    assert all(len(body["messages"]) == 1 for body in sent)
    assert Counter(body.get("n", 1) for body in sent) == Counter({2: 40, 1: 40})
    # usage: one charge per HTTP call, so the stored sum equals what the server reported
    assert sum(r["completion_tokens"] for r in records) > 0
    assert sum(r["prompt_tokens"] for r in records) == sum(
        len(body["messages"][0]["content"]) // 4 + 1 for body in sent)


def test_rerun_asks_only_for_missing_stories(tmp_path: Path, models: Path, server: FakeOpenAI):
    landing = tmp_path / "landing"
    assert run("generate", "--models", str(models), "--model", "gen", "-n", "2", "--prompt-id", "P001",
               "--prompt-id", "P050", "--out", str(landing)).exit_code == 0
    first = len(server.requests)
    assert run("generate", "--models", str(models), "--model", "gen", "-n", "2", "--prompt-id", "P001",
               "--prompt-id", "P050", "--out", str(landing)).exit_code == 0
    assert len(server.requests) == first  # nothing missing, nothing asked
    assert run("generate", "--models", str(models), "--model", "gen", "-n", "3", "--prompt-id", "P001",
               "--prompt-id", "P050", "--out", str(landing)).exit_code == 0
    records = read(landing / "stories" / "generate-gen.jsonl")
    assert sorted((r["prompt_id"], r["story_index"]) for r in records) == [
        (pid, index) for pid in ("P001", "P050") for index in range(3)]
    assert len(server.requests) == first + 2


def test_endpoint_ignoring_n_still_yields_every_sample(tmp_path: Path, models: Path, server: FakeOpenAI):
    server.update(honour_n=False)
    landing = tmp_path / "landing"
    assert run("generate", "--models", str(models), "--model", "gen", "-n", "4", "--prompt-id", "P010",
               "--out", str(landing)).exit_code == 0
    records = read(landing / "stories" / "generate-gen.jsonl")
    assert sorted(r["story_index"] for r in records) == [0, 1, 2, 3]


def test_unknown_prompt_id_is_a_clear_error(models: Path, tmp_path: Path):
    result = CliRunner().invoke(main, ["generate", "--models", str(models), "--prompt-id", "P999",
                                       "--out", str(tmp_path / "landing")])
    assert result.exit_code != 0 and "P999" in result.output


def test_batch_api_generate_is_resumable_and_never_duplicates(tmp_path: Path, models: Path, server: FakeOpenAI):
    landing = tmp_path / "landing"
    server.update(script=["500"] * 3)  # three requests of the batch fail: recorded, then redone by the next run
    arguments = ["generate", "--models", str(models), "--model", "gen", "-n", "2", "--domain", "learning",
                 "--out", str(landing), "--batch", "--poll-seconds", "0.01"]
    assert run(*arguments).exit_code == 0
    stored = read(landing / "stories" / "generate-gen.jsonl")
    assert len(stored) == 60 - 3 * 2
    failures = read(tmp_path / "llm_runs" / "generate-gen.failures.jsonl")
    assert len(failures) == 3 and all("batch" in failure["error"] for failure in failures)
    assert run(*arguments).exit_code == 0
    stored = read(landing / "stories" / "generate-gen.jsonl")
    assert Counter((r["prompt_id"], r["story_index"]) for r in stored) == Counter(
        {(p.prompt_id, i): 1 for p in catalog() if p.domain == "learning" for i in range(2)})
    state = json.loads((tmp_path / "llm_runs" / "batch-generate-gen" / "state.json").read_text())
    assert [entry["mapped"] for entry in state["batches"]] == [True, True]
