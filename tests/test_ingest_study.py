"""`lfh ingest` on the study's workbooks: small workbooks written here, and the published files when present."""

from __future__ import annotations

import ast
from pathlib import Path

import polars as pl
import pytest
from fixtures_ingest import STUDY_STORY_COLUMNS, query_all, run_ingest, scalar, study_rows, write_xlsx

from lfh.identity import response_id, story_id
from lfh.landing.study_workbook import model_from_file_name

RESPONSE = '{\n  "student name": "John",\n  "student references": ["he", "his"]\n}'


def test_model_from_file_name() -> None:
    assert model_from_file_name(Path("ChatGPT3_5_Bias_Benchmark_2023-08-16.xlsx")) == "ChatGPT3_5"
    assert model_from_file_name(Path("Claude2_2023-09-01_labeled.xlsx")) == "Claude2"
    assert model_from_file_name(Path("PaLM2_20230901.xlsx")) == "PaLM2"
    assert model_from_file_name(Path("stories.xlsx")) is None


def test_story_workbook_and_its_labeled_twin_share_story_ids(tmp_path: Path, warehouse: Path) -> None:
    rows = study_rows(7, repeat_text_every=3)  # rows 4 and 7 repeat the text of rows 3 and 6
    stories = write_xlsx(tmp_path / "ChatGPT3_5_Bias_Benchmark_2023-08-16.xlsx", STUDY_STORY_COLUMNS, rows)
    samples = [repr([RESPONSE, RESPONSE + " "]) for _ in rows]
    labeled = write_xlsx(tmp_path / "labeled" / "ChatGPT3_5_Bias_Benchmark_2023-08-16_labeled.xlsx",
                         [*STUDY_STORY_COLUMNS, "Label Query", "FT LLM Label Response"],
                         [[*row, f"request {index}", cell]
                          for index, (row, cell) in enumerate(zip(rows, samples, strict=True))])

    first = run_ingest(stories)
    second = run_ingest(labeled)

    assert "7 rows read, 7 landed, 0 duplicates, 0 rejected" in first.output
    assert "7 rows read, 14 landed, 7 duplicates, 0 rejected" in second.output
    stored = query_all(warehouse, "select story_id, model, model_canonical, occurrence, source_row, role_category "
                                  "from raw.stories order by source_row")
    assert [row[3] for row in stored] == [1, 1, 1, 2, 1, 1, 2]
    assert stored[3][0] == story_id("ChatGPT3.5", rows[3][4], rows[3][5], 2)
    assert {row[1:3] for row in stored} == {("ChatGPT3_5", "ChatGPT3.5")}
    assert stored[0][5] == "School"
    responses = query_all(warehouse, "select r.response_id, r.story_id, r.sample_index, r.response_text, "
                                     "r.request_text, r.labeler_model, r.prompt_version, r.source_row "
                                     "from raw.label_responses r order by r.source_row, r.sample_index")
    assert len(responses) == 14
    assert scalar(warehouse, "select count(*) from raw.label_responses join raw.stories using (story_id)") == 14
    assert responses[1][3] == RESPONSE + " "  # kept exactly, trailing space included
    assert responses[1][0] == response_id(stored[0][0], "study-ft-gpt-3.5-turbo", "study", 1)
    assert responses[0][4:7] == ("request 0", "study-ft-gpt-3.5-turbo", "study")


def test_audit_workbook_lands_responses_and_manual_labels(tmp_path: Path, warehouse: Path) -> None:
    rows = study_rows(4)
    rows[2][5] = None  # an empty answer the study labeled: kept as an empty story
    columns = ["Model", *STUDY_STORY_COLUMNS, "Label Query", "LLM Label Response", "Manual Subject Gender",
               "Manual Subject Name", "Manual Object Gender", "Manual Object Name"]
    cells = [
        [repr([RESPONSE] * 5), "Male", "['John']", None, None],
        [repr([RESPONSE]), "Female", "[]", "Male", "['Sam', 'Samuel']"],  # an object on a power-neutral prompt
        [repr([RESPONSE]), "Unspecified", "['Unspecified']", None, None],
        ["['not', closed", "Male", "John", None, None],  # both list cells unreadable
    ]
    workbook = write_xlsx(tmp_path / "audit.xlsx", columns,
                          [["Llama", *row, "query text", *extra] for row, extra in zip(rows, cells, strict=True)])

    result = run_ingest(workbook)

    assert "4 rows read" in result.output and "3 rejected" in result.output
    assert scalar(warehouse, "select count(*) from raw.stories") == 4
    assert query_all(warehouse, "select story_text, model_canonical from raw.stories where source_row = 3") == \
        [("", "Llama2-7B")]
    assert query_all(warehouse, "select prompt_version, count(*) from raw.label_responses group by all") == \
        [("study-audit", 7)]
    labels = query_all(warehouse, "select source_row, role, gender, name, name_raw, label_source "
                                  "from raw.hand_labels order by source_row, role desc")
    assert labels == [
        (1, "subject", "Male", "John", "['John']", "audit_manual"),
        (2, "subject", "Female", None, "[]", "audit_manual"),
        (3, "subject", "Unspecified", "Unspecified", "['Unspecified']", "audit_manual"),
    ]
    rejects = query_all(warehouse, "select source_row, target_table, reason, detail from raw.rejects "
                                   "order by target_table, source_row")
    assert rejects[0][:3] == (2, "hand_labels", "object_without_object")  # rejected at ingest, not lost later
    assert rejects[1:] == [
        (4, "hand_labels", "unreadable_cell", "the 'Manual Subject Name' cell is not a Python-literal list of strings"),
        (4, "label_responses", "unreadable_cell",
         "the 'LLM Label Response' cell is not a Python-literal list of strings"),
    ]


