"""Hand labels are human work, never lost or misread, and a reader never breaks a build.

One small simulated warehouse (300 stories) is built for real by `lfh build` while `lfh report`, `lfh audit-sample`
and `lfh publish` run in loops beside it; the same warehouse then serves the hand-label round trips: a workbook
filled with good, awkward and bad cells, then corrected and ingested again."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
import zipfile
from dataclasses import replace
from pathlib import Path

import duckdb
import polars as pl
import pytest
from click.testing import CliRunner
from fixtures_simulate import write_test_lexicon

from lfh.audit.sample import LAYOUT
from lfh.build.dbt import run_dbt
from lfh.cli import main
from lfh.errors import BuildError
from lfh.landing.ingest import ingest_paths
from lfh.landing.read_xlsx import column_letter
from lfh.simulate.config import load_config
from lfh.simulate.run import run_simulation

pytestmark = pytest.mark.slow
LFH = str(Path(sys.executable).parent / "lfh")
# what hand labels change, up to the agreement marts: rebuilt on the built warehouse's copy after the ingests
AGREEMENT = [f"source:raw.hand_labels+,+{mart}"
             for mart in ("fct_labeler_agreement", "fct_labeler_confusion", "fct_labeler_class_metrics")]


def _reader_loop(command: list[str], environment: dict, stop: threading.Event, results: list) -> None:
    index = 0
    while not stop.is_set():
        index += 1
        arguments = [part.replace("{i}", str(index)) for part in command]
        started = time.monotonic()
        outcome = subprocess.run([LFH, *arguments], capture_output=True, text=True, env=environment, timeout=600,
                                 check=False)
        results.append((arguments[0], outcome.returncode, outcome.stderr, time.monotonic() - started))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A real build of a small simulated corpus, with three readers looping beside it from before it starts."""
    root = tmp_path_factory.mktemp("human_work")
    db_path = root / "warehouse" / "lfh.duckdb"
    write_test_lexicon(db_path)
    config = replace(load_config(), stories_per_prompt=1, samples_per_story=1, seed=11)
    simulation = run_simulation(config, root / "landing", db_path)
    ingest_paths([simulation.stories_path, simulation.labels_path], db_path)
    environment = {**os.environ, "LFH_DB": str(db_path)}
    stop = threading.Event()
    results: list = []
    loops = [["report", "--out", str(root / "report")],
             ["audit-sample", "--n", "20", "--min-per-stratum", "1", "--out", str(root / "sample_{i}.xlsx")],
             ["publish", "--to", str(root / "published")]]
    threads = [threading.Thread(target=_reader_loop, args=(loop, environment, stop, results)) for loop in loops]
    for thread in threads:
        thread.start()
    time.sleep(1.0)  # readers are starting up or running when the build asks for the warehouse
    build = subprocess.run([LFH, "build"], capture_output=True, text=True, env=environment, timeout=1200,
                           check=False)
    finished = len(results)
    time.sleep(0.5)
    while len(results) < finished + len(loops):  # at least one more round of each reader after the build
        time.sleep(0.5)
    stop.set()
    for thread in threads:
        thread.join(timeout=600)
    return {"db": db_path, "root": root, "build": build, "readers": results, "env": environment}


def test_readers_in_a_loop_never_break_a_real_build(built: dict) -> None:
    build = built["build"]
    assert build.returncode == 0, build.stdout[-2000:] + build.stderr[-2000:]
    readers = built["readers"]
    assert len(readers) >= 6
    for command, returncode, stderr, _seconds in readers:
        assert "Traceback" not in stderr and "IOException" not in stderr and "Conflicting lock" not in stderr, stderr
        # before the build's marts exist a reader says so in one line; it never fails for the file being busy
        assert returncode == 0 or ("run `lfh build`" in stderr.lower() and len(stderr.strip().splitlines()) == 1) \
            or "lfh ingest` and `lfh build`" in stderr, (command, stderr)
    waited = [reader for reader in readers if "waiting for pid" in reader[2]]
    assert waited, "no reader ran into the build: the test did not test anything"
    for command, returncode, stderr, _seconds in waited:
        # it waited for the whole build, then read the finished warehouse
        assert returncode == 0, (command, stderr)
    for command in ("report", "audit-sample", "publish"):
        assert any(reader[0] == command and reader[1] == 0 for reader in readers), command


