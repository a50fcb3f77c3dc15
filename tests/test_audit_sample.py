"""`lfh audit-sample` and its round trip: a stratified, reproducible draw of labeled stories without hand labels
written as a workbook with drop-downs; filled programmatically; `lfh ingest` reads it back as hand labels of the
same stories (an edited row is rejected with its reason); after `lfh build` the agreement and confusion marts
count exactly the filled characters."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import duckdb
import polars as pl
import pytest
from click.testing import CliRunner

from lfh.audit.sample import (
    HAND_GENDER_VALUES,
    LAYOUT,
    AuditSampleError,
    allocate,
    draw_audit_sample,
)
from lfh.build.dbt import run_dbt
from lfh.cli import main

pytestmark = pytest.mark.slow
# what hand labels change, up to the marts the round trip reads: rebuilt after the filled workbook is ingested
LABELER_MARTS = ["fct_labeler_agreement", "fct_labeler_confusion", "fct_labeler_class_metrics"]
HAND_LABEL_REBUILD = [f"source:raw.hand_labels+,+{mart}" for mart in LABELER_MARTS]


@pytest.fixture(scope="module")
def simulated(simulated_build: Path) -> Path:
    """The run's shared simulated warehouse (tests/conftest.py's simulated_build: labeled stories of three models,
    every model and data test built, no hand labels). Read-only: the round trip works on a copy."""
    return simulated_build / "warehouse" / "lfh.duckdb"


def test_allocation_is_proportional_with_a_floor() -> None:
    sizes = {("a",): 100, ("b",): 50, ("c",): 10, ("d",): 2}
    allocation = allocate(sizes, 40, min_per_stratum=3)
    assert sum(allocation.values()) == 40
    assert allocation[("d",)] == 2                     # all of a stratum smaller than the floor
    assert allocation[("c",)] >= 3
    assert allocation[("a",)] > allocation[("b",)] > allocation[("c",)]
    assert abs(allocation[("a",)] / allocation[("b",)] - 2) < 0.35
    assert allocate(sizes, 500, 3) == sizes            # n beyond the candidates: every story
    with pytest.raises(AuditSampleError, match="raise --n"):
        allocate(sizes, 5, 3)


def test_draw_is_stratified_reproducible_and_skips_hand_labeled(simulated: Path) -> None:
    first = draw_audit_sample(simulated, 60, seed=7)
    again = draw_audit_sample(simulated, 60, seed=7)
    other = draw_audit_sample(simulated, 60, seed=8)
    assert first.stories.equals(again.stories)
    assert set(first.stories["Story ID"]) != set(other.stories["Story ID"])
    assert first.stories.height == 60 and first.stories["Story ID"].n_unique() == 60
    assert list(first.stories.columns) == list(LAYOUT)
    strata = first.strata
    with duckdb.connect(str(simulated), read_only=True) as connection:
        cells = connection.execute("select count(distinct (model, domain, prompt_condition)) from marts.dim_stories "
                                   "where is_labeled and domain is not null").fetchone()[0]
    assert strata.height == cells >= 12  # every model x domain x condition of the simulated corpus
    assert strata["drawn"].sum() == 60
    assert (strata["drawn"] >= strata["candidates"].clip(upper_bound=3)).all()
    assert first.skipped_hand_labeled == 0


def _fill(sample_path: Path, filled_path: Path) -> pl.DataFrame:
    """What a person does in a spreadsheet: gender and name per character; row 2's text edited by mistake."""
    frame = pl.read_excel(sample_path, sheet_name="audit", engine="calamine", infer_schema_length=0)
    frame = frame.with_columns(
        pl.when(pl.int_range(pl.len()) % 2 == 0).then(pl.lit("Female")).otherwise(pl.lit("Male"))
        .alias("Manual Subject Gender"),
        pl.when(pl.col("Object").is_not_null()).then(pl.lit("Unspecified")).alias("Manual Object Gender"),
        pl.lit("Unspecified").alias("Manual Subject Name"),
        pl.when(pl.col("Object").is_not_null()).then(pl.lit("['Unspecified']")).alias("Manual Object Name"),
        pl.when(pl.int_range(pl.len()) == 1).then(pl.col("LLM Response") + " (edited)")
        .otherwise(pl.col("LLM Response")).alias("LLM Response"),
    )
    frame.write_excel(filled_path, worksheet="audit")
    return frame


