"""`lfh ingest` and runs: manifests land in raw.runs (append-only, never twice), a bad manifest is rejected naming
its file and field, rows carry their run, and files without a manifest get a run per model and file."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from fixtures_ingest import (
    STUDY_STORY_COLUMNS,
    label_records,
    query_all,
    run_ingest,
    story_records,
    study_rows,
    write_jsonl,
    write_xlsx,
)

from lfh.cli.ingest import ingest
from lfh.landing.ingest_file import file_sha256

RUN_ID = "4f1d0c2e9b7a4e5c8d3f2a1b0c9d8e7f"


def manifest_document(**changes: object) -> dict:
    document = {
        "manifest_version": 1, "run_id": RUN_ID, "run_kind": "generate", "run_name": None, "model": "gpt-4o",
        "model_id": "gpt-4o", "base_url": "https://api.openai.com/v1",
        "reported_models": {"gpt-4o-2024-08-06": 30}, "system_fingerprints": {"fp_1": 29, "fp_2": 1},
        "sampling": {"n": 1, "temperature": 1.0, "max_tokens": 300}, "prompt_catalog_sha256": "a" * 64,
        "label_template_sha256": "b" * 64, "lfh_version": "0.1.0", "git_commit": "c" * 40, "git_dirty": False,
        "started_at": "2025-06-01T10:00:00.000Z", "finished_at": "2025-06-01T10:05:00.000Z", "requests": 31,
        "retries": 1, "failures": 0, "prompt_tokens": 900, "completion_tokens": 4000, "is_simulated": False,
    }
    document.update(changes)
    return document


def write_manifest(path: Path, document: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


RUN_COLUMNS = ("run_id, run_kind, model, model_canonical, base_url, reported_models, system_fingerprints, sampling, "
               "started_at, finished_at, requests, retries, prompt_tokens, is_simulated, is_synthesized")


def test_a_manifest_lands_once_and_a_resumed_run_adds_a_row_of_the_same_run(tmp_path: Path, warehouse: Path) -> None:
    path = write_manifest(tmp_path / "landing" / "stories" / "generate-gpt-4o.manifest.json", manifest_document())

    first = run_ingest(path)
    again = run_ingest(path)
    reread = run_ingest(path, reread=True)

    assert first.exit_code == 0 and "run manifest, 1 run landed in raw.runs" in first.output
    assert "unchanged since its load" in again.output
    assert "already in raw.runs (duplicate)" in reread.output
    rows = query_all(warehouse, f"select {RUN_COLUMNS} from raw.runs")
    assert len(rows) == 1
    row = dict(zip(RUN_COLUMNS.split(", "), rows[0], strict=True))
    assert row["run_kind"] == "generate" and row["model_canonical"] == "gpt-4o"
    assert json.loads(row["reported_models"]) == {"gpt-4o-2024-08-06": 30}
    assert json.loads(row["system_fingerprints"]) == {"fp_1": 29, "fp_2": 1}
    assert json.loads(row["sampling"]) == {"n": 1, "temperature": 1.0, "max_tokens": 300}
    assert str(row["started_at"]) == "2025-06-01 10:00:00" and row["requests"] == 31
    assert row["is_simulated"] is False and row["is_synthesized"] is False

    write_manifest(path, manifest_document(requests=40, finished_at="2025-06-02T09:00:00Z"))  # resumed
    assert run_ingest(path).exit_code == 0
    assert query_all(warehouse, "select run_id, requests from raw.runs order by loaded_at") == [
        (RUN_ID, 31), (RUN_ID, 40)]
    assert query_all(warehouse, "select runs_landed from raw.load_log order by started_at") == [(1,), (0,), (1,)]


@pytest.mark.parametrize(("document", "field"), [
    ("not json at all", "(file)"),
    ([1, 2], "(top level)"),
    (manifest_document(manifest_version=7), "manifest_version"),
    (manifest_document(run_id=""), "run_id"),
    (manifest_document(run_kind="guess"), "run_kind"),
    (manifest_document(started_at="yesterday"), "started_at"),
    (manifest_document(requests=-1), "requests"),
    (manifest_document(reported_models=["gpt-4o"]), "reported_models"),
    (manifest_document(git_dirty="yes"), "git_dirty"),
    (manifest_document(model=12), "model"),
])
def test_a_bad_manifest_is_rejected_naming_file_and_field(tmp_path: Path, warehouse: Path, document: object,
                                                          field: str) -> None:
    path = tmp_path / "bad.manifest.json"
    if isinstance(document, str):
        path.write_text(document, encoding="utf-8")
    else:
        write_manifest(path, document)

    result = run_ingest(path)

    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output and "rejected" in result.output
    assert query_all(warehouse, "select count(*) from raw.runs") == [(0,)]
    (reason, detail, target), = query_all(warehouse, "select reason, detail, target_table from raw.rejects")
    assert (reason, target) == ("bad_manifest", "runs")
    assert str(path) in detail and f"field {field}:" in detail


def test_credentials_in_a_manifest_url_are_never_stored(tmp_path: Path, warehouse: Path) -> None:
    secret_url = "https://me:s3cr3t-pass@llm.example.org/v1?api-key=s3cr3t-key&deployment=a"
    good = write_manifest(tmp_path / "a.manifest.json", manifest_document(
        base_url=secret_url, invocations=[{"started_at": "2025-06-01T10:00:00Z", "base_url": secret_url}]))
    bad = write_manifest(tmp_path / "b.manifest.json", manifest_document(base_url=secret_url, run_id=None,
                                                                          requests="x"))
    assert run_ingest(good, bad).exit_code == 0

    assert query_all(warehouse, "select base_url from raw.runs") == [("https://llm.example.org/v1?deployment=a",)]
    connection = duckdb.connect(str(warehouse), read_only=True)
    try:
        stored = json.dumps(connection.execute("select * from raw.runs").fetchall(), default=str) + json.dumps(
            connection.execute("select * from raw.rejects").fetchall(), default=str)
    finally:
        connection.close()
    assert "s3cr3t" not in stored


def test_rows_keep_their_run_and_rows_without_one_get_their_files_run(tmp_path: Path, warehouse: Path) -> None:
    with_run = [{**record, "run_id": RUN_ID, "model_id": "gpt-4o", "model_version": "gpt-4o-2024-08-06",
                 "system_fingerprint": "fp_1", "model": "gpt-4o"} for record in story_records(2)]
    without = story_records(3, model="gpt-3.5-turbo", start=10)
    without[0] |= {"model_version": "gpt-3.5-turbo-0613", "prompt_tokens": 10, "completion_tokens": 90}
    without[1] |= {"time": "2024-05-03T08:00:00+02:00"}
    stories = write_jsonl(tmp_path / "stories.jsonl", with_run + without)
    assert run_ingest(stories).exit_code == 0
    story_ids = [row[0] for row in query_all(warehouse, "select story_id from raw.stories order by source_row")]
    labels = write_jsonl(tmp_path / "labels.jsonl", [
        {**record, "run_id": None, "labeler_version": "gpt-4o-mini-2024-07-18", "system_fingerprint": "fp_9"}
        for record in label_records(story_ids[:2])])
    result = run_ingest(labels)
    assert result.exit_code == 0 and "1 run(s) recorded in raw.runs" in result.output

    sha, label_sha = file_sha256(stories), file_sha256(labels)
    synthesized = f"file:{sha}:ChatGPT3.5"
    assert query_all(warehouse, "select run_id, model_id, model_version, system_fingerprint, count(*) "
                                "from raw.stories group by all order by 1, 3 nulls first") == [
        (RUN_ID, "gpt-4o", "gpt-4o-2024-08-06", "fp_1", 2), (synthesized, None, None, None, 2),
        (synthesized, None, "gpt-3.5-turbo-0613", None, 1)]
    rows = query_all(warehouse, "select run_id, run_kind, model, model_canonical, reported_models, started_at, "
                                "finished_at, prompt_tokens, completion_tokens, is_synthesized, source_row "
                                "from raw.runs order by model")
    assert [row[0] for row in rows] == [synthesized, f"file:{label_sha}:gpt-4o-mini"]
    story_run, label_run = rows
    assert story_run[1:5] == ("file", "gpt-3.5-turbo", "ChatGPT3.5", '{"gpt-3.5-turbo-0613": 1}')
    assert (str(story_run[5]), str(story_run[6])) == ("2024-05-01 10:00:00", "2024-05-03 06:00:00")
    assert story_run[7:] == (10, 90, True, 3)
    assert label_run[2:5] == ("gpt-4o-mini", "gpt-4o-mini", '{"gpt-4o-mini-2024-07-18": 4}')
    assert query_all(warehouse, "select distinct run_id, labeler_version, system_fingerprint "
                                "from raw.label_responses") == [
        (f"file:{label_sha}:gpt-4o-mini", "gpt-4o-mini-2024-07-18", "fp_9")]
    # the same file again adds no run
    assert "0 run" not in run_ingest(stories, reread=True).output
    assert query_all(warehouse, "select count(*) from raw.runs") == [(2,)]


def test_a_study_workbook_gets_a_synthesized_run_per_model(tmp_path: Path, warehouse: Path) -> None:
    rows = study_rows(4)
    rows[3][0] = "2023-09-01 12:00:00"
    workbook = write_xlsx(tmp_path / "ChatGPT3_5_Bias_Benchmark_2023-08-16.xlsx", STUDY_STORY_COLUMNS, rows)

    result = run_ingest(workbook)

    assert result.exit_code == 0 and "1 run(s) recorded in raw.runs" in result.output
    run_id = f"file:{file_sha256(workbook)}:ChatGPT3.5"
    assert query_all(warehouse, "select run_id, run_kind, model, is_synthesized, cast(started_at as varchar), "
                                "cast(finished_at as varchar), reported_models from raw.runs") == [
        (run_id, "file", "ChatGPT3_5", True, "2023-08-16 03:44:24.63", "2023-09-01 12:00:00", "{}")]
    assert query_all(warehouse, "select distinct run_id from raw.stories") == [(run_id,)]


def test_an_older_warehouse_gains_the_run_columns_and_table(tmp_path: Path, warehouse: Path) -> None:
    from lfh.landing.schema import RAW_TABLES

    older = {table: RAW_TABLES[table] for table in ("stories", "label_responses", "load_log")}
    for table, added in (("stories", ("run_id varchar,", "model_id varchar,", "model_version varchar,",
                                      "system_fingerprint varchar,")),
                         ("label_responses", ("run_id varchar,", "labeler_version varchar,",
                                              "system_fingerprint varchar,")),
                         ("load_log", ("runs_landed bigint,",))):
        for column in added:
            assert column in older[table]
            older[table] = older[table].replace(column, "")
    warehouse.parent.mkdir(parents=True, exist_ok=True)
    connection = duckdb.connect(str(warehouse))
    connection.execute("create schema raw")
    for table, columns in older.items():
        connection.execute(f"create table raw.{table} ({columns})")
    connection.close()

    records = [{**record, "run_id": RUN_ID, "model_version": "v-1"} for record in story_records(1)]
    result = run_ingest(write_jsonl(tmp_path / "s.jsonl", records))

    assert result.exit_code == 0, result.output
    assert query_all(warehouse, "select run_id, model_version from raw.stories") == [(RUN_ID, "v-1")]
    assert query_all(warehouse, "select count(*) from raw.runs") == [(0,)]


def test_parquet_landing_holds_the_runs_too(tmp_path: Path) -> None:
    manifest = write_manifest(tmp_path / "m.manifest.json", manifest_document())
    stories = write_jsonl(tmp_path / "s.jsonl", story_records(2))
    parquet_dir = tmp_path / "raw_parquet"
    arguments = [str(manifest), str(stories), "--parquet-dir", str(parquet_dir)]
    assert CliRunner().invoke(ingest, arguments).exit_code == 0
    assert CliRunner().invoke(ingest, [*arguments, "--reread"]).exit_code == 0

    connection = duckdb.connect()
    try:
        landed = connection.execute(f"select run_id, is_synthesized from read_parquet('{parquet_dir}/runs/*.parquet') "
                                    "order by run_id").fetchall()
    finally:
        connection.close()
    assert landed == [(RUN_ID, False), (f"file:{file_sha256(stories)}:ChatGPT3.5", True)]


def test_a_simulation_writes_a_manifest_per_run_and_they_land_marked_simulated(tmp_path: Path) -> None:
    from dataclasses import replace

    from fixtures_simulate import write_test_lexicon

    from lfh.landing.ingest import ingest_paths
    from lfh.simulate.config import load_config
    from lfh.simulate.run import run_simulation

    db_path = tmp_path / "lfh.duckdb"
    write_test_lexicon(db_path)
    config = replace(load_config(), stories_per_prompt=1, samples_per_story=1)
    first = run_simulation(config, tmp_path / "a", db_path)
    run_simulation(config, tmp_path / "b", db_path)

    def manifests(folder: Path) -> dict[str, dict]:
        found = sorted(folder.rglob("*.manifest.json"))
        return {document["run_id"]: document for document in
                (json.loads(path.read_text(encoding="utf-8")) for path in found)}

    written = manifests(tmp_path / "a")
    assert set(written) == set(manifests(tmp_path / "b"))  # same settings and seed: the same run ids
    assert len(written) == len(config.models) + 1  # a run per simulated model, one for the simulated labeler
    assert all(document["run_kind"] == "simulate" and document["is_simulated"] for document in written.values())
    story_runs = {json.loads(line)["run_id"] for line in first.stories_path.read_text(encoding="utf-8").splitlines()}
    label_runs = {json.loads(line)["run_id"] for line in first.labels_path.read_text(encoding="utf-8").splitlines()}
    assert story_runs | label_runs == set(written) and len(label_runs) == 1

    results, _skipped = ingest_paths([tmp_path / "a"], db_path)
    assert all(result.error is None for result in results), [result.summary() for result in results]
    assert query_all(db_path, "select count(*), bool_and(is_simulated), bool_or(is_synthesized) from raw.runs") == [
        (len(written), True, False)]
    assert query_all(db_path, "select count(*) from raw.stories where run_id is null") == [(0,)]
