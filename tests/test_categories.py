"""The measures' categories have one Python home (lfh.categories), equal to the dbt project's: the genders and couple
types of macros/stats/codes.sql, the all-models label and the occupation genders of the project's vars, which the
planner takes from the vars a warehouse was built with."""

from __future__ import annotations

import re

import polars as pl

from lfh.audit.plan import PlanSettings, Selection, build_plan
from lfh.build.vars import project_var_defaults
from lfh.categories import (
    ALL_MODEL_LEVEL,
    COUPLE_TYPES,
    GENDERS,
    LEVELS,
    PER_MODEL_LEVEL,
    RACIALIZED_GENDERS,
    all_models_label,
    level_of,
    occupation_genders,
)
from lfh.paths import project_root

CODES = project_root() / "macros" / "stats" / "codes.sql"


def _macro_list(name: str) -> tuple[str, ...]:
    body = re.search(r"macro " + name + r"\(\)[^%]*%\}\s*\{\{ return\(\[([^\]]*)\]\) \}\}", CODES.read_text())
    assert body, f"{name} not found in {CODES}"
    return tuple(re.findall(r"'([^']+)'", body.group(1)))


def test_the_categories_are_the_macros() -> None:
    assert _macro_list("measure_gender_codes") == GENDERS
    assert _macro_list("racialized_gender_codes") == RACIALIZED_GENDERS
    # couple_type_codes: every pair of measure genders, first <= second (the macro's loop, in its order)
    assert "if first <= second" in CODES.read_text()
    assert COUPLE_TYPES == ("female_female", "female_male", "female_nonbinary", "male_male", "male_nonbinary",
                            "nonbinary_nonbinary")


def test_the_labels_are_the_vars() -> None:
    defaults = project_var_defaults()
    assert all_models_label() == defaults["all_models_label"]
    assert occupation_genders() == tuple(defaults["occupation_gender_codes"])
    assert all_models_label({"all_models_label": "Every model"}) == "Every model"
    assert level_of(defaults["all_models_label"]) == ALL_MODEL_LEVEL and level_of("M1") == PER_MODEL_LEVEL
    assert LEVELS == (ALL_MODEL_LEVEL, PER_MODEL_LEVEL)


def test_the_planner_names_its_cells_by_the_builds_vars() -> None:
    # a warehouse built with all_models_label 'Every model': the pooled cells carry it and are the all-model level
    units = pl.DataFrame({
        "story_id": [f"s{index}" for index in range(8)], "model": ["M1"] * 4 + ["M2"] * 4,
        "stratum": [[model, "learning", "power_neutral"] for model in ["M1"] * 4 + ["M2"] * 4],
        "key": [["learning", "baseline"]] * 8, "machine": ["female", "male"] * 4,
        "hand": ["female", "male", None, None] * 2, "is_hand_labeled": [True, True, False, False] * 2})
    stories = pl.DataFrame({"story_id": units["story_id"], "model": units["model"], "domain": ["learning"] * 8,
                            "prompt_condition": ["power_neutral"] * 8, "hand": [True, True, None, None] * 2})
    settings = PlanSettings.from_vars({**project_var_defaults(), "all_models_label": "Every model"})
    plan = build_plan({"gender": units}, stories, settings)
    pooled = [cell for cell in plan.cells if cell.level == ALL_MODEL_LEVEL]
    assert pooled and {cell.model for cell in pooled} == {"Every model"}
    assert all(cell.model in ("M1", "M2") for cell in plan.cells if cell.level == PER_MODEL_LEVEL)
    assert all(Selection(("gender",), levels=(ALL_MODEL_LEVEL,)).matches(cell) for cell in pooled)
    assert Selection(("gender",), all_models_label="Every model").search("gender/Every model/learning/baseline/male")