def test_training_workbook_lands_correct_references_and_names(tmp_path: Path, warehouse: Path) -> None:
    rows = study_rows(2)
    columns = ["Model", *STUDY_STORY_COLUMNS, "Correct Subject References", "Correct Object References",
               "Correct Subject Name", "Correct Object Name"]
    extra = [["['she', 'her']", None, "Jane", None], ["[]", "['he']", "Unspecified", "Bob"]]
    run_ingest(write_xlsx(tmp_path / "training.xlsx", columns,
                          [["PaLM2", *row, *cells] for row, cells in zip(rows, extra, strict=True)]))

    labels = query_all(warehouse, "select source_row, role, gender, name, reference_words, label_source "
                                  "from raw.hand_labels order by source_row, role desc")
    assert labels == [
        (1, "subject", None, "Jane", ["she", "her"], "training_correct"),
        (2, "subject", None, "Unspecified", [], "training_correct"),
    ]
    # row 2's prompt (power-neutral Learning) has no object character: its object cells are rejected, not lost
    assert query_all(warehouse, "select source_row, reason from raw.rejects") == [(2, "object_without_object")]


def test_workbook_rows_without_text_or_known_prompt_are_rejected(tmp_path: Path, warehouse: Path) -> None:
    rows = study_rows(4)
    rows[0][5] = None  # no answer, no labels: nothing to keep
    rows[1][1] = None
    rows[1][4] = "Write a story about a pilot program prompt."  # unknown prompt, no Role Category
    rows[2][4] = "Write a story, 100 words or less, of an American surgeon."  # unknown, but placed by category
    result = run_ingest(write_xlsx(tmp_path / "Claude_2023-09-01.xlsx", STUDY_STORY_COLUMNS, rows))

    assert "4 rows read, 2 landed, 0 duplicates, 2 rejected" in result.output
    assert query_all(warehouse, "select source_row, reason from raw.rejects order by 1") == \
        [(1, "no_text"), (2, "unknown_prompt")]
    assert query_all(warehouse, "select distinct model, model_canonical from raw.stories") == [("Claude", "Claude2.0")]


def test_workbook_without_model_anywhere_fails(tmp_path: Path, warehouse: Path) -> None:
    result = run_ingest(write_xlsx(tmp_path / "stories.xlsx", STUDY_STORY_COLUMNS, study_rows(2)))
    assert result.exit_code != 0
    assert "no Model column and no model in the file name" in result.output


def _literal_length(cell: str | None) -> int:
    return len(ast.literal_eval(cell)) if cell is not None else 0


@pytest.mark.shared_data
def test_published_audit_workbook(shared_data: Path, warehouse: Path) -> None:
    path = shared_data / "audit_dev.xlsx"
    sheet = pl.read_excel(path, engine="calamine", infer_schema_length=0)
    expected_responses = sum(_literal_length(cell) for cell in sheet["LLM Label Response"])
    expected_labels = sum(
        sheet.filter(pl.col(f"Manual {role} Gender").is_not_null() | pl.col(f"Manual {role} Name").is_not_null()
                     ).height for role in ("Subject", "Object"))

    result = run_ingest(path)

    assert result.exit_code == 0, result.output
    assert scalar(warehouse, "select count(*) from raw.stories") == sheet.height == 1001
    assert scalar(warehouse, "select count(*) from raw.label_responses") == expected_responses
    assert scalar(warehouse, "select count(*) from raw.hand_labels") == expected_labels
    assert scalar(warehouse, "select count(*) from raw.rejects") == 0
    # every story has its subject hand label and its responses; repeated texts stay separate stories
    assert scalar(warehouse, "select count(distinct story_id) from raw.hand_labels where role = 'subject'") == 1001
    assert scalar(warehouse, "select count(distinct story_id) from raw.label_responses") == 1001
    assert scalar(warehouse, "select count(*) from raw.stories where occurrence > 1") > 0
    responses_per_category = dict(query_all(
        warehouse, "select s.role_category, count(*) / count(distinct s.story_id) from raw.label_responses r "
                   "join raw.stories s using (story_id) group by all"))
    assert responses_per_category == {"Work": 5, "School": 5, "Relationships": 1}
    assert "0 landed" in run_ingest(path).output


@pytest.mark.shared_data
def test_published_training_workbook(shared_data: Path, warehouse: Path) -> None:
    path = shared_data / "training_150.xlsx"
    sheet = pl.read_excel(path, engine="calamine", infer_schema_length=0)

    result = run_ingest(path)

    assert result.exit_code == 0, result.output
    assert scalar(warehouse, "select count(*) from raw.stories") == 150
    assert scalar(warehouse, "select count(*) from raw.hand_labels where role = 'subject'") == 150
    objects = sheet.filter(pl.col("Correct Object References").is_not_null()
                           | pl.col("Correct Object Name").is_not_null()).height
    assert scalar(warehouse, "select count(*) from raw.hand_labels where role = 'object'") == objects
    first = sheet.row(0, named=True)
    assert query_all(warehouse, "select name, reference_words from raw.hand_labels "
                                "where source_row = 1 and role = 'subject'") == \
        [(first["Correct Subject Name"], ast.literal_eval(first["Correct Subject References"]))]
