"""The hand-label correction of the occupation mart (docs/CORRECTION.md) on the study's development audit:
audit_dev.xlsx ingested and built (every story hand-labeled). The study's audit has 6 to 14 hand-labeled occupation
holders per occupation x condition, so with the default minimum (var ppi_min_hand_labeled = 20) no occupation row
can be corrected: the mart says how many hand labels there are and leaves the corrected values null. Rebuilt with
the minimums at 10, the occupations with at least 10 hand-labeled holders get a corrected share; every holder being
hand-labeled, it must be the hand labels' own female share (lam = 0), computed here from the hand labels.
Skips without the study's data (docs/DATA.md)."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from lfh.build.dbt import run_dbt

pytestmark = pytest.mark.slow  # builds (or compiles) the dbt project: tests/tiers.py

LOWERED = {"ppi_min_hand_labeled": 10, "ppi_cell_min_hand_labeled": 10}
CORRECTED = ("hand_labeled_n", "corrected_share", "corrected_share_ci_lower", "corrected_share_ci_upper",
             "corrected_ratio", "corrected_ci_lower", "corrected_ci_upper", "correction_source")
MART = "marts.fct_occupation_representation_ratios"
# the hand labels' female share among female and male occupation holders, per model (and 'All') x occupation x
# condition, straight from the hand labels (not through the correction models)
HAND_SHARES = """
    with holders as (
        select paired.model, catalog.subject as occupation, paired.condition, paired.hand_gender
        from intermediate.int_hand_labels_paired as paired
        join reference.prompt_catalog as catalog on paired.prompt_id = catalog.prompt_id
        where paired.domain = 'labor' and paired.role = 'subject' and paired.hand_gender <> 'unmapped'
    ),
    cells as (
        select model, occupation, condition, hand_gender from holders
        union all
        select 'All', occupation, condition, hand_gender from holders
    )
    select model, occupation, condition, count(*) as hand_labeled,
           count(*) filter (where hand_gender = 'female')::double
           / nullif(count(*) filter (where hand_gender in ('female', 'male')), 0) as hand_share
    from cells group by all
"""


def _rows(warehouse: Path, sql: str) -> list[dict]:
    connection = duckdb.connect(str(warehouse), read_only=True)
    try:
        cursor = connection.execute(sql)
        names = [column[0] for column in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    finally:
        connection.close()


@pytest.fixture(scope="module")
def builds(audit_build: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict]]:
    """The mart at the default minimums (tests/conftest.py's audit_build), then on a copy rebuilt with them lowered."""
    marts: dict[str, list[dict]] = {"default": _rows(audit_build / "lfh.duckdb", f"select * from {MART}")}
    folder = tmp_path_factory.mktemp("occupation_correction")
    warehouse = folder / "lfh.duckdb"
    shutil.copyfile(audit_build / "lfh.duckdb", warehouse)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DBT_TARGET_PATH", str(folder / "target"))
        patch.setenv("DBT_LOG_PATH", str(folder / "logs"))
        run_dbt(["build", "--select", "int_occupation_shares_corrected", "fct_occupation_representation_ratios"],
                db_path=warehouse, dbt_vars=LOWERED, capture=True)
    marts["lowered"] = _rows(warehouse, f"select * from {MART}")
    marts["hand"] = _rows(warehouse, HAND_SHARES)
    return marts


def test_race_rows_are_never_corrected(builds: dict[str, list[dict]]) -> None:
    for kind in ("default", "lowered"):
        race_rows = [row for row in builds[kind] if row["race"] is not None]
        assert race_rows and all(row[column] is None for row in race_rows for column in CORRECTED), kind


def test_default_minimum_leaves_the_audit_uncorrected_but_counts_its_hand_labels(
        builds: dict[str, list[dict]]) -> None:
    hand = {(row["model"], row["occupation"], row["condition"]): row for row in builds["hand"]}
    female = [row for row in builds["default"] if row["gender"] == "female"]
    assert max(row["hand_labeled_n"] for row in female) < 20  # the study's audit: at most 14 per occupation
    assert all(row["corrected_share"] is None and row["corrected_ratio"] is None for row in female)
    for row in female:
        expected = hand.get((row["model"], row["occupation"], row["condition"]))
        # every holder is hand-labeled (N = 0): the cell's own labels, so hand_labeled_n is the cell's count
        assert row["hand_labeled_n"] == (expected["hand_labeled"] if expected else None), row


def test_corrected_values_appear_where_hand_labels_allow(builds: dict[str, list[dict]]) -> None:
    hand = {(row["model"], row["occupation"], row["condition"]): row for row in builds["hand"]}
    female = [row for row in builds["lowered"] if row["gender"] == "female"]
    corrected = [row for row in female if row["corrected_share"] is not None]
    assert len({row["occupation"] for row in corrected if row["model"] == "All"}) >= 10
    for row in female:
        if row["hand_labeled_n"] is None or row["hand_labeled_n"] < LOWERED["ppi_min_hand_labeled"]:
            assert row["corrected_share"] is None, row
            continue
        expected = hand[(row["model"], row["occupation"], row["condition"])]
        assert row["correction_source"] == "cell"
        # N = 0 -> lam = 0: the corrected share is the hand labels' own share
        assert row["corrected_share"] == pytest.approx(expected["hand_share"], abs=1e-12), row
        assert row["corrected_share_ci_lower"] <= row["corrected_share"] <= row["corrected_share_ci_upper"]
        if row["workforce_share"] is None:  # professional athlete: no BLS percentage, no ratio
            assert row["corrected_ratio"] is None
        else:
            assert row["corrected_ratio"] == pytest.approx(row["corrected_share"] / row["workforce_share"], rel=1e-12)
            assert row["corrected_ci_upper"] == pytest.approx(
                row["corrected_share_ci_upper"] / row["workforce_share"], rel=1e-12)


def test_uncorrected_columns_do_not_depend_on_the_correction(builds: dict[str, list[dict]]) -> None:
    def key(row: dict) -> tuple:
        return row["model"], row["occupation"], row["condition"], row["race"] or "", row["gender"] or ""

    default = {key(row): row for row in builds["default"]}
    for row in builds["lowered"]:
        before = default[key(row)]
        assert {k: v for k, v in row.items() if k not in CORRECTED} == \
            {k: v for k, v in before.items() if k not in CORRECTED}