def test_an_inverted_interval_and_nulls_fail_the_build(built: dict, tmp_path: Path) -> None:
    """valid_interval and not_null_columns can fail: the issue's lambda = 2 output (share 1.0, lower 1.839, upper 1.0)
    and nulls in two columns of the grain, planted in a copy; not_null_columns fails once per column with nulls."""
    copy = tmp_path / "copy" / "lfh.duckdb"  # the build's file name: dbt reuses its parse (lfh.build.runner)
    copy.parent.mkdir()
    shutil.copy(built["db"], copy)
    selection = ["--select", "fct_representation_ratios,test_name:valid_interval",
                 "fct_representation_ratios,test_name:not_null_columns"]
    # passes as built: the fixture's `lfh build` ran every data test, these among them, on this very file
    assert built["build"].returncode == 0, built["build"].stdout[-2000:]
    with duckdb.connect(str(copy)) as connection:
        connection.execute("update marts.fct_representation_ratios set share_ci_lower = 1.839, share_ci_upper = 1.0 "
                           "where rowid = (select min(rowid) from marts.fct_representation_ratios)")
        connection.execute("update marts.fct_representation_ratios set domain = null, baseline_set = null "
                           "where rowid in (select rowid from marts.fct_representation_ratios limit 3)")
    with pytest.raises(BuildError) as failed:
        run_dbt(["test", *selection, "--store-failures"], db_path=copy, capture=True)
    message = str(failed.value)
    assert "valid_interval" in message and "not_null_columns" in message, message
    with duckdb.connect(str(copy), read_only=True) as connection:
        (schema, table), = connection.execute(
            "select table_schema, table_name from information_schema.tables "
            "where table_schema like '%dbt_test__audit' and table_name like 'not_null_columns%'").fetchall()
        failing = connection.execute(f'select column_name, null_rows from "{schema}"."{table}"').fetchall()
    assert sorted(failing) == [("baseline_set", 3), ("domain", 3)]


def test_audit_sample_never_overwrites_a_workbook(built: dict, tmp_path: Path) -> None:
    env = {"LFH_DB": str(built["db"])}
    out = tmp_path / "audit.xlsx"
    out.write_bytes(b"hours of hand labels")
    refused = CliRunner().invoke(main, ["audit-sample", "--n", "60", "--out", str(out)], env=env)
    assert refused.exit_code == 1 and "already exists" in refused.output and "--force" in refused.output
    assert out.read_bytes() == b"hours of hand labels"
    missing = CliRunner().invoke(main, ["audit-sample", "--n", "60", "--out", str(tmp_path / "nope" / "a.xlsx")],
                                 env=env)
    assert missing.exit_code == 1 and "does not exist" in missing.output and not (tmp_path / "nope").exists()
    for result in (refused, missing):
        assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output, result.output
    forced = CliRunner().invoke(main, ["audit-sample", "--n", "60", "--out", str(out), "--force"], env=env)
    assert forced.exit_code == 0, forced.output
    assert zipfile.is_zipfile(out) and not list(tmp_path.glob(".*partial"))


