"""`lfh audit-plan` and the optimal allocation (lfh.audit.plan): the predicted variance of a cell worked by hand,
Neyman's proportions on strata that differ only in the labeler's error, the floors, caps and targets, and the
command on a small hand-made warehouse (no dbt). The check on the study's audit is tests/test_audit_allocation.py."""

from __future__ import annotations

import dataclasses
import math
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pytest
from click.testing import CliRunner

from lfh.audit.allocation import AuditSampleError, allocate
from lfh.audit.plan import (
    AuditPlanError,
    Plan,
    PlanCell,
    PlanSettings,
    Selection,
    StratumPart,
    StratumStories,
    build_plan,
    cell_variance,
    half_width,
    mask_units,
    plan_allocation,
    read_plan,
    read_units,
    stratum_floors,
)
from lfh.audit.plan.gain import predicted_gain
from lfh.audit.sample import LAYOUT, draw_audit_sample
from lfh.cli import main

SETTINGS = PlanSettings(cell_min_hand_labeled=5, min_hand_labeled=5)


def _var(value: float) -> tuple[float, float, float, float]:
    """Moments whose linearised variance is `value` at any share (only x_a varies)."""
    return (value, 0.0, 0.0, 0.0)


def _cell(model: str, stratum: tuple, residual: float, units: int = 100, machine: float = 0.0) -> PlanCell:
    return PlanCell("gender", model, ("learning", "baseline", "female"), 0.5, 1.0,
                    [StratumPart(stratum, units, 1.0, _var(machine), _var(residual), 0)])


def _plan(cells: list[PlanCell], stories: int = 100) -> Plan:
    strata = {part.stratum: StratumStories(stories, 0, stories) for cell in cells for part in cell.parts}
    return Plan(cells, strata, SETTINGS, pilot_units=10)


def test_cell_variance_by_hand() -> None:
    # one stratum of 100 units, 20 hand-labeled: 0.25/80 + (19/20) 0.09/20 = 0.0074 over b^2 = 0.64 (the residual
    # moment is the stratum's variance; the marts' population moment of 20 units has expectation 19/20 of it)
    part = StratumPart(("M1", "d", "c"), 100, 1.0, _var(0.25), _var(0.09), 0)
    cell = PlanCell("gender", "M1", ("k",), 0.5, 0.8, [part])
    variance = cell_variance(cell, {("M1", "d", "c"): 20}, SETTINGS)
    assert variance == pytest.approx((0.25 / 80 + 0.95 * 0.09 / 20) / 0.64)
    assert half_width(cell, variance, SETTINGS) == pytest.approx(1.96 * math.sqrt(variance))
    assert cell_variance(cell, {("M1", "d", "c"): 4}, SETTINGS) is None  # below the minimum, no pool
    # two strata weighted by size (60, 40), 10 and 20 hand-labeled: the stratified variance, each stratum's machine
    # term with the sample variance's n / (n - 1) as the marts compute it, its residual term the stratum's variance
    # (the marts' sample variance is unbiased for it)
    parts = [StratumPart(("M1", "d", "a"), 60, 1.0, _var(0.2), _var(0.1), 0),
             StratumPart(("M2", "d", "a"), 40, 1.0, _var(0.1), _var(0.3), 0)]
    pooled = PlanCell("gender", "All", ("k",), 0.5, 1.0, parts)
    expected = (0.36 * 0.2 / 49 + 0.16 * 0.1 / 19) + (0.36 * 0.1 / 10 + 0.16 * 0.3 / 20)
    assert cell_variance(pooled, {("M1", "d", "a"): 10, ("M2", "d", "a"): 20}, SETTINGS) == pytest.approx(expected)


def test_allocation_follows_neyman_on_the_residual_standard_deviation() -> None:
    # objective "variance": the same size, residual variances 4 : 1 -> hand labels 2 : 1 (n_h proportional to S_h)
    noisy = _cell("M1", ("M1", "love", "power_neutral"), 0.16)
    clean = _cell("M2", ("M2", "love", "power_neutral"), 0.04)
    plan = _plan([noisy, clean])
    plan.settings = dataclasses.replace(SETTINGS, objective="variance")
    extra = plan_allocation(plan, families=("gender",), budget=90, min_per_stratum=3, step=1)
    assert sum(extra.values()) == 90
    assert extra[("M1", "love", "power_neutral")] == 60 and extra[("M2", "love", "power_neutral")] == 30


