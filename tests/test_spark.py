"""The same dbt project on Apache Spark (docs/SCALE_OUT.md): a small simulated corpus, with a hand-labeled audit
sample, is landed once as Parquet files (`lfh ingest --parquet-dir`), built on DuckDB and on local Spark from those
same files (`lfh build [--target spark] --parquet-dir`: every seed and model on both, the unit tests on Spark
(DuckDB's run in tests/test_measures_pipeline.py's build), the data tests on DuckDB),
published by both (`lfh publish [--target spark]`), and every published mart must be equal row by row: doubles to
a relative 1e-9, nulls, empty strings and lists exactly. Also: the accent fold map Spark uses is DuckDB's.

Needs Java 17 (`make test` installs Debian's openjdk-17-jre-headless); skipped, saying so, where there is no `java`.
One Spark session per engine build, one build per engine: a few minutes, most of it Spark's per-statement overhead.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from dataclasses import replace
from pathlib import Path

import duckdb
import polars as pl
import pytest
from click.testing import CliRunner
from fixtures_simulate import write_test_lexicon
from tolerance import same_double

from lfh.audit.sample import CHECK_COLUMN, HAND_GENDER_VALUES, LAYOUT, STORY_ID_COLUMN, story_check
from lfh.build.accent_fold import fold_map, render_macro
from lfh.cli.build import build
from lfh.cli.publish import publish
from lfh.landing.ingest import ingest_paths
from lfh.landing.parquet_sink import ParquetSink
from lfh.paths import project_root
from lfh.simulate.config import load_config
from lfh.simulate.run import run_simulation

ABSOLUTE_TOLERANCE = 1e-12  # for values that are zero on one engine and 1e-17 on the other
# The test build's JVM (docs/SCALE_OUT.md, "Spark in the tests"): the quick JIT only (C1; C2's optimising compiles
# cost more than they save on statements run once); no code-cache flushing (the quick JIT fills the cache with
# Spark's methods, and the sweeper that flushes cold ones took 27 s of CPU, more than C1); the serial collector (a
# 1 GiB heap of short-lived plans: G1's concurrent threads cost CPU that 2 cores shared with the other tests lack).
# None changes what a statement computes.
TEST_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:-UseCodeCacheFlushing -XX:+UseSerialGC"


def test_accent_fold_map_is_duckdbs_strip_accents() -> None:
    """macros/dialect/accent_fold.sql is what DuckDB's strip_accents does now, character by character."""
    generated = (project_root() / "macros" / "dialect" / "accent_fold.sql").read_text(encoding="utf-8")
    assert generated == render_macro(), "regenerate: python -m lfh.build.accent_fold > macros/dialect/accent_fold.sql"
    source, target = fold_map()
    folded = duckdb.sql("select strip_accents(?)", params=[source[:len(target)]]).fetchone()[0]
    assert folded == target
    assert duckdb.sql("select strip_accents(?)", params=[source[len(target):]]).fetchone()[0] == ""


def _spark_settings(environment: dict[str, str]) -> dict[str, str]:
    """The spark target's server_side_parameters as rendered under these environment variables (dbt's env_var:
    the variable, else the default)."""
    import jinja2
    import yaml

    def env_var(name: str, default: str | None = None) -> str:
        if name in environment:
            return environment[name]
        assert default is not None, f"{name} has no default in profiles.yml"
        return default

    profile = yaml.safe_load((project_root() / "profiles.yml").read_text(encoding="utf-8"))
    parameters = profile["lfh"]["outputs"]["spark"]["server_side_parameters"]
    render = jinja2.Environment(undefined=jinja2.StrictUndefined)
    return {key: render.from_string(str(value)).render(env_var=env_var) for key, value in parameters.items()}