def test_round_trip_sample_fill_ingest_build(simulated_build: Path, tmp_path: Path) -> None:
    simulated = tmp_path / "warehouse" / "lfh.duckdb"  # the shared build's file name: dbt reuses its parse
    simulated.parent.mkdir()
    shutil.copyfile(simulated_build / "warehouse" / "lfh.duckdb", simulated)
    sample_path = tmp_path / "sample.xlsx"
    env = {"LFH_DB": str(simulated)}
    outcome = CliRunner().invoke(main, ["audit-sample", "--n", "60", "--out", str(sample_path), "--seed", "3"],
                                 env=env)
    assert outcome.exit_code == 0, outcome.output
    assert "60 stories" in outcome.output
    with zipfile.ZipFile(sample_path) as archive:
        sheet = archive.read("xl/worksheets/sheet1.xml").decode()
    assert sheet.count("<dataValidation ") == 2 and f'"{",".join(HAND_GENDER_VALUES)}"' in sheet

    filled = _fill(sample_path, tmp_path / "filled.xlsx")
    edited_id = filled["Story ID"][1]
    outcome = CliRunner().invoke(main, ["ingest", str(tmp_path / "filled.xlsx")], env=env)
    assert outcome.exit_code == 0, outcome.output
    run_dbt(["build", "--select", *HAND_LABEL_REBUILD], db_path=simulated, capture=True)

    kept = filled.filter(pl.col("Story ID") != edited_id)
    expected_characters = kept.height + kept["Object"].is_not_null().sum()
    with duckdb.connect(str(simulated), read_only=True) as connection:
        rejects = connection.execute(
            "select reason, detail from raw.rejects where target_table = 'hand_labels'").fetchall()
        pairs = connection.execute(
            "select story_id, role, hand_gender from intermediate.int_hand_labels_paired").pl()
        accuracy_n = connection.execute(
            "select n from marts.fct_labeler_agreement where model = 'All' and domain = 'all' and role = 'all' "
            "and metric = 'gender_accuracy'").fetchone()[0]
        confusion_n = connection.execute(
            "select sum(characters) from marts.fct_labeler_confusion where model = 'All' and domain = 'all' "
            "and role = 'all'").fetchone()[0]
        hand_female = connection.execute(
            "select hand_labeled from marts.fct_labeler_class_metrics where model = 'All' and domain = 'all' "
            "and role = 'all' and class = 'female'").fetchone()[0]
    assert len(rejects) == 1 and rejects[0][0] == "text_edited" and edited_id in rejects[0][1]
    assert set(pairs["story_id"]) == set(kept["Story ID"])
    assert pairs.height == accuracy_n == confusion_n == expected_characters
    assert hand_female == kept.filter(pl.col("Manual Subject Gender") == "Female").height

    # a second ingest of the same filled workbook adds nothing
    outcome = CliRunner().invoke(main, ["ingest", str(tmp_path / "filled.xlsx"), "--reread"], env=env)
    assert outcome.exit_code == 0, outcome.output
    with duckdb.connect(str(simulated), read_only=True) as connection:
        landed = connection.execute(
            "select count(*) from raw.hand_labels where label_source = 'audit_sample'").fetchone()[0]
    assert landed == expected_characters

    # the next draw skips the stories now hand-labeled (the edited one stays a candidate)
    redraw = draw_audit_sample(simulated, 60, seed=3)
    assert redraw.skipped_hand_labeled == kept.height
    assert not set(redraw.stories["Story ID"]) & set(kept["Story ID"])
