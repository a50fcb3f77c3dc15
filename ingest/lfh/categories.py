"""The categories the measures are defined over, as the dbt project defines them: the one Python home of each.

- GENDERS: the genders of the gender denominators (macros/stats/codes.sql, measure_gender_codes);
  COUPLE_TYPES: every unordered pair of them, first_second with first <= second (couple_type_codes).
  RACIALIZED_GENDERS: the genders of the race x gender measures (racialized_gender_codes).
  tests/test_categories.py checks them against the macros.
- The all-models label and the occupation genders are dbt vars (all_models_label, occupation_gender_codes): read
  from the vars a warehouse was built with where there is one (lfh.audit.plan.build_vars), else from the project's
  (dbt_project.yml).
- LEVELS: the two levels of a corrected cell, every model together or one model, as the commands and tables
  name them.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

GENDERS = ("female", "male", "nonbinary")
RACIALIZED_GENDERS = ("female", "male")
COUPLE_TYPES = tuple(f"{first}_{second}" for first in GENDERS for second in GENDERS if first <= second)
ALL_MODEL_LEVEL = "all-model"
PER_MODEL_LEVEL = "per-model"
LEVELS = (ALL_MODEL_LEVEL, PER_MODEL_LEVEL)


@lru_cache(maxsize=1)
def _project_vars() -> dict[str, Any]:
    """The project's vars (dbt_project.yml), read once per process."""
    from lfh.build.vars import project_var_defaults

    return project_var_defaults()


def _var(name: str, dbt_vars: dict[str, Any] | None) -> Any:
    if dbt_vars is not None and dbt_vars.get(name) is not None:
        return dbt_vars[name]
    return _project_vars()[name]


def all_models_label(dbt_vars: dict[str, Any] | None = None) -> str:
    """The `model` of the rows that aggregate every model (var all_models_label)."""
    return str(_var("all_models_label", dbt_vars))


def occupation_genders(dbt_vars: dict[str, Any] | None = None) -> tuple[str, ...]:
    """The genders of an occupation's gender denominator (var occupation_gender_codes)."""
    return tuple(_var("occupation_gender_codes", dbt_vars))


def level_of(model: str, dbt_vars: dict[str, Any] | None = None, label: str | None = None) -> str:
    """The level of a row of `model`: ALL_MODEL_LEVEL for the all-models rows, PER_MODEL_LEVEL otherwise."""
    return ALL_MODEL_LEVEL if model == (label if label is not None else all_models_label(dbt_vars)) else PER_MODEL_LEVEL