def test_the_spark_test_knobs_leave_users_on_sparks_defaults() -> None:
    """LFH_SPARK_CODEGEN and LFH_SPARK_JAVA_OPTIONS (set by the equality test below to save CPU) change nothing
    unless set: Spark's whole-stage codegen, its codegen-with-fallback factory and the JVM's own JIT."""
    default = _spark_settings({"LFH_SPARK_DIR": "/w"})
    assert default["spark.sql.codegen.wholeStage"] == "true"
    assert default["spark.sql.codegen.factoryMode"] == "FALLBACK"  # Spark's own default
    assert default["spark.driver.extraJavaOptions"].split() == ["-Dderby.system.home=/w"]
    tuned = _spark_settings({"LFH_SPARK_DIR": "/w", "LFH_SPARK_CODEGEN": "false",
                             "LFH_SPARK_JAVA_OPTIONS": TEST_JAVA_OPTIONS})
    assert tuned["spark.sql.codegen.wholeStage"] == "false"
    assert tuned["spark.sql.codegen.factoryMode"] == "NO_CODEGEN"
    # Spark reads FALSE as false for wholeStage: the factory must follow it, not only the lower-case spelling
    assert _spark_settings({"LFH_SPARK_DIR": "/w", "LFH_SPARK_CODEGEN": "FALSE"})[
        "spark.sql.codegen.factoryMode"] == "NO_CODEGEN"
    assert tuned["spark.driver.extraJavaOptions"].split() == ["-Dderby.system.home=/w", *TEST_JAVA_OPTIONS.split()]
    assert {key: value for key, value in tuned.items() if "codegen" not in key and "JavaOptions" not in key} == {
        key: value for key, value in default.items() if "codegen" not in key and "JavaOptions" not in key}


def _sortable(value: object) -> tuple:
    if value is None:
        return (0, "")
    if isinstance(value, float):
        return (1, f"{value:.9e}")
    return (2, repr(value))


def _rows(db: Path, mart: str) -> tuple[list[str], list[str], list[tuple]]:
    connection = duckdb.connect(str(db), read_only=True)
    try:
        described = connection.execute(f"describe marts.{mart}").fetchall()
        rows = connection.execute(f"select * from marts.{mart}").fetchall()
    finally:
        connection.close()
    names = [row[0] for row in described]
    types = [row[1] for row in described]
    return names, types, sorted(rows, key=lambda row: tuple(_sortable(value) for value in row))


def _equal(left: object, right: object) -> bool:
    if isinstance(left, float) and isinstance(right, float):
        return same_double(left, right, ABSOLUTE_TOLERANCE)
    return type(left) is type(right) and left == right


HAND_LABELED_SHARE = 3  # every third story gets hand labels: enough for the PPI correction's minimum of 20 per source


def _pick(story_id: str, salt: str, choices: tuple | list) -> object:
    digest = int(hashlib.sha256(f"{salt}:{story_id}".encode()).hexdigest(), 16)
    return choices[digest % len(choices)]


def _filled_audit_workbook(parquet_dir: Path, path: Path) -> int:
    """An `lfh audit-sample`-style workbook of every third landed story, its Manual cells filled: the hand gender
    mostly Female/Male, sometimes Non-binary or Unspecified, the hand name one of the story's capitalised words or
    Unspecified (deterministic from the story id). They are not a person's labels: the test needs hand labels
    that both engines read identically, so the agreement marts and the PPI-corrected columns hold values."""
    stories = duckdb.sql(f"select story_id, story_text, role_category from read_parquet("
                         f"'{parquet_dir / 'stories' / '*.parquet'}') order by story_id").fetchall()
    genders = ("Female", "Male", "Female", "Male", "Female", "Male", *HAND_GENDER_VALUES)
    rows = []
    for index, (story_id, text, role_category) in enumerate(stories):
        if index % HAND_LABELED_SHARE:
            continue
        words = [word for word in re.findall(r"\b[A-Z][a-z]{2,}\b", text or "")[1:] if word not in ("The", "She")]
        row = dict.fromkeys(LAYOUT)
        row.update({STORY_ID_COLUMN: story_id, "LLM Response": text, "Role Category": role_category,
                    CHECK_COLUMN: story_check(story_id, text or ""),
                    "Manual Subject Gender": _pick(story_id, "subject", genders),
                    "Manual Object Gender": _pick(story_id, "object", genders),
                    "Manual Subject Name": _pick(story_id, "subject name", [*words[:2], "Unspecified"]),
                    "Manual Object Name": _pick(story_id, "object name", [*words[2:4], "Unspecified"])})
        rows.append(row)
    pl.DataFrame(rows, schema=dict.fromkeys(LAYOUT, pl.String), orient="row").write_excel(path, worksheet="audit")
    return len(rows)


