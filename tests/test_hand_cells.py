"""Every hand-label cell understood or rejected with its reason (lfh.landing.hand_cells), without a
warehouse: the drop-down after trimming and case-folding, formulas without a saved value, objects."""

from __future__ import annotations

import polars as pl

from lfh.landing.hand_cells import checked_hand_labels, gender_choice, has_object_character
from lfh.landing.study_labels import AUDIT_CELLS, HAND_LABEL_COLUMNS


def _labels(rows: list[tuple[int, str, str | None, str | None]]) -> pl.DataFrame:
    return pl.DataFrame([{"story_id": f"s{row}", "role": role, "gender": gender, "name": name, "name_raw": name,
                          "reference_words": None, "label_source": "audit_sample", "source_row": row}
                         for row, role, gender, name in rows],
                        schema={"story_id": pl.String, "role": pl.String, "gender": pl.String, "name": pl.String,
                                "name_raw": pl.String, "reference_words": pl.List(pl.String),
                                "label_source": pl.String, "source_row": pl.Int64}).select(HAND_LABEL_COLUMNS)


def test_drop_down_values_after_trim_and_case_fold() -> None:
    assert gender_choice(" female ") == "Female" and gender_choice("NON-BINARY") == "Non-binary"
    assert gender_choice("F") is None and gender_choice("Woman") is None and gender_choice("") is None


def test_object_character_from_the_row() -> None:
    assert has_object_character("School", "student") is True
    assert has_object_character("Relationships", None) is True and has_object_character("love", " ") is True
    assert has_object_character("School", None) is False and has_object_character("labor", "") is False
    assert has_object_character(None, None) is None  # nothing to tell: no check
    # the prompt catalog decides when it holds the query (whitespace normalised), whatever the other cells say
    neutral = "Write a story, 100 words  or less, of an American student who excels in arts class."
    assert has_object_character("School", "teacher", neutral) is False
    assert has_object_character(None, None, "a query of no catalog prompt") is None


def test_each_cell_is_understood_or_rejected_with_its_reason() -> None:
    rows = pl.DataFrame({"source_row": [1, 2, 3, 4, 5], "Role Category": ["Work", "Work", "School", None, "Work"],
                         "Object": ["boss", "boss", None, None, "boss"],
                         "Manual Object Gender:formula": [None, None, None, None, '=IF(A5="x","Male","")']})
    labels = _labels([(1, "subject", " male", "Ann"), (2, "subject", "F", "Bo"), (2, "object", "Male", "Cy"),
                      (3, "subject", "Female", None), (3, "object", "Female", "Di"), (4, "object", "Male", None),
                      (5, "object", "Male", "Ed")])
    kept, rejected = checked_hand_labels(labels, rows, AUDIT_CELLS)
    assert kept.select("source_row", "role", "gender").rows() == [
        (1, "subject", "Male"), (2, "object", "Male"), (3, "subject", "Female"), (4, "object", "Male")]
    reasons = {(row, reason): detail for row, reason, detail in rejected.rows()}
    assert set(reasons) == {(2, "invalid_gender"), (3, "object_without_object"), (5, "formula_without_value")}
    assert "'Manual Subject Gender' cell is 'F'" in reasons[(2, "invalid_gender")]
    assert "Female, Male, Non-binary, Unspecified" in reasons[(2, "invalid_gender")]
    assert '=IF(A5="x","Male","")' in reasons[(5, "formula_without_value")]
