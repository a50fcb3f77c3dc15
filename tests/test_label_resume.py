"""Resume after kill -9, the API key never leaking, and the labeled output landing through `lfh ingest`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import duckdb
import pytest
from openai_server import Behaviour, FakeOpenAI, write_models_file
from test_label_run import write_stories

from lfh.llm.prompts import keys_from_request
from lfh.paths import project_root

KEY = "sk-leakcheck-5d1e77aa90"
LFH = str(Path(sys.executable).parent / "lfh")


def lfh(*arguments: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([LFH, *arguments], env=env, capture_output=True, text=True, timeout=120)


def count_lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


@pytest.fixture
def environment(warehouse: Path) -> dict[str, str]:
    return {**os.environ, "LFH_TEST_KEY": KEY, "LFH_DB": str(warehouse)}


@pytest.mark.slow
@pytest.mark.parametrize("command", ["label", "generate"])
def test_kill_9_mid_run_then_resume_loses_nothing_and_stores_nothing_twice(tmp_path, environment, command):
    landing = tmp_path / "landing"
    with FakeOpenAI(Behaviour(latency=0.01, record=False)) as server:
        models = write_models_file(tmp_path / "models.toml", server.base_url,
                                   gen={"concurrency": 8, "samples_per_call": 1}, lab={"concurrency": 8})
        if command == "label":
            stories = write_stories(landing / "stories" / "s.jsonl", 300)
            arguments = ["label", "--models", str(models), "--labeler", "lab", "--samples", "2"]
            output = landing / "labels" / "label-lab-method-v1.jsonl"
            expected = Counter({(story["story_id"], index): 1 for story in stories for index in range(2)})

            def key(record):
                return record["story_id"], record["sample_index"]
        else:
            arguments = ["generate", "--models", str(models), "--model", "gen", "-n", "6"]
            output = landing / "stories" / "generate-gen.jsonl"
            expected = Counter({(f"P{number:03d}", index): 1 for number in range(1, 101) for index in range(6)})

            def key(record):
                return record["prompt_id"], record["story_index"]
        arguments += ["--out", str(landing)]
        process = subprocess.Popen([LFH, *arguments], env=environment, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while count_lines(output) < 150 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.005)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        kept = count_lines(output)
        assert 150 <= kept < 600, "the kill should land mid-run"
        calls_before = server.stats()["chat_calls"]
        with open(output, "a", encoding="utf-8") as handle:  # what a kill during a write leaves behind
            handle.write('{"story_id": "torn", "sample_ind')
        result = lfh(*arguments, env=environment)
        assert result.returncode == 0, result.stderr
        records = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]
        assert Counter(key(record) for record in records) == expected  # all there, each once, torn line gone
        # the resumed run asked only for what was not stored
        assert server.stats()["chat_calls"] - calls_before == 600 - kept
        # and it is the same run: one run id on every record, one manifest counting both invocations' requests
        manifest = json.loads(output.with_name(output.stem + ".manifest.json").read_text(encoding="utf-8"))
        assert {record["run_id"] for record in records} == {manifest["run_id"]}
        assert len(manifest["invocations"]) == 2 and manifest["finished_at"] is not None
        assert manifest["requests"] == manifest["invocations"][0]["requests"] + 600 - kept


@pytest.mark.slow
def test_key_never_leaks_and_labels_land_through_ingest(tmp_path, environment, warehouse):
    landing = tmp_path / "landing"
    outputs = []
    with FakeOpenAI(Behaviour(rate_429=0.1, rate_500=0.1, rate_drop=0.05, rate_malformed=0.1, seed=3)) as server:
        models = write_models_file(tmp_path / "models.toml", server.base_url, lab={"max_tries": 2})
        outputs.append(lfh("generate", "--models", str(models), "--model", "gen", "-n", "2", "--domain", "labor",
                           "--out", str(landing), env=environment))
        outputs.append(lfh("label", "--models", str(models), "--labeler", "lab", "--samples", "2",
                           "--out", str(landing), env=environment))
        outputs.append(lfh("label", "--models", str(models), "--labeler", "lab", "--samples", "2", "--batch",
                           "--poll-seconds", "0.01", "--prompt-version", "batch-v1", "--out", str(landing),
                           env=environment))
        server.update(expected_key="sk-other")
        outputs.append(lfh("label", "--models", str(models), "--labeler", "lab", "--samples", "3",
                           "--out", str(landing), env=environment))
        assert outputs[-1].returncode != 0 and "LFH_TEST_KEY" in outputs[-1].stderr
        # the key did travel where it belongs: the Authorization header
        assert server.requests[0]["authorization"] == f"Bearer {KEY}"
    assert outputs[0].returncode == 0, outputs[0].stderr[-2000:]
    for result in outputs[1:3]:  # a request given up on fails the command (after everything else is stored)
        assert result.returncode == 0 or "failed for good" in result.stderr, result.stderr[-2000:]
    ingest = lfh("ingest", str(landing), env=environment)
    assert ingest.returncode == 0, ingest.stdout + ingest.stderr
    outputs.append(ingest)
    for result in outputs:
        assert KEY not in result.stdout and KEY not in result.stderr
    written = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert any(path.suffix == ".duckdb" for path in written)
    for path in written:
        assert KEY.encode() not in path.read_bytes(), f"key found in {path}"

    stories = [json.loads(line) for line in (landing / "stories" / "generate-gen.jsonl").read_text().splitlines()]
    labels = [json.loads(line) for path in (landing / "labels").glob("*.jsonl")
              for line in path.read_text().splitlines()]
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        landed_stories = connection.execute("select count(*) from raw.stories").fetchone()[0]
        landed = connection.execute(
            "select count(*), count(distinct response_id), sum(prompt_tokens), count(request_text) "
            "from raw.label_responses").fetchone()
        orphans = connection.execute("select count(*) from raw.label_responses r anti join raw.stories s "
                                     "using (story_id)").fetchone()[0]
    failed = sum(count_lines(path) for path in (tmp_path / "llm_runs").glob("label-*.failures.jsonl"))
    assert landed_stories == len(stories) > 50
    # every (story, sample, prompt version) is either landed once or recorded as given up
    assert landed[0] == landed[1] == len(labels) == len(stories) * 2 * 2 - failed
    assert landed[2] == sum(label["prompt_tokens"] for label in labels) and landed[3] == len(labels)
    assert orphans == 0
    if (project_root() / "models" / "staging" / "stg_label_responses.sql").exists():
        # what this test reads is dim_stories: its models and their data tests are enough
        build = lfh("build", "--select", "+dim_stories", env=environment)
        assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
        with duckdb.connect(str(warehouse), read_only=True) as connection:
            marts = connection.execute(
                "select story_id, labeler_model, prompt_version, samples_received, valid_responses, is_labeled, "
                "labeling_failure from marts.dim_stories").fetchall()
            loaded_at = {(labeler, version): at for labeler, version, at in connection.execute(
                "select labeler_model, prompt_version, max(loaded_at) from raw.label_responses group by all"
            ).fetchall()}
        # Each story is judged on one labeling run: the one loaded last, ties by labeler then prompt version
        # (labeling_prompt_version unset). A response is valid when it is JSON with every key its request asked
        # for (the server's malformed answers never close their brace, so nothing is recoverable from them), and
        # a story is labeled when one response of its run is valid; its other runs do not count.
        received = Counter((label["story_id"], label["labeler_model"], label["prompt_version"]) for label in labels)
        valid = Counter((label["story_id"], label["labeler_model"], label["prompt_version"])
                        for label in labels if _answers_request(label))
        runs_of: dict[str, set[tuple[str, str]]] = {}
        for story_id, labeler, version in received:
            runs_of.setdefault(story_id, set()).add((labeler, version))
        selected = {story_id: min(runs, key=lambda run: (-loaded_at[run].timestamp(), run))
                    for story_id, runs in runs_of.items()}
        expected_labeled = sum(valid[(story_id, *run)] > 0 for story_id, run in selected.items())
        expected_failures = len(selected) - expected_labeled
        assert len(marts) == len(stories) and expected_labeled > 0
        assert sum(row[5] for row in marts) == expected_labeled
        assert sum(row[6] for row in marts) == expected_failures
        for story_id, labeler, version, samples_received, valid_responses, is_labeled, failure in marts:
            run = selected.get(story_id)
            if run is None:
                assert (samples_received, is_labeled, failure) == (0, False, False), story_id
                continue
            assert (labeler, version) == run, story_id
            key = (story_id, *run)
            assert (samples_received, valid_responses, is_labeled) == (received[key], valid[key], valid[key] > 0)


def _answers_request(label: dict) -> bool:
    try:
        answer = json.loads(label["response_text"])
    except ValueError:
        return False
    keys = keys_from_request(label["request_text"])
    wanted = [f"{keys.subject_key} name", f"{keys.subject_key} references"]
    if keys.object_key:
        wanted += [f"{keys.object_key} name", f"{keys.object_key} references"]
    return isinstance(answer, dict) and all(key in answer for key in wanted) and all(
        isinstance(answer[key], list | None) for key in wanted if key.endswith(" references"))


@pytest.mark.slow
def test_kill_9_while_the_batch_is_being_created_then_resume_creates_no_second_batch(tmp_path, environment):
    """The provider has made the batch but not answered yet when the run is killed: the next run finds that
    batch (by the uploaded file's id, saved before the create call) and creates none, so nothing is paid twice."""
    landing = tmp_path / "landing"
    stories = write_stories(landing / "stories" / "s.jsonl", 5)
    arguments = ["label", "--models", None, "--labeler", "lab", "--batch", "--poll-seconds", "0.05",
                 "--out", str(landing)]
    with FakeOpenAI(Behaviour(batch_create_delay=30.0)) as server:
        arguments[2] = str(write_models_file(tmp_path / "models.toml", server.base_url))
        process = subprocess.Popen([LFH, *arguments], env=environment, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while not server.batches and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.01)
        assert len(server.batches) == 1, "the batch should be created while the run waits for the answer"
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        server.update(batch_create_delay=0.0)
        result = lfh(*arguments, env=environment)
        assert result.returncode == 0, result.stderr
        assert "found batch" in result.stderr
        assert len(server.batches) == 1, "a second batch was created: both would run and be billed"
        uploads = [entry for entry in server.requests if entry.get("path") == "/v1/files"]
        assert len(uploads) == 1, "the input file was uploaded again"
        created = next(iter(server.batches.values()))
        assert created["metadata"] and created["metadata"].get("lfh_batch_tag", "").startswith("lfh-")
    records = [json.loads(line) for line in (landing / "labels" / "label-lab-method-v1.jsonl").read_text(
        encoding="utf-8").splitlines()]
    assert Counter(record["story_id"] for record in records) == Counter(story["story_id"] for story in stories)
