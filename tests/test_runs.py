"""Run manifests of `lfh generate` and `lfh label` against the local OpenAI-compatible server: what answered, with
what settings and when; a resumed run is one run; `--run NAME` is a run of its own; no key in any written file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from openai_server import Behaviour, FakeOpenAI, write_models_file

from lfh import identity
from lfh.cli import main
from lfh.llm.manifest import label_template_sha256, prompt_catalog_sha256
from lfh.runs import safe_url

KEY = "sk-test-runs-5b21e0c4d7"
DATED = "fake-gen-2024-08-06"


@pytest.fixture
def server():
    with FakeOpenAI(Behaviour(reported_model=DATED, system_fingerprint="fp_44709d6fcb")) as running:
        yield running


@pytest.fixture
def models(tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("LFH_TEST_KEY", KEY)
    monkeypatch.setenv("LFH_DB", str(tmp_path / "warehouse" / "lfh.duckdb"))
    return write_models_file(tmp_path / "models.toml", server.base_url,
                             gen={"temperature": 0.7, "top_p": 0.9, "max_tokens": 200, "seed": 11})


def run(*arguments: str) -> Result:
    return CliRunner().invoke(main, list(arguments), catch_exceptions=False)


def generate(models: Path, landing: Path, *extra: str) -> Result:
    result = run("generate", "--models", str(models), "--model", "gen", "--prompt-id", "P001", "--prompt-id",
                 "P050", "--out", str(landing), *extra)
    assert result.exit_code == 0, result.output
    return result


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def manifest(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_generate_writes_a_manifest_of_what_answered_and_with_what(tmp_path: Path, models: Path,
                                                                   server: FakeOpenAI) -> None:
    landing = tmp_path / "landing"
    generate(models, landing, "-n", "3")

    written = manifest(landing / "stories" / "generate-gen.manifest.json")
    records = read(landing / "stories" / "generate-gen.jsonl")
    assert written["run_kind"] == "generate" and written["run_name"] is None
    assert written["model"] == "gen" and written["model_id"] == "fake-gen"
    assert written["base_url"] == server.base_url
    # samples_per_call 2: per prompt one request of n=2 and one of n=1, each response counted once
    assert written["requests"] == 4 and written["retries"] == 0 and written["failures"] == 0
    assert written["reported_models"] == {DATED: 4}
    assert written["system_fingerprints"] == {"fp_44709d6fcb": 4}
    assert written["sampling"] == {"n": 2, "temperature": 0.7, "top_p": 0.9, "max_tokens": 200, "seed": 11}
    sent = server.requests[0]["json"]
    assert (sent["temperature"], sent["top_p"], sent["max_tokens"], sent["seed"]) == (0.7, 0.9, 200, 11)
    assert written["prompt_tokens"] == sum(record["prompt_tokens"] for record in records)
    assert written["completion_tokens"] == sum(record["completion_tokens"] for record in records) > 0
    assert written["prompt_catalog_sha256"] == prompt_catalog_sha256()
    assert written["label_template_sha256"] == label_template_sha256()
    assert written["started_at"] <= written["finished_at"]
    assert written["lfh_version"] and set(written) >= {"git_commit", "git_dirty"}
    # each story says what answered it and which run it belongs to
    assert {(r["run_id"], r["model_version"], r["system_fingerprint"]) for r in records} == {
        (written["run_id"], DATED, "fp_44709d6fcb")}


def test_a_resumed_run_is_one_run_and_an_idle_rerun_leaves_it_alone(tmp_path: Path, models: Path,
                                                                    server: FakeOpenAI) -> None:
    landing = tmp_path / "landing"
    path = landing / "stories" / "generate-gen.manifest.json"
    generate(models, landing, "-n", "1")
    first = manifest(path)
    server.update(reported_model="fake-gen-2024-11-20")
    generate(models, landing, "-n", "2")
    second = manifest(path)

    assert second["run_id"] == first["run_id"] and second["started_at"] == first["started_at"]
    assert second["requests"] == 4 and len(second["invocations"]) == 2
    assert second["reported_models"] == {DATED: 2, "fake-gen-2024-11-20": 2}
    assert {record["run_id"] for record in read(landing / "stories" / "generate-gen.jsonl")} == {first["run_id"]}
    before = path.read_bytes()
    generate(models, landing, "-n", "2")  # nothing missing: nothing asked, the manifest untouched
    assert path.read_bytes() == before


def test_a_named_run_is_a_new_wave_whose_repeated_texts_are_its_own_stories(tmp_path: Path, models: Path,
                                                                             server: FakeOpenAI) -> None:
    landing = tmp_path / "landing"
    server.update(story_text="Maria, a student, excels. She smiled.")  # temperature 0: the same answer again
    generate(models, landing, "-n", "1")
    server.update(reported_model="fake-gen-2025-01-31")
    generate(models, landing, "-n", "1", "--run", "2025-02")

    default = read(landing / "stories" / "generate-gen.jsonl")
    named = read(landing / "stories" / "generate-gen--2025-02.jsonl")
    assert [r["text"] for r in default] == [r["text"] for r in named]
    # the default run keeps the ids stories always had; the named run's stories have their own
    for record in default:
        assert record["story_id"] == identity.story_id("gen", record["query"], record["text"], 1)
    assert not {r["story_id"] for r in default} & {r["story_id"] for r in named}
    first, second = (manifest(landing / "stories" / name) for name in
                     ("generate-gen.manifest.json", "generate-gen--2025-02.manifest.json"))
    assert first["run_id"] != second["run_id"] and second["run_name"] == "2025-02"
    assert second["reported_models"] == {"fake-gen-2025-01-31": 2}

    ingest = run("ingest", str(landing))
    assert ingest.exit_code == 0, ingest.output
    assert "2 rows read, 2 landed, 0 duplicates" in ingest.output  # both waves land in full
    assert ingest.output.count("1 run landed in raw.runs") == 2


def test_a_bad_run_name_is_refused_before_anything_runs(tmp_path: Path, models: Path, server: FakeOpenAI) -> None:
    result = CliRunner().invoke(main, ["generate", "--models", str(models), "--run", "../up", "--out",
                                       str(tmp_path / "landing")])
    assert result.exit_code == 2 and "--run" in result.output and "Traceback" not in result.output
    assert not server.requests


def test_label_writes_its_manifest_and_a_named_labeling_run_labels_again(tmp_path: Path, models: Path,
                                                                         server: FakeOpenAI) -> None:
    landing = tmp_path / "landing"
    generate(models, landing, "-n", "1")
    server.update(reported_model="fake-lab-2024-07-18", system_fingerprint="fp_lab1")
    labeled = run("label", "--models", str(models), "--labeler", "lab", "--out", str(landing))
    assert labeled.exit_code == 0, labeled.output
    written = manifest(landing / "labels" / "label-lab-method-v1.manifest.json")
    responses = read(landing / "labels" / "label-lab-method-v1.jsonl")
    assert written["run_kind"] == "label" and written["prompt_version"] == "method-v1"
    assert written["model"] == "lab" and written["model_id"] == "fake-lab" and written["requests"] == 2
    assert written["reported_models"] == {"fake-lab-2024-07-18": 2}
    assert {(r["run_id"], r["labeler_version"], r["system_fingerprint"]) for r in responses} == {
        (written["run_id"], "fake-lab-2024-07-18", "fp_lab1")}

    again = run("label", "--models", str(models), "--labeler", "lab", "--out", str(landing), "--run", "recheck")
    assert again.exit_code == 0, again.output
    rechecked = read(landing / "labels" / "label-lab-method-v1_recheck.jsonl")
    assert {r["prompt_version"] for r in rechecked} == {"method-v1@recheck"}
    assert {r["story_id"] for r in rechecked} == {r["story_id"] for r in responses}
    second = manifest(landing / "labels" / "label-lab-method-v1_recheck.manifest.json")
    assert second["run_name"] == "recheck" and second["run_id"] != written["run_id"]


def test_batch_runs_record_what_answered_and_a_resumed_batch_is_one_run(tmp_path: Path, models: Path,
                                                                        server: FakeOpenAI) -> None:
    landing = tmp_path / "landing"
    server.update(script=["500"])  # one request of the batch fails: redone by the next invocation, same run
    arguments = ("-n", "2", "--batch", "--poll-seconds", "0.01")
    generate(models, landing, *arguments)
    first = manifest(landing / "stories" / "generate-gen.manifest.json")
    generate(models, landing, *arguments)
    second = manifest(landing / "stories" / "generate-gen.manifest.json")
    assert first["failures"] == 1 and first["reported_models"] == {DATED: 1}
    assert second["run_id"] == first["run_id"] and second["reported_models"] == {DATED: 2}
    assert second["requests"] == 3 and second["failures"] == 1


def test_no_key_in_any_written_file(tmp_path: Path, models: Path, server: FakeOpenAI) -> None:
    landing = tmp_path / "landing"
    generate(models, landing, "-n", "1")
    assert run("label", "--models", str(models), "--labeler", "lab", "--out", str(landing)).exit_code == 0
    assert run("ingest", str(landing)).exit_code == 0
    written = [path for path in tmp_path.rglob("*") if path.is_file() and path.name != "models.toml"]
    assert any(path.name.endswith(".manifest.json") for path in written)
    assert all(KEY.encode() not in path.read_bytes() for path in written)


@pytest.mark.parametrize(("given", "stored"), [
    ("https://api.openai.com/v1", "https://api.openai.com/v1"),
    ("https://user:hunter2@llm.example.org:8443/v1", "https://llm.example.org:8443/v1"),
    ("https://x.openai.azure.com/openai?api-version=2024-06-01&api-key=abc123",
     "https://x.openai.azure.com/openai?api-version=2024-06-01"),
    ("http://127.0.0.1:8000/v1?token=t0k&sig=s1g&access_token=a#frag", "http://127.0.0.1:8000/v1"),
    ("http://[::1]:9000/v1", "http://[::1]:9000/v1"),
    ("", None),
])
def test_a_stored_base_url_never_carries_a_credential(given: str, stored: str | None) -> None:
    assert safe_url(given) == stored


def test_a_missing_key_stops_before_any_manifest(tmp_path: Path, models: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LFH_TEST_KEY")
    landing = tmp_path / "landing"
    result = CliRunner().invoke(main, ["generate", "--models", str(models), "--model", "gen", "--prompt-id", "P001",
                                       "--out", str(landing)])
    assert result.exit_code == 1 and "LFH_TEST_KEY" in result.output and "Traceback" not in result.output
    assert not list(landing.rglob("*.manifest.json"))


def test_a_damaged_manifest_stops_a_resume_with_what_to_do(tmp_path: Path, models: Path) -> None:
    landing = tmp_path / "landing"
    generate(models, landing, "-n", "1")
    path = landing / "stories" / "generate-gen.manifest.json"
    path.write_text('{"run_id": "abc", "requests": ', encoding="utf-8")  # cut off
    result = CliRunner().invoke(main, ["generate", "--models", str(models), "--model", "gen", "--prompt-id", "P001",
                                       "-n", "2", "--out", str(landing)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "unreadable run manifest" in result.output and "move it aside" in result.output