def test_allocation_minimises_the_summed_half_width() -> None:
    # the default objective, what the validation judges: min sqrt(A1 / n1) + sqrt(A2 / n2) over n1 + n2 = 90 puts
    # n_h proportional to A_h^(1/3): 4^(1/3) = 1.587 -> 55.2 : 34.8 (the summed variance's optimum, 60 : 30, gives
    # the noisier cell more than its half-width is worth)
    noisy = _cell("M1", ("M1", "love", "power_neutral"), 0.16)
    clean = _cell("M2", ("M2", "love", "power_neutral"), 0.04)
    extra = plan_allocation(_plan([noisy, clean]), families=("gender",), budget=90, min_per_stratum=3, step=1)
    assert extra[("M1", "love", "power_neutral")] == 55 and extra[("M2", "love", "power_neutral")] == 35
    with pytest.raises(AuditPlanError, match="objective"):
        PlanSettings(objective="mean")


def test_floors_caps_and_errors() -> None:
    cells = [_cell("M1", ("M1", "a", "b"), 0.2), _cell("M2", ("M2", "a", "b"), 0.0)]
    plan = _plan(cells, stories=40)
    extra = plan_allocation(plan, families=("gender",), budget=60, min_per_stratum=3, step=1)
    assert extra[("M2", "a", "b")] >= 3                       # the floor, where more labels buy nothing
    assert extra[("M1", "a", "b")] <= 40                      # never more than the stratum's candidates
    with pytest.raises(AuditPlanError, match="budget"):
        plan_allocation(plan, families=("gender",), budget=4, min_per_stratum=3)
    with pytest.raises(AuditPlanError, match="either"):
        plan_allocation(plan, families=("gender",))
    with pytest.raises(AuditPlanError, match="unknown measure"):
        plan_allocation(plan, families=("race",), budget=10)


def test_target_stops_when_every_reachable_cell_is_there() -> None:
    cell = _cell("M1", ("M1", "a", "b"), 0.25, units=1000)
    plan = Plan([cell], {("M1", "a", "b"): StratumStories(1000, 0, 1000)}, SETTINGS, pilot_units=10)
    extra = plan_allocation(plan, families=("gender",), target_half_width=0.1, min_per_stratum=3, step=1)
    labeled = extra[("M1", "a", "b")]
    # 1.96 sqrt(0.25 (n - 1) / n^2) <= 0.1 from n = 96 on (the machine term is 0 here; the marts' population
    # variance of n units is (n - 1) / n of the stratum's)
    assert labeled == 96 == min(n for n in range(2, 200) if 1.96 * math.sqrt(0.25 * (n - 1) / n / n) <= 0.1)


def _warehouse(path: Path, hand_labels: bool = True, labor: bool = False) -> None:
    """A hand-made warehouse with the relations the plan reads: 2 models x learning baseline, 40 stories each,
    the subject only; 10 stories of M1 hand-labeled, where the labeler misses a third of the women. `labor`: as many
    labor stories besides, where the 10 hand-labeled ones of M1 show the labeler right every time."""
    rows, characters = [], []
    for model in ("M1", "M2"):
        for domain in ("learning", "labor") if labor else ("learning",):
            for index in range(40):
                story = f"{model}-{index}" if domain == "learning" else f"{model}-{domain}-{index}"
                rows.append((story, model, domain, "power_neutral", True))
                hand = (("female" if index % 2 == 0 else "male") if hand_labels and model == "M1" and index < 10
                        else None)
                missed = hand == "female" and index % 3 == 0 and domain == "learning"
                inferred = "unspecified" if missed else (hand or ("female", "male")[index % 2])
                characters.append((story, "subject", model, domain, "baseline", "P001", inferred, hand,
                                   hand is not None))
    with duckdb.connect(str(path)) as connection:
        for schema in ("marts", "intermediate", "reference"):
            connection.execute(f"create schema {schema}")
        connection.execute("create table marts.dim_stories (story_id varchar, model varchar, domain varchar, "
                           "prompt_condition varchar, is_labeled boolean)")
        connection.executemany("insert into marts.dim_stories values (?, ?, ?, ?, ?)", rows)
        connection.execute("create temp table characters (story_id varchar, role varchar, model varchar, "
                           "domain varchar, condition varchar, prompt_id varchar, inferred_gender varchar, "
                           "hand_gender varchar, is_hand_labeled boolean)")
        connection.executemany("insert into characters values (?, ?, ?, ?, ?, ?, ?, ?, ?)", characters)
        # the units as int_correction_units_counted counts them: one character (the subject) per story, no catalog
        # (no occupation unit), no romantic story (no couple)
        connection.execute("""
            create table intermediate.int_correction_units_counted as
            select 'gender' as family, story_id, model, domain, 'power_neutral' as prompt_condition,
                   case when inferred_gender in ('female', 'male') then 'gendered' else 'uncertain' end
                       as story_class,
                   domain as cell_key, condition, inferred_gender as machine_class, hand_gender as hand_class,
                   is_hand_labeled, 1 as unit_count
            from characters""")
        # what `lfh audit-sample` reads besides: the stories' text, the characters, the hand labels
        connection.execute("alter table marts.dim_stories add column query varchar default 'Write a story.'")
        connection.execute("alter table marts.dim_stories add column story_text varchar default 'Once.'")
        connection.execute("create table marts.fct_characters as select story_id, role, inferred_gender as gender, "
                           "null::varchar as full_name, 'student' as role_text from characters")
        connection.execute("create schema raw")
        connection.execute("create table raw.stories as select story_id, null::timestamp as generated_at, "
                           "'learning' as role_category, 'student' as subject, null::varchar as object "
                           "from marts.dim_stories")
        connection.execute("create table raw.hand_labels as select story_id, hand_gender as gender, "
                           "null::varchar as name from characters where hand_gender is not null")


