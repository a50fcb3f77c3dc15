"""The measure marts against an independent computation (tests/test_measures_reference.py).

Builds the whole project on a small corpus kept in the repo (tests/fixtures/measures: stories and label
responses in the project's JSONL format, a custom first-name lexicon), landed with `lfh ingest` and
`lfh lexicon --custom ... --skip-census --skip-wikipedia --skip-surnames`, then recomputes every measure from
fct_characters in Python and compares it with the marts, row by row.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest
from test_measures_reference import (
    median_racialized_subordination,
    name_coverage,
    orientation_ratios,
    read_baselines,
    read_romantic_prompts,
    representation_ratios,
    subordination_ratios,
    top_names,
)
from test_occupation_reference import occupation_ratios, read_occupations, read_workforce

from lfh.build.fingerprint import unit_tests_digest
from lfh.build.unit_tests import passed_at, unit_tests_key
from lfh.paths import project_root

CHARACTER_COLUMNS = (
    "story_id, role, model, domain, condition, prompt_id, role_text, gender, first_name, name_matched, has_race, "
    "race_source, "
    "weight_aian, weight_asian, weight_black, weight_latine, weight_mena, weight_nhpi, weight_white, "
    "weight_multiracial"
)


def fetch(connection: duckdb.DuckDBPyConnection, sql: str) -> list[dict[str, object]]:
    cursor = connection.execute(sql)
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def same(actual: object, expected: object) -> bool:
    if actual is None or expected is None:
        return actual is None and expected is None
    if isinstance(expected, float | int) and not isinstance(expected, bool):
        return math.isclose(float(actual), float(expected), rel_tol=1e-9, abs_tol=1e-12)
    return actual == expected


def compare(table: str, mart_rows: list[dict[str, object]], grain: tuple[str, ...],
            expected: dict[tuple, dict[str, object]]) -> list[str]:
    """Differences between a mart and the reference, as readable lines (empty when they agree)."""
    problems: list[str] = []
    actual = {tuple(row[column] for column in grain): row for row in mart_rows}
    if len(actual) != len(mart_rows):
        problems.append(f"{table}: duplicate grain rows")
    for key in sorted(set(expected) - set(actual), key=str):
        problems.append(f"{table}: missing row {key}")
    for key in sorted(set(actual) - set(expected), key=str):
        problems.append(f"{table}: unexpected row {key}")
    for key in set(actual) & set(expected):
        for column, value in expected[key].items():
            if column in grain:
                continue
            if not same(actual[key][column], value):
                problems.append(f"{table} {key} {column}: mart {actual[key][column]!r}, reference {value!r}")
    return problems


def check_measure_marts(connection: duckdb.DuckDBPyConnection, seeds: Path,
                        baseline_set: str = "census_2022") -> list[str]:
    """Every measure mart against the reference computed from marts.fct_characters."""
    characters = fetch(connection, f"select {CHARACTER_COLUMNS} from marts.fct_characters")
    baselines = read_baselines(seeds / "baselines.csv", baseline_set)
    checks: list[tuple[str, tuple[str, ...], Callable[[], dict[tuple, dict[str, object]]]]] = [
        ("fct_representation_ratios", ("model", "domain", "condition", "race", "gender"),
         lambda: representation_ratios(characters, baselines)),
        ("fct_subordination_ratios", ("model", "domain", "race", "gender"),
         lambda: subordination_ratios(characters)),
        ("fct_sexual_orientation_ratios", ("model", "couple_type"),
         lambda: orientation_ratios(characters, baselines, read_romantic_prompts(seeds / "prompt_catalog.csv"))),
        ("fct_median_racialized_subordination", ("model", "gender", "race", "domain"),
         lambda: median_racialized_subordination(characters)),
        ("fct_top_names", ("race", "gender", "first_name", "domain", "condition"), lambda: top_names(characters)),
        ("fct_name_coverage", ("model", "domain", "condition"), lambda: name_coverage(characters)),
        ("fct_occupation_representation_ratios", ("model", "occupation", "condition", "race", "gender"),
         lambda: occupation_ratios(characters, read_occupations(seeds), read_workforce(seeds))),
    ]
    problems: list[str] = []
    for table, grain, reference in checks:
        problems += compare(table, fetch(connection, f"select * from marts.{table}"), grain, reference())
    return problems


@pytest.fixture(scope="module")
def measures_warehouse(measures_build: Path) -> duckdb.DuckDBPyConnection:
    """The fixture corpus landed with lfh ingest / lfh lexicon and built with lfh build (tests/conftest.py's
    measures_build, shared with tests/test_publish_dbt.py), opened read-only."""
    database = measures_build / "lfh.duckdb"
    connection = duckdb.connect(str(database), read_only=True)
    yield connection
    connection.close()


@pytest.mark.slow
def test_every_dbt_unit_test_ran_and_passed(measures_build: Path) -> None:
    """The other fixture builds leave dbt's unit tests out (tests/conftest.py): this build runs every one."""
    manifest = json.loads((measures_build / "target" / "manifest.json").read_text(encoding="utf-8"))
    run_results = json.loads((measures_build / "target" / "run_results.json").read_text(encoding="utf-8"))
    statuses = {result["unique_id"]: result["status"] for result in run_results["results"]}
    assert len(manifest["unit_tests"]) > 40
    assert {unit_test: statuses.get(unit_test) for unit_test in manifest["unit_tests"]} == dict.fromkeys(
        manifest["unit_tests"], "pass")
    # and the checkout keeps that they passed: the next warehouse built from it with these vars need not run them
    assert passed_at(measures_build / "target", unit_tests_key(unit_tests_digest({}), "duckdb"))


