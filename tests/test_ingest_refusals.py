"""Bad input refused with its reason, per row where it is a row, at the row the spreadsheet shows: a warehouse name
DuckDB or the project uses, a workbook header given twice, one story on two rows with different hand labels, hand
labels of stories the warehouse lacks. Small files, no build."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
import xlsxwriter
from click.testing import CliRunner

from lfh.audit.sample import CHECK_COLUMN, MANUAL_COLUMNS, STORY_ID_COLUMN, story_check
from lfh.cli import main

STORIES = Path(__file__).parent / "fixtures" / "measures" / "stories.jsonl"
HEADER = [STORY_ID_COLUMN, "LLM Response", CHECK_COLUMN, *MANUAL_COLUMNS]


def _texts() -> dict[str, str]:
    rows = [json.loads(line) for line in STORIES.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {row["story_id"]: row["text"] for row in rows}


def write_workbook(path: Path, header: list[str], rows: list[list[str | None]]) -> None:
    workbook = xlsxwriter.Workbook(str(path))
    sheet = workbook.add_worksheet("audit")
    for column, name in enumerate(header):
        sheet.write(0, column, name)
    for index, row in enumerate(rows, start=1):
        for column, value in enumerate(row):
            if value is not None:
                sheet.write(index, column, value)
    workbook.close()


def labeled(story_id: str, text: str, subject_gender: str | None, subject_name: str | None = None) -> list:
    return [story_id, text, story_check(story_id, text), subject_gender, None, subject_name, None]


@pytest.mark.parametrize("name", ["main", "temp", "system", "Staging", "marts"])
def test_a_reserved_warehouse_name_is_refused_before_anything_is_written(tmp_path: Path, name: str) -> None:
    db = tmp_path / f"{name}.duckdb"
    for arguments in (["ingest", str(STORIES)], ["lexicon", "--skip-census", "--skip-wikipedia", "--skip-surnames"],
                      ["build"], ["audit-plan", "--budget", "60"]):
        result = CliRunner().invoke(main, arguments, env={"LFH_DB": str(db)})
        assert result.exit_code != 0 and isinstance(result.exception, SystemExit), result.output
        assert f"cannot be called {name!r}" in result.output and str(db) in result.output, result.output
    assert not db.exists()


@pytest.fixture
def stories_landed(warehouse: Path) -> Path:
    result = CliRunner().invoke(main, ["ingest", str(STORIES)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return warehouse


def test_a_header_given_twice_refuses_the_workbook(stories_landed: Path, tmp_path: Path) -> None:
    texts = _texts()
    workbook = tmp_path / "twice.xlsx"
    write_workbook(workbook, [*HEADER, "Manual Subject Gender"],
                   [[*labeled("measures-001", texts["measures-001"], "Female"), "Male"]])
    result = CliRunner().invoke(main, ["ingest", str(workbook)])
    assert result.exit_code != 0, result.output
    assert "'Manual Subject Gender' in columns D and H" in result.output, result.output
    with duckdb.connect(str(stories_landed), read_only=True) as connection:
        assert connection.execute("select count(*) from raw.hand_labels").fetchone() == (0,)


def test_conflicting_rows_unknown_stories_and_row_numbers(stories_landed: Path, tmp_path: Path) -> None:
    texts = _texts()
    workbook = tmp_path / "filled.xlsx"
    write_workbook(workbook, HEADER, [
        labeled("measures-001", texts["measures-001"], "Female"),    # spreadsheet row 2: conflicts with row 4
        labeled("measures-002", texts["measures-002"], "Female"),    # row 3: agrees with row 5
        labeled("measures-001", texts["measures-001"], "Male"),      # row 4
        labeled("measures-002", texts["measures-002"], " female"),   # row 5: the same label, spelled loosely
        labeled("elsewhere-9", "A story from another warehouse.", "Male"),  # row 6: not in this warehouse
        labeled("measures-003", texts["measures-003"], "F"),         # row 7: not a drop-down value
    ])
    result = CliRunner().invoke(main, ["ingest", str(workbook)])
    assert result.exit_code == 0, result.output
    with duckdb.connect(str(stories_landed), read_only=True) as connection:
        labels = connection.execute("select story_id, role, gender from raw.hand_labels order by all").fetchall()
        rejects = connection.execute("select source_row, reason, detail from raw.rejects "
                                     "where target_table = 'hand_labels' order by all").fetchall()
    assert labels == [("measures-002", "subject", "Female")]  # neither conflicting row, the agreeing pair once
    reasons = {(row, reason) for row, reason, _ in rejects}
    assert reasons == {(1, "conflicting_duplicate"), (3, "conflicting_duplicate"), (5, "story_not_in_warehouse"),
                       (6, "invalid_gender")}, rejects
    conflict = next(detail for row, reason, detail in rejects if reason == "conflicting_duplicate")
    assert "row 2: Female" in conflict and "row 4: Male" in conflict  # the rows the spreadsheet shows
    unknown = next(detail for _, reason, detail in rejects if reason == "story_not_in_warehouse")
    assert "elsewhere-9" in unknown and "spreadsheet row 6" in unknown
    for row, reason in ((2, "conflicting_duplicate"), (4, "conflicting_duplicate"), (6, "story_not_in_warehouse"),
                        (7, "invalid_gender")):
        assert f"row {row}: {reason}" in result.output, result.output