def test_plan_reads_the_warehouse_and_masks(tmp_path: Path) -> None:
    db_path = tmp_path / "lfh.duckdb"
    _warehouse(db_path)
    with duckdb.connect(str(db_path), read_only=True) as connection:
        units, stories = read_units(connection)
    plan = build_plan(units, stories, SETTINGS)
    assert plan.strata[("M1", "learning", "power_neutral")] == StratumStories(40, 10, 30)
    assert plan.pilot_units == 10
    cells = {cell.name: cell for cell in plan.cells}
    assert {"gender/All/learning/baseline/female", "gender/M2/learning/baseline/nonbinary"} <= set(cells)
    masked_units, masked_stories = mask_units(units, stories, ["M1-0", "M1-1"])
    masked = build_plan(masked_units, masked_stories, SETTINGS)
    assert masked.pilot_units == 2 and masked.strata[("M1", "learning", "power_neutral")].hand_labeled == 2
    assert isinstance(masked_stories, pl.DataFrame)


def test_machine_label_strata_and_their_floors(tmp_path: Path) -> None:
    """Strata split by the story's machine-label class (bench/results/correction.md, "Strata on the machine labels"):
    M1's two stories whose subject the labeler leaves unspecified (index 0 and 6) form the uncertain stratum; the floors
    give every stratum min_labeled hand-labeled stories in all (never more than it holds), besides min_per_stratum
    more."""
    db_path = tmp_path / "lfh.duckdb"
    _warehouse(db_path)
    with duckdb.connect(str(db_path), read_only=True) as connection:
        units, stories = read_units(connection, "machine_label_class")
        with pytest.raises(AuditPlanError, match="unknown strata"):
            read_units(connection, "model")
    plan = build_plan(units, stories, SETTINGS)
    assert plan.strata == {("M1", "learning", "power_neutral", "uncertain"): StratumStories(2, 2, 0),
                           ("M1", "learning", "power_neutral", "gendered"): StratumStories(38, 8, 30),
                           ("M2", "learning", "power_neutral", "gendered"): StratumStories(40, 0, 40)}
    room = {stratum: info.candidates for stratum, info in plan.strata.items()}
    floors = stratum_floors(room, plan.labeled_now(), min_per_stratum=0, min_labeled=2)
    assert floors == {("M1", "learning", "power_neutral", "uncertain"): 0,
                      ("M1", "learning", "power_neutral", "gendered"): 0,
                      ("M2", "learning", "power_neutral", "gendered"): 2}
    assert stratum_floors({("a",): 1}, {}, 3, 2) == {("a",): 1}
    assert allocate({("a",): 10, ("b",): 10}, 6, 0, {("a",): 0, ("b",): 5}) == {("a",): 1, ("b",): 5}
    extra = plan_allocation(plan, families=("gender",), budget=10, min_per_stratum=0, min_labeled=2, step=1)
    assert extra[("M2", "learning", "power_neutral", "gendered")] >= 2 and sum(extra.values()) == 10