@pytest.mark.slow
def test_fixture_corpus_gives_the_designed_characters(measures_warehouse: duckdb.DuckDBPyConnection) -> None:
    # 35 stories: 14 with one character, 21 with two; two characters unnamed, one named Zorblat (not in the lexicon)
    counts = measures_warehouse.execute(
        "select count(*), count(first_name), sum(case when name_matched then 1 else 0 end) from marts.fct_characters"
    ).fetchone()
    assert counts == (56, 54, 53)


@pytest.mark.slow
def test_measure_marts_match_the_independent_reference(measures_warehouse: duckdb.DuckDBPyConnection) -> None:
    problems = check_measure_marts(measures_warehouse, project_root() / "seeds")
    assert not problems, "\n".join(problems[:40])


@pytest.mark.slow
def test_couples_by_hand(measures_warehouse: duckdb.DuckDBPyConnection) -> None:
    # ChatGPT4 romantic stories: F-M, F-M, M-M, F-F and F-M (one couple with an unspecified partner left out);
    # Claude2.0: F-M, F-NB, F-M. The friends' story (P069) is not romantic.
    rows = dict(((model, kind), (n, d)) for model, kind, n, d in measures_warehouse.execute(
        "select model, couple_type, numerator, denominator from marts.fct_sexual_orientation_ratios").fetchall())
    assert rows[("ChatGPT4", "female_male")] == (3.0, 5)
    assert rows[("ChatGPT4", "male_male")] == (1.0, 5)
    assert rows[("ChatGPT4", "female_female")] == (1.0, 5)
    assert rows[("Claude2.0", "female_nonbinary")] == (1.0, 3)
    assert rows[("All", "female_male")] == (5.0, 8)
    assert rows[("All", "nonbinary_nonbinary")] == (0.0, 8)


@pytest.mark.slow
def test_name_coverage_by_hand(measures_warehouse: duckdb.DuckDBPyConnection) -> None:
    # ChatGPT4 learning baseline: 7 students, one unnamed, one named Zorblat (not in the lexicon)
    row = measures_warehouse.execute(
        "select characters, with_name, with_matched_name, unmatched_share from marts.fct_name_coverage "
        "where model = 'ChatGPT4' and domain = 'learning' and condition = 'baseline'").fetchone()
    assert row == (7, 6, 5, pytest.approx(2 / 7))


@pytest.mark.slow
def test_epsilon_rows_present(measures_warehouse: duckdb.DuckDBPyConnection) -> None:
    # the corpus is small enough that fractional counts below 1 and zero counts both occur
    kinds = measures_warehouse.execute(
        "select count(*) filter (where epsilon = 1 and subordinate_numerator = 0 and dominant_numerator = 0),"
        " count(*) filter (where epsilon > 0 and epsilon < 1) from marts.fct_subordination_ratios").fetchone()
    assert kinds[0] > 0 and kinds[1] > 0


@pytest.mark.slow
def test_without_hand_labels_nothing_is_corrected(measures_warehouse: duckdb.DuckDBPyConnection) -> None:
    """No hand labels in the fixture corpus: the correction models are empty and every corrected_* column is null
    (the other columns are checked against the reference above, unchanged)."""
    columns = ("hand_labeled_n", "corrected_share", "corrected_share_ci_lower", "corrected_share_ci_upper",
               "corrected_ratio", "corrected_ci_lower", "corrected_ci_upper", "correction_source")
    for mart in ("fct_representation_ratios", "fct_sexual_orientation_ratios"):
        rows, non_null = measures_warehouse.execute(
            f"select count(*), {' + '.join(f'count({column})' for column in columns)} from marts.{mart}").fetchone()
        assert rows > 0 and non_null == 0, mart
    for model in ("int_characters_hand_paired", "int_gender_shares_corrected", "int_couple_shares_corrected"):
        count = measures_warehouse.execute(
            f"select count(*) filter (where {'is_hand_labeled' if model.endswith('paired') else 'true'}) "
            f"from intermediate.{model}").fetchone()[0]
        assert count == 0, model
