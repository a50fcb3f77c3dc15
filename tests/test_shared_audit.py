"""tests/fixtures_shared_audit.py's shortcuts give what the long way gives: the correction SQL compiled for many var
sets in one dbt process equals a fresh `dbt compile` with those vars, and the models audit_with_vars rebuilds on a
copy of the audit are every model whose SQL the vars change (each model compiled with and without them)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures_shared_audit import (
    AUDIT_VAR_SETS,
    CORRECTION_VAR_SETS,
    models_reading,
    var_key,
)

from bench.correction_check import compiled_correction_sql


@pytest.mark.slow  # compiles the dbt project: tests/tiers.py
def test_one_process_compile_equals_a_fresh_dbt_compile(correction_sql: Callable[[dict], dict[str, str]],
                                                        tmp_path: Path) -> None:
    """The last var set the one process compiles (after all the others, on the same parsed manifest; three vars
    away from the project's defaults) against `dbt compile` in a process of its own."""
    dbt_vars = CORRECTION_VAR_SETS[-1]
    assert correction_sql(dbt_vars) == compiled_correction_sql(tmp_path / "empty.duckdb", tmp_path / "target",
                                                               dbt_vars)


@pytest.mark.slow  # compiles the dbt project (once per run, shared)
def test_an_unlisted_var_set_is_refused_with_what_to_do(correction_sql: Callable[[dict], dict[str, str]]) -> None:
    with pytest.raises(KeyError, match="CORRECTION_VAR_SETS"):
        correction_sql({"ppi_machine_mean": "unlabeled"})


@pytest.mark.slow  # compiles the dbt project (once per run, shared)
def test_models_reading_are_the_models_the_vars_change(compiled_models: dict[str, dict[str, str]]) -> None:
    """Every model compiled at the defaults and under each of AUDIT_VAR_SETS: the models whose SQL differs are
    among models_reading (their descendants only ref them, so their SQL does not change: the rebuild selects them
    with a trailing +)."""
    default = compiled_models[var_key({})]
    for dbt_vars in AUDIT_VAR_SETS:
        changed = {model for model, code in compiled_models[var_key(dbt_vars)].items() if code != default[model]}
        assert changed, f"{dbt_vars}: no model's SQL changed: the vars are not read"
        assert changed <= set(models_reading(dbt_vars)), (dbt_vars, sorted(changed - set(models_reading(dbt_vars))))


def test_models_reading_follows_macros(tmp_path: Path) -> None:
    """A var read in a macro that another macro calls marks the model calling the outer one, and only it."""
    (tmp_path / "macros" / "inner").mkdir(parents=True)
    (tmp_path / "models" / "deep").mkdir(parents=True)
    (tmp_path / "macros" / "inner" / "a.sql").write_text(
        "{% macro inner_rule() -%}\n  {{ var(\"the_rule\") }}\n{%- endmacro %}\n"
        "{% macro other() %}select 1{% endmacro %}\n", encoding="utf-8")
    (tmp_path / "macros" / "outer.sql").write_text(
        "{%- macro outer_rule(x) -%} {{ inner_rule() }} {%- endmacro -%}", encoding="utf-8")
    models = {"calls_outer": "select {{ outer_rule(1) }}", "direct": "select '{{ var('the_rule', 'x') }}'",
              "calls_other": "select {{ other() }}", "similar_name": "select {{ var('the_rule_2') }}"}
    for name, sql in models.items():
        (tmp_path / "models" / "deep" / f"{name}.sql").write_text(sql, encoding="utf-8")
    assert models_reading(["the_rule"], root=tmp_path) == ["calls_outer", "direct"]


def test_audit_with_vars_refuses_an_unchecked_var_set(audit_with_vars: Callable[[dict], Path]) -> None:
    with pytest.raises(KeyError, match="AUDIT_VAR_SETS"):
        audit_with_vars({"gender_rule": "study", "vote_threshold": 0.5})