def test_audit_plan_command(tmp_path: Path) -> None:
    db_path = tmp_path / "lfh.duckdb"
    _warehouse(db_path)
    out = tmp_path / "plan.csv"
    result = CliRunner().invoke(main, ["audit-plan", "--budget", "20", "--measure", "gender", "--out", str(out)],
                                env={"LFH_DB": str(db_path)})
    assert result.exit_code == 0, result.output
    assert "20 more stories" in result.output and "median half-width" in result.output
    strata = pl.read_csv(out)
    assert strata["add"].sum() == 20 and set(strata["model"]) == {"M1", "M2"}
    cells = pl.read_csv(tmp_path / "plan_cells.csv")
    assert {"family", "model", "cell", "half_width_now", "planned_half_width"} <= set(cells.columns)
    planned = cells.filter((pl.col("model") == "All") & (pl.col("cell") == "learning/baseline/female"))
    # 10 hand-labeled characters now (< var ppi_min_hand_labeled, 20): no value; 30 after the plan: one
    assert planned["half_width_now"][0] is None and 0 < planned["planned_half_width"][0] < 0.5
    # +-0.17 on cells of 40 stories, shares near 1/2: reachable (labeled whole, about the Wilson-like +-0.155 of 40
    # hand labels; the pilot's 10 give the variance of the hand gender unbiased, 10/9 of their population variance),
    # and the plan gets every such cell there; +-0.1 is out of reach for them (the plan then serves the non-binary
    # cells only, a few stories)
    target = tmp_path / "target.csv"
    result = CliRunner().invoke(main, ["audit-plan", "--target-halfwidth", "0.17", "--measure", "gender",
                                       "--out", str(target)], env={"LFH_DB": str(db_path)})
    assert result.exit_code == 0, result.output
    reached = pl.read_csv(tmp_path / "target_cells.csv").filter(pl.col("cell").str.ends_with("male"))
    assert reached.height == 6 and reached["planned_half_width"].max() <= 0.17 + 1e-9
    result = CliRunner().invoke(main, ["audit-plan", "--target-halfwidth", "0.1", "--measure", "gender"],
                                env={"LFH_DB": str(db_path)})
    assert result.exit_code == 0 and "serving gender: 10 more stories" in result.output, result.output
    result = CliRunner().invoke(main, ["audit-plan"], env={"LFH_DB": str(db_path)})
    assert result.exit_code != 0 and "--budget" in result.output
    result = CliRunner().invoke(main, ["audit-plan", "--budget", "5"], env={"LFH_DB": str(tmp_path / "none.duckdb")})
    assert result.exit_code == 1 and "does not exist" in result.output


@pytest.mark.slow  # draws a matplotlib figure
def test_report_section_from_the_plan(tmp_path: Path) -> None:
    from lfh.report.write import _hand_label_plan_section

    db_path = tmp_path / "lfh.duckdb"
    _warehouse(db_path)
    section = _hand_label_plan_section(db_path)
    assert section.title == "Hand labels: what you have and what more would buy"
    assert section.figure is not None and "10 hand-labeled characters now" in section.caption
    assert "70 stories without a hand label remain" in section.caption
    missing = _hand_label_plan_section(tmp_path / "none.duckdb")
    assert missing.figure is None and "lfh audit-plan" in missing.empty_note