def _without_saved_value(path: Path, cell: str, formula: str) -> None:
    """What a spreadsheet library (openpyxl) writes: a formula with no saved result in the cell."""
    edited = path.with_suffix(".tmp")
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(edited, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                text, count = re.subn(rf'<c r="{cell}"[^>]*?(/>|>.*?</c>)', f'<c r="{cell}"><f>{formula}</f></c>',
                                      data.decode())
                assert count == 1, cell
                data = text.encode()
            target.writestr(item, data)
    edited.replace(path)


def _pick(frame: pl.DataFrame) -> dict[str, int]:
    """Row positions (0-based) for each case: stories with and without an object character."""
    neutral = [index for index, row in enumerate(frame.iter_rows(named=True))
               if not row["Object"] and (row["Role Category"] or "").lower() not in ("love", "relationships")]
    with_object = [index for index, row in enumerate(frame.iter_rows(named=True)) if row["Object"]]
    assert len(neutral) >= 3 and len(with_object) >= 3, frame.select("Role Category", "Object")
    return {"female_lower": with_object[0], "bad_f": with_object[1], "woman": with_object[2],
            "object_on_neutral": neutral[0], "formula": neutral[1], "no_check": neutral[2]}


def test_hand_labels_are_understood_or_rejected_and_the_latest_wins(built: dict, tmp_path: Path) -> None:
    db = tmp_path / "labels" / "lfh.duckdb"
    db.parent.mkdir()
    shutil.copy(built["db"], db)
    env = {"LFH_DB": str(db)}
    sample = tmp_path / "sample.xlsx"
    drawn = CliRunner().invoke(main, ["audit-sample", "--n", "60", "--out", str(sample), "--seed", "5"], env=env)
    assert drawn.exit_code == 0, drawn.output
    frame = pl.read_excel(sample, sheet_name="audit", engine="calamine", infer_schema_length=0)
    rows = _pick(frame)
    subject = pl.Series(["Male"] * frame.height)
    subject[rows["female_lower"]] = "  female "   # trimmed and case-folded: Female
    subject[rows["bad_f"]] = "F"                   # not in the drop-down
    subject[rows["woman"]] = "Woman"               # not in the drop-down
    subject[rows["formula"]] = "placeholder"       # becomes a formula without a saved value below
    object_gender = pl.Series([None] * frame.height, dtype=pl.String)
    object_gender[rows["object_on_neutral"]] = "Female"  # a story without an object character
    check = frame["Story Check"].to_list()
    check[rows["no_check"]] = None
    filled = frame.with_columns(subject.alias("Manual Subject Gender"), object_gender.alias("Manual Object Gender"),
                                pl.lit("Unspecified").alias("Manual Subject Name"),
                                pl.Series("Story Check", check, dtype=pl.String))
    first = tmp_path / "filled.xlsx"
    filled.write_excel(first, worksheet="audit")
    cell = f"{column_letter(LAYOUT.index('Manual Subject Gender'))}{rows['formula'] + 2}"
    _without_saved_value(first, cell, 'UPPER("male")')

    landed = CliRunner().invoke(main, ["ingest", str(first)], env=env)
    assert landed.exit_code == 0, landed.output
    source_row = {case: position + 1 for case, position in rows.items()}
    with duckdb.connect(str(db), read_only=True) as connection:
        rejects = {(row, reason): detail for row, reason, detail in connection.execute(
            "select source_row, reason, detail from raw.rejects where target_table = 'hand_labels'").fetchall()}
        labels = connection.execute("select story_id, role, gender from raw.hand_labels").fetchall()
    assert set(rejects) == {(source_row["bad_f"], "invalid_gender"), (source_row["woman"], "invalid_gender"),
                            (source_row["object_on_neutral"], "object_without_object"),
                            (source_row["formula"], "formula_without_value"),
                            (source_row["no_check"], "no_story_check")}, rejects
    bad = rejects[(source_row["bad_f"], "invalid_gender")]
    assert "'Manual Subject Gender'" in bad and "'F'" in bad and "Female, Male, Non-binary, Unspecified" in bad
    assert 'UPPER("male")' in rejects[(source_row["formula"], "formula_without_value")]
    assert "text" not in rejects[(source_row["no_check"], "no_story_check")].split("(")[0]  # not text_edited
    for case in ("bad_f", "woman", "formula", "object_on_neutral"):  # the ingest says what it did with each cell,
        assert f"row {source_row[case] + 1}:" in landed.output           # at the row the spreadsheet shows
    ids = frame["Story ID"].to_list()
    stored = {(story, role): gender for story, role, gender in labels}
    assert stored[(ids[rows["female_lower"]], "subject")] == "Female"
    assert (ids[rows["bad_f"]], "subject") not in stored and (ids[rows["formula"]], "subject") not in stored
    assert (ids[rows["object_on_neutral"]], "object") not in stored
    assert (ids[rows["object_on_neutral"]], "subject") in stored  # the row's good cells still land
    labeled = frame.height - 4  # bad_f, woman, formula and no_check carry no subject label

    # a person corrects two cells and ingests the workbook again: the latest wins, the earlier value is kept
    corrected_rows = [index for index in range(frame.height) if index not in rows.values()][:2]
    fixed = subject.to_list()
    for index in corrected_rows:
        fixed[index] = "Female"
    fixed[rows["bad_f"]] = "Female"  # the rejected cell fixed: a new label, not a change
    second = tmp_path / "filled.xlsx"
    filled.with_columns(pl.Series("Manual Subject Gender", fixed)).write_excel(second, worksheet="audit")
    again = CliRunner().invoke(main, ["ingest", str(second)], env=env)
    assert again.exit_code == 0, again.output
    assert "3 landed" in again.output and "2 hand labels changed" in again.output, again.output
    with duckdb.connect(str(db), read_only=True) as connection:
        history = connection.execute(
            "select gender, load_id from raw.hand_labels where story_id = ? and role = 'subject' order by loaded_at",
            [ids[corrected_rows[0]]]).fetchall()
    assert [gender for gender, _ in history] == ["Male", "Female"] and history[0][1] != history[1][1]

    run_dbt(["build", "--select", *AGREEMENT], db_path=db, capture=True)
    with duckdb.connect(str(db), read_only=True) as connection:
        paired = dict(connection.execute(
            "select story_id, hand_gender from intermediate.int_hand_labels_paired where role = 'subject'").fetchall())
        confusion_hand = {row[0] for row in connection.execute(
            "select distinct hand_gender from marts.fct_labeler_confusion").fetchall()}
        accuracy_n = connection.execute(
            "select n from marts.fct_labeler_agreement where model = 'All' and domain = 'all' and role = 'subject' "
            "and metric = 'gender_accuracy'").fetchone()[0]
    assert paired[ids[corrected_rows[0]]] == paired[ids[corrected_rows[1]]] == "female"
    assert paired[ids[rows["female_lower"]]] == "female" and paired[ids[rows["bad_f"]]] == "female"
    assert "unmapped" not in confusion_hand
    assert accuracy_n == len(paired) == labeled + 1  # one label per character, the corrected value counted once
