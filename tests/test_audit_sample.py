"""`lfh audit-sample` and its round trip: a stratified, reproducible draw of labeled stories without hand labels
written as a workbook with drop-downs; filled programmatically; `lfh ingest` reads it back as hand labels of the
same stories (an edited row is rejected with its reason); after `lfh build` the agreement and confusion marts
count exactly the filled characters."""

from __future__ import annotations

import zipfile
from dataclasses import replace
from pathlib import Path

import duckdb
import polars as pl
import pytest
from click.testing import CliRunner
from fixtures_simulate import write_test_lexicon

from lfh.audit.sample import (
    HAND_GENDER_VALUES,
    LAYOUT,
    AuditSampleError,
    allocate,
    draw_audit_sample,
)
from lfh.build.dbt import run_dbt
from lfh.cli import main
from lfh.landing.ingest import ingest_paths
from lfh.simulate.config import load_config
from lfh.simulate.run import run_simulation

pytestmark = pytest.mark.slow
LABELER_MARTS = ["+fct_labeler_agreement", "+fct_labeler_confusion", "+fct_labeler_class_metrics",
                 "+dim_stories", "+fct_characters"]


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small simulated warehouse: labeled stories, no hand labels."""
    root = tmp_path_factory.mktemp("audit_sample")
    db_path = root / "warehouse" / "lfh.duckdb"
    write_test_lexicon(db_path)
    config = replace(load_config(), stories_per_prompt=2, samples_per_story=1, seed=11)
    result = run_simulation(config, root / "landing", db_path)
    ingest_paths([result.stories_path, result.labels_path], db_path)
    run_dbt(["build", "--select", *LABELER_MARTS], db_path=db_path, capture=True)
    return db_path


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


def test_round_trip_sample_fill_ingest_build(simulated: Path, tmp_path: Path) -> None:
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
    run_dbt(["build", "--select", *LABELER_MARTS], db_path=simulated, capture=True)

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