def test_optimal_audit_sample(tmp_path: Path) -> None:
    # M1's learning stories: the labeler misses a third of the women; its labor ones: always right. Serving the
    # learning cells, 60 stories where the labeler errs narrow them 26% against a proportional draw, beyond the
    # gain's prediction error (15%): the optimal allocation is drawn, the same twice
    db_path = tmp_path / "lfh.duckdb"
    _warehouse(db_path, labor=True)
    learning = Selection(("gender",), domains=("learning",))
    first = draw_audit_sample(db_path, 60, seed=4, min_per_stratum=3, allocation="optimal", selection=learning)
    again = draw_audit_sample(db_path, 60, seed=4, min_per_stratum=3, allocation="optimal", selection=learning)
    assert first.allocation == "optimal" and first.note is None and first.stories.equals(again.stories)
    assert first.stories.height == 60 and list(first.stories.columns) == list(LAYOUT)
    assert not set(first.stories["Story ID"]) & {f"M1-{index}" for index in range(10)}  # hand-labeled: skipped
    assert first.skipped_hand_labeled == 20
    assert (first.strata["drawn"] >= 3).all()
    drawn = {tuple(row[:3]): row[4] for row in first.strata.iter_rows()}
    assert drawn[("M1", "learning", "power_neutral")] > drawn[("M1", "labor", "power_neutral")]
    # every gender cell (labor's too): the optimal allocation's gain (under 4%) is within its prediction error, so
    # the draw is the proportional one, and says so
    broad = draw_audit_sample(db_path, 60, seed=4, allocation="optimal", families=("gender",))
    assert broad.allocation == "proportional" and "not beyond its prediction error" in broad.note
    assert broad.stories.equals(draw_audit_sample(db_path, 60, seed=4).stories)
    no_pilot = tmp_path / "none.duckdb"
    _warehouse(no_pilot, hand_labels=False)
    proportional = draw_audit_sample(no_pilot, 30, seed=4, allocation="optimal")
    assert proportional.allocation == "proportional" and "no hand label" in proportional.note
    assert proportional.stories.equals(draw_audit_sample(no_pilot, 30, seed=4).stories)
    out = tmp_path / "sample.xlsx"
    result = CliRunner().invoke(main, ["audit-sample", "--n", "60", "--out", str(out), "--allocate", "optimal",
                                       "--measure", "gender", "--domain", "learning"], env={"LFH_DB": str(db_path)})
    assert result.exit_code == 0, result.output
    assert "60 stories" in result.output and "optimal allocation" in result.output and out.is_file()
    result = CliRunner().invoke(main, ["audit-sample", "--n", "60", "--out", str(tmp_path / "broad.xlsx"),
                                       "--allocate", "optimal", "--measure", "gender"], env={"LFH_DB": str(db_path)})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert len(lines) == 2 and "drew proportionally" in lines[0] and "proportional allocation" in lines[1]


def test_predicted_gain_and_its_error_by_hand() -> None:
    # one cell in one stratum: any allocation of 20 more stories is the proportional one (gain 0); the cell's
    # half-width rests on 20 hand-labeled units, relative error 1 / sqrt(2 x 19), the gain's sqrt(2) times that
    cell = _cell("M1", ("M1", "learning", "baseline"), 0.25)
    plan = _plan([cell])
    gain = predicted_gain(plan, {("M1", "learning", "baseline"): 20}, Selection(("gender",)), min_per_stratum=3)
    assert gain.gain == pytest.approx(0.0) and gain.cells == 1
    assert gain.error == pytest.approx(math.sqrt(2) / math.sqrt(2 * 19))
    assert not gain.worthwhile and "prediction error" in gain.describe()
    nothing = predicted_gain(plan, {}, Selection(("gender",)), min_per_stratum=3)  # no story to allocate
    assert nothing.gain is None and not nothing.worthwhile and "no story to allocate" in nothing.describe()
    # two strata, the selection's cell in one: 60 stories there against 30 + 30: half-widths sqrt(1/2) apart
    noisy = _cell("M1", ("M1", "learning", "baseline"), 0.25)
    other = PlanCell("gender", "M2", ("labor", "baseline", "female"), 0.5, 1.0,
                     [StratumPart(("M2", "labor", "baseline"), 100, 1.0, _var(0.0), _var(0.25), 0)])
    plan = _plan([noisy, other])
    learning = Selection(("gender",), domains=("learning",))
    extra = {("M1", "learning", "baseline"): 60, ("M2", "labor", "baseline"): 0}
    gain = predicted_gain(plan, extra, learning, min_per_stratum=0)
    at_60, at_30 = 1.96 * math.sqrt(0.25 * 59 / 60 / 60), 1.96 * math.sqrt(0.25 * 29 / 30 / 30)
    assert gain.optimal == pytest.approx(at_60) and gain.proportional == pytest.approx(at_30)
    assert gain.gain == pytest.approx(1 - at_60 / at_30)
    assert gain.error == pytest.approx(math.hypot(1 / math.sqrt(2 * 59), 1 / math.sqrt(2 * 29)))
    assert gain.worthwhile
    # 5 stories where the selected cell needs them give it a value (5 hand-labeled units, the minimum here), the
    # proportional 3 + 2 do not: worth it, though no width compares
    extra = {("M1", "learning", "baseline"): 5, ("M2", "labor", "baseline"): 0}
    gain = predicted_gain(plan, extra, learning, min_per_stratum=0)
    assert gain.valued == (1, 0) and gain.gain is None and gain.worthwhile
    assert "corrected values in 1 selected cells against 0 proportional" in gain.describe()