@pytest.fixture(scope="module")
def landed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small simulated corpus (300 stories, one label response each), a hand-labeled audit sample of 100 of
    them, a fourth model in two waves (200 stories) and the test lexicon, landed as Parquet files."""
    if shutil.which("java") is None:
        pytest.skip("no java on PATH: `make test` installs openjdk-17-jre-headless (Debian)")
    root = tmp_path_factory.mktemp("spark")
    lexicon_db = root / "lexicon.duckdb"
    write_test_lexicon(lexicon_db)
    run_simulation(replace(load_config(), stories_per_prompt=1), root / "landing", lexicon_db)
    parquet_dir = root / "raw_parquet"
    with ParquetSink(parquet_dir) as sink:
        results, _skipped = ingest_paths([root / "landing"], sink=sink)
    assert all(result.error is None for result in results)
    audit = root / "audit" / "audit_sample.xlsx"
    audit.parent.mkdir()
    assert _filled_audit_workbook(parquet_dir, audit) == 100
    with ParquetSink(parquet_dir) as sink:
        results, _skipped = ingest_paths([audit], sink=sink)
    assert [result.error for result in results] == [None]
    # a fourth model in two waves (versions), landed after the audit sample so that the hand-labeled stories stay
    # those above: fct_model_drift has rows to compare (docs/RUNS.md); the measures count its later wave only
    wave = replace(load_config().models[0], name="SimWave", spellings=("SimWave",), version="SimWave-1")
    waves = (wave, replace(wave, version="SimWave-2", race_multiplier={"black": 2.0}))
    run_simulation(replace(load_config(), stories_per_prompt=1, models=waves), root / "landing-waves", lexicon_db)
    with ParquetSink(parquet_dir) as sink:
        results, _skipped = ingest_paths([root / "landing-waves"], sink=sink)
    assert all(result.error is None for result in results)
    hand_labels = duckdb.sql(f"select count(*) from read_parquet('{parquet_dir / 'hand_labels' / '*.parquet'}')")
    assert hand_labels.fetchone()[0] >= 150  # subjects of every sampled story, objects of the two-character ones
    connection = duckdb.connect(str(lexicon_db), read_only=True)
    try:
        for table in ("census_first_names", "wikipedia_first_names"):
            (parquet_dir / table).mkdir(parents=True)
            connection.execute(f"copy raw.{table} to '{parquet_dir / table / 'part-0.parquet'}' (format parquet)")
    finally:
        connection.close()
    return parquet_dir


def _build_and_publish(monkeypatch: pytest.MonkeyPatch, root: Path, parquet_dir: Path, target: str) -> Path:
    monkeypatch.setenv("LFH_DB", str(root / "lfh.duckdb"))
    monkeypatch.setenv("LFH_SPARK_DIR", str(root / "spark"))
    monkeypatch.setenv("LFH_SPARK_DRIVER_MEMORY", "1g")
    # each of the build's few hundred statements runs once on a few rows: generating and compiling Java for it
    # (Spark's codegen) costs more CPU than it saves, as do the JVM's defaults TEST_JAVA_OPTIONS changes
    # (docs/SCALE_OUT.md, "Spark in the tests")
    monkeypatch.setenv("LFH_SPARK_CODEGEN", "false")
    monkeypatch.setenv("LFH_SPARK_JAVA_OPTIONS", TEST_JAVA_OPTIONS)
    # a few rows per statement: one shuffle partition, one task per stage (the profile's 8 suit a real corpus). A
    # unit test of the correction (about 25 stages) took 12 s with 8 and 9 s with 1; the rows compared are the same.
    monkeypatch.setenv("LFH_SPARK_SHUFFLE_PARTITIONS", "1")
    monkeypatch.setenv("DBT_TARGET_PATH", str(root / "target"))
    runner = CliRunner()
    # DuckDB runs every seed, model and data test on this corpus (its unit tests do not depend on the corpus: they
    # run in tests/test_measures_pipeline.py's build); Spark every seed, model and unit test (the Spark dialect of
    # each formula on its hand-computed rows) but not the data tests: they check rows, and every mart's rows are
    # compared with DuckDB's below, where the same data tests passed on the same corpus.
    # (Spark's per-statement overhead made its 234 data tests 84 s of a 393 s build.)
    monkeypatch.setenv("DBT_EXCLUDE_RESOURCE_TYPES", "test" if target == "spark" else "unit_test")
    outcome = runner.invoke(build, ["--target", target, "--parquet-dir", str(parquet_dir)], catch_exceptions=False)
    assert outcome.exit_code == 0, outcome.output
    outcome = runner.invoke(publish, ["--target", target, "--parquet-dir", str(parquet_dir), "--to",
                                      str(root / "published"), "--target-dir", str(root / "target")],
                            catch_exceptions=False)
    assert outcome.exit_code == 0, outcome.output
    return root / "published"


@pytest.mark.slow
def test_marts_equal_on_duckdb_and_spark(landed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spark = _build_and_publish(monkeypatch, tmp_path / "spark_build", landed, "spark")
    duck = _build_and_publish(monkeypatch, tmp_path / "duckdb_build", landed, "duckdb")
    spark_manifest = json.loads((spark / "manifest.json").read_text(encoding="utf-8"))
    duck_manifest = json.loads((duck / "manifest.json").read_text(encoding="utf-8"))
    marts = [mart["mart"] for mart in duck_manifest["marts"]]
    assert [mart["mart"] for mart in spark_manifest["marts"]] == marts
    assert sorted(marts) == sorted(path.stem for path in (project_root() / "models" / "marts").rglob("*.sql"))
    for spark_mart, duck_mart in zip(spark_manifest["marts"], duck_manifest["marts"], strict=True):
        assert spark_mart["columns"] == duck_mart["columns"], spark_mart["mart"]  # names, types, NOT NULL, docs
    assert spark_manifest["lexicon"] == duck_manifest["lexicon"]
    assert (spark / "parquet").is_dir() and sorted(p.name for p in (spark / "parquet").iterdir()) == sorted(
        p.name for p in (duck / "parquet").iterdir())
    compared = 0
    empty = []
    for mart in marts:
        names, types, spark_rows = _rows(spark / "marts.duckdb", mart)
        duck_names, duck_types, duck_rows = _rows(duck / "marts.duckdb", mart)
        assert (names, types) == (duck_names, duck_types), mart
        assert len(spark_rows) == len(duck_rows), f"{mart}: {len(spark_rows)} rows on Spark, {len(duck_rows)} on DuckDB"
        if not duck_rows:
            empty.append(mart)
        for spark_row, duck_row in zip(spark_rows, duck_rows, strict=True):
            differing = [(name, left, right) for name, left, right in zip(names, spark_row, duck_row, strict=True)
                         if not _equal(left, right)]
            assert not differing, f"{mart}: Spark and DuckDB differ in {differing} (DuckDB row {duck_row})"
            compared += 1
    # with the audit sample's hand labels every mart holds rows, the labeler marts and the corrected columns included
    assert not empty, f"empty on both engines, so compared nothing: {empty}"
    for mart in ("fct_representation_ratios", "fct_sexual_orientation_ratios"):
        names, _types, rows = _rows(duck / "marts.duckdb", mart)
        corrected = [names.index(name) for name in ("corrected_share", "corrected_ratio")]
        assert any(row[index] is not None for row in rows for index in corrected), f"{mart}: nothing corrected"
    print(f"{len(marts)} marts, {compared} rows equal on Spark and DuckDB")
