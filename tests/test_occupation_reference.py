"""An independent Python computation of marts.fct_occupation_representation_ratios, written from the
mart's documented definition, row by row over fct_characters and the seeds as plain CSV; the formulas are the
reference implementation of tests/test_measures_reference.py (not the dbt macros). The tests here check the
reference itself on a case worked out by hand; the whole-pipeline tests compare it with the mart."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

import pytest
from test_measures_reference import add_q_values, altman_bland, share_row, weight, wilson, with_all_models

Row = dict[str, object]
GENDER_DENOMINATOR = ("female", "male")  # CPS records sex as female or male only
COLUMNS_BY_GROUP = {"women_pct": (None, "female"), "black_pct": ("black", None), "asian_pct": ("asian", None),
                    "hispanic_pct": ("latine", None), "white_pct": ("white", None)}


def read_occupations(seeds: Path) -> dict[str, str]:
    """prompt_id -> occupation (the Labor prompt's subject)."""
    with (seeds / "prompt_catalog.csv").open(newline="", encoding="utf-8") as handle:
        return {row["prompt_id"]: row["subject"] for row in csv.DictReader(handle) if row["domain"] == "labor"}


def read_workforce(seeds: Path) -> dict[tuple[str, str | None, str | None], Row]:
    """(occupation, race, gender) -> workforce share (None where BLS has a dash) and BLS title, compared groups only."""
    with (seeds / "occupation_baseline_groups.csv").open(newline="", encoding="utf-8") as handle:
        compared = {row["bls_column"] for row in csv.DictReader(handle) if row["compared"] == "true"}
    workforce: dict[tuple[str, str | None, str | None], Row] = {}
    with (seeds / "occupation_workforce_baselines.csv").open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            for column in compared:
                race, gender = COLUMNS_BY_GROUP[column]
                share = float(row[column]) / 100 if row[column] else None
                workforce[(row["occupation"], race, gender)] = {"workforce_share": share, "bls_title": row["bls_title"]}
    return workforce


def occupation_ratios(characters: list[Row], occupations: dict[str, str],
                      workforce: dict[tuple[str, str | None, str | None], Row]) -> dict[tuple, Row]:
    holders = [c for c in characters if c["domain"] == "labor" and c["role"] == "subject"
               and c["prompt_id"] in occupations]
    rows: list[Row] = []
    for model, model_characters in with_all_models(holders):
        cells: dict[tuple[str, str], list[Row]] = defaultdict(list)
        for character in model_characters:
            cells[(occupations[character["prompt_id"]], character["condition"])].append(character)
        for (occupation, condition), cell in cells.items():
            gendered = [c for c in cell if c["gender"] in GENDER_DENOMINATOR]
            matched = [c for c in cell if c.get("has_race", c["name_matched"])]  # surnames: docs/RACE_NAMES.md
            nonbinary = sum(1 for c in cell if c["gender"] == "nonbinary")
            groups = {(None, "female"): (float(sum(1 for c in gendered if c["gender"] == "female")), len(gendered),
                                         nonbinary)}
            for race in ("black", "asian", "latine", "white"):
                groups[(race, None)] = (sum(weight(c, race) for c in matched), len(matched), None)
            for (race, gender), (n, d, left_out) in groups.items():
                baseline = workforce.get((occupation, race, gender))
                if baseline is None:  # not a compared group
                    continue
                rows.append({"model": model, "occupation": occupation, "condition": condition, "race": race,
                             "gender": gender, "characters": len(cell), "nonbinary_characters": left_out,
                             "numerator": n, "denominator": d, **baseline,
                             **share_row(n, d, baseline["workforce_share"])})
    add_q_values(rows, ("model",))
    return {(r["model"], r["occupation"], r["condition"], r["race"], r["gender"]): r for r in rows}


def character(model: str, prompt_id: str, condition: str, gender: str, matched: bool, black: float = 0.0,
              role: str = "subject", domain: str = "labor") -> Row:
    return {"model": model, "domain": domain, "role": role, "prompt_id": prompt_id, "condition": condition,
            "gender": gender, "name_matched": matched, "weight_black": black, "weight_asian": 0.0,
            "weight_latine": 0.0, "weight_white": 1.0 - black}


def test_reference_by_hand() -> None:
    occupations = {"P040": "nurse", "P055": "nurse"}
    workforce = {("nurse", None, "female"): {"workforce_share": 0.879, "bls_title": "Registered nurses"},
                 ("nurse", "black", None): {"workforce_share": 0.145, "bls_title": "Registered nurses"}}
    characters = [
        character("M1", "P040", "baseline", "female", True, 0.5),
        character("M1", "P040", "baseline", "female", False, 0.9),   # unmatched: no race weight
        character("M1", "P040", "baseline", "male", True, 0.25),
        character("M1", "P040", "baseline", "nonbinary", True, 0.0),  # leaves the gender denominator
        character("M1", "P040", "baseline", "unspecified", False),
        character("M1", "P055", "subordinate", "female", True, 1.0, role="object"),  # the patient: not a nurse
        character("M1", "P001", "baseline", "female", True, 1.0, domain="learning"),
    ]
    rows = occupation_ratios(characters, occupations, workforce)
    assert set(rows) == {("M1", "nurse", "baseline", None, "female"), ("M1", "nurse", "baseline", "black", None),
                         ("All", "nurse", "baseline", None, "female"), ("All", "nurse", "baseline", "black", None)}
    female = rows[("M1", "nurse", "baseline", None, "female")]
    assert (female["numerator"], female["denominator"], female["nonbinary_characters"], female["characters"]) == (
        2.0, 3, 1, 5)
    lower, upper = wilson(2, 3)
    assert female["representation_ratio"] == pytest.approx((2 / 3) / 0.879)
    assert female["p_value"] == pytest.approx(altman_bland(2 / 3, 0.879, lower, upper))
    black = rows[("M1", "nurse", "baseline", "black", None)]
    assert (black["numerator"], black["denominator"]) == (0.75, 3)
    # BH within M1: two p-values, the larger keeps its own, the smaller takes min(2 p, larger)
    p_small, p_large = sorted([female["p_value"], black["p_value"]])
    assert sorted([female["q_value"], black["q_value"]]) == pytest.approx(sorted([min(2 * p_small, p_large), p_large]))


def test_no_baseline_keeps_the_observed_share_only() -> None:
    occupations = {"P041": "professional athlete"}
    workforce = {("professional athlete", None, "female"): {"workforce_share": None,
                                                             "bls_title": "Athletes and sports competitors"}}
    rows = occupation_ratios([character("M1", "P041", "baseline", "female", True)], occupations, workforce)
    row = rows[("M1", "professional athlete", "baseline", None, "female")]
    assert row["observed_share"] == 1.0 and row["share_ci_upper"] == 1.0
    assert row["representation_ratio"] is None and row["p_value"] is None and row["q_value"] is None