def test_a_selection_of_no_cell_and_a_negative_minimum_are_refused(tmp_path: Path) -> None:
    db_path = tmp_path / "lfh.duckdb"
    _warehouse(db_path)
    env = {"LFH_DB": str(db_path)}
    # a selection that can name no cell anywhere: refused before the warehouse is read, whatever the allocation
    result = CliRunner().invoke(main, ["audit-plan", "--budget", "20", "--measure", "couple", "--domain", "labor"],
                                env=env)
    assert result.exit_code == 2 and "names no corrected cell: couples are love stories" in result.output
    for allocation in ("optimal", "proportional"):
        result = CliRunner().invoke(main, ["audit-sample", "--n", "20", "--out", str(tmp_path / "a.xlsx"),
                                           "--allocate", allocation, "--measure", "couple", "--domain", "labor"],
                                    env=env)
        assert result.exit_code == 2 and "names no corrected cell" in result.output
    with pytest.raises(AuditPlanError, match="occupation cell is the female share"):
        Selection(("occupation",), categories=("male",))
    # one that could, but names none in this warehouse (it has no couple): refused when the plan reads it
    result = CliRunner().invoke(main, ["audit-plan", "--budget", "20", "--measure", "couple"], env=env)
    # the CLI names the warehouse's file in a message about the warehouse
    warehouse = env["LFH_DB"]
    assert result.exit_code == 1 and (f"names no corrected cell: the warehouse {warehouse} has no corrected cell"
                                      in " ".join(result.output.split()))
    result = CliRunner().invoke(main, ["audit-sample", "--n", "20", "--out", str(tmp_path / "a.xlsx"), "--allocate",
                                       "optimal", "--measure", "couple"], env=env)
    assert result.exit_code == 1 and "names no corrected cell" in result.output
    assert not (tmp_path / "a.xlsx").exists()
    for command in (["audit-plan", "--budget", "20"], ["audit-sample", "--n", "20", "--out", str(tmp_path / "b.xlsx")]):
        result = CliRunner().invoke(main, [*command, "--min-per-stratum", "-3"], env=env)
        assert result.exit_code == 2 and "-3 is not in the range x>=0" in result.output, result.output
    plan = read_plan(db_path)
    with pytest.raises(AuditPlanError, match="must be 0 or more"):
        plan_allocation(plan, budget=20, min_per_stratum=-3)
    with pytest.raises(AuditSampleError, match="must be 0 or more"):
        allocate({("a",): 10}, 5, -3)


def _shuffled(frame: pl.DataFrame, seed: int) -> pl.DataFrame:
    return frame.sample(fraction=1.0, shuffle=True, seed=seed)


def test_the_same_warehouse_and_flags_give_the_same_plan(tmp_path: Path) -> None:
    # the rows in any order (SQL returns them unordered): the same cells, strata and allocation, for a selection
    # that every stratum serves alike too (ties between strata: broken by the strata's order, not the rows')
    db_path = tmp_path / "lfh.duckdb"
    _warehouse(db_path, labor=True)
    with duckdb.connect(str(db_path), read_only=True) as connection:
        units, stories = read_units(connection)
    plans = [build_plan({family: _shuffled(frame, seed) for family, frame in units.items()}, _shuffled(stories, seed),
                        SETTINGS) for seed in range(4)]
    for selection in (Selection(("gender",)), Selection(("gender",), domains=("learning",)),
                      Selection(("gender",), categories=("nonbinary",))):
        allocations = [plan_allocation(plan, budget=30, selection=selection) for plan in plans]
        assert all(list(allocation.items()) == list(allocations[0].items()) for allocation in allocations)
    assert len({tuple(cell.name for cell in plan.cells) for plan in plans}) == 1
    # and across processes (string hashing, hence set order, differs with PYTHONHASHSEED): the same plan files and
    # the same optimal draw
    outputs = []
    for hash_seed in ("1", "2"):
        out = tmp_path / f"plan{hash_seed}.csv"
        sample = tmp_path / f"sample{hash_seed}.xlsx"
        environment = {**os.environ, "LFH_DB": str(db_path), "PYTHONHASHSEED": hash_seed}
        for command in (["audit-plan", "--budget", "30", "--out", str(out)],
                        ["audit-sample", "--n", "60", "--seed", "3", "--allocate", "optimal", "--measure", "gender",
                         "--domain", "learning", "--out", str(sample)]):
            done = subprocess.run([sys.executable, "-m", "lfh.cli", *command], env=environment, capture_output=True,
                                  text=True, check=False, timeout=300)
            assert done.returncode == 0, done.stderr
        outputs.append((out.read_text(), out.with_name(f"{out.stem}_cells.csv").read_text(),
                        pl.read_excel(sample, sheet_name="audit")["Story ID"].to_list()))
    assert outputs[0] == outputs[1]
