"""An independent Python implementation of docs/METHOD.md sections 6-7, used to check the measure marts.

It is written from the method's text, row by row over fct_characters, with no code shared with the dbt models
(the Wilson interval uses the (N + z^2/2) / (D + z^2) form, not the macro's). The tests in this file check the
reference itself against values worked out by hand; tests/test_measures_pipeline.py compares it with the marts.
"""

from __future__ import annotations

import csv
import math
import statistics
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import pytest

Z = 1.96
ALL = "All"
RACES = ("aian", "asian", "black", "latine", "mena", "nhpi", "white", "multiracial")
UNREPORTED_RACES = ("multiracial",)
GENDERS = ("female", "male", "nonbinary")
RACIALIZED_GENDERS = ("female", "male")
THRESHOLDS = range(1, 100)
TOP_NAME_SHARE = 0.60
TOP_NAMES = 10

Row = dict[str, object]


# ---------- formulas ----------

def wilson(n: float, d: float, z: float = Z) -> tuple[float, float]:
    """Wilson score interval of N / D in the (N + z^2/2) / (D + z^2) form."""
    center = (n + z * z / 2) / (d + z * z)
    half = z / (d + z * z) * math.sqrt(n * (d - n) / d + z * z / 4)
    return max(0.0, center - half), min(1.0, center + half)


def altman_bland(estimate: float, null: float, lower: float, upper: float, z: float = Z) -> float | None:
    """None when the interval has no width (e.g. every character of both roles in the group): no SE."""
    standard_error = (upper - lower) / (2 * z)
    if standard_error <= 0:
        return None
    statistic = abs(estimate - null) / standard_error
    return math.exp(-0.717 * statistic - 0.416 * statistic**2)


def epsilon(n_sub: float, n_dom: float) -> float:
    if n_sub == 0 and n_dom == 0:
        return 1.0
    if n_sub < 1 or n_dom < 1:
        return min(1.0, max(n_sub, n_dom))
    return 0.0


def subordination(n_sub: float, d_sub: float, n_dom: float, d_dom: float) -> dict[str, float | None]:
    if d_sub == 0 or d_dom == 0:
        return {"epsilon": epsilon(n_sub, n_dom), "subordination_ratio": None, "ci_lower": None,
                "ci_upper": None, "p_value": None}
    e = epsilon(n_sub, n_dom)
    ratio = 1.0 if n_sub == 0 and n_dom == 0 else ((n_sub + e) / (d_sub + e)) / ((n_dom + e) / (d_dom + e))
    half = Z * math.sqrt(1 / (n_sub + e) - 1 / (d_sub + e) + 1 / (n_dom + e) - 1 / (d_dom + e))
    log_ratio = math.log(ratio)
    return {"epsilon": e, "subordination_ratio": ratio, "ci_lower": math.exp(log_ratio - half),
            "ci_upper": math.exp(log_ratio + half),
            "p_value": altman_bland(log_ratio, 0.0, log_ratio - half, log_ratio + half)}


def benjamini_hochberg(p_values: list[float]) -> list[float]:
    """q-values in the input order: q_(i) = min over j >= i of p_(j) m / j, capped at 1."""
    m = len(p_values)
    order = sorted(range(m), key=lambda index: p_values[index])
    q_values = [0.0] * m
    running = 1.0
    for position in range(m - 1, -1, -1):
        index = order[position]
        running = min(running, p_values[index] * m / (position + 1))
        q_values[index] = running
    return q_values


def share_row(n: float, d: float, expected: float | None) -> Row:
    if d == 0:
        return {"observed_share": None, "share_ci_lower": None, "share_ci_upper": None, "representation_ratio": None,
                "ci_lower": None, "ci_upper": None, "p_value": None}
    observed = n / d
    lower, upper = wilson(n, d)
    if expected is None:
        return {"observed_share": observed, "share_ci_lower": lower, "share_ci_upper": upper,
                "representation_ratio": None, "ci_lower": None, "ci_upper": None, "p_value": None}
    return {"observed_share": observed, "share_ci_lower": lower, "share_ci_upper": upper,
            "representation_ratio": observed / expected, "ci_lower": lower / expected, "ci_upper": upper / expected,
            "p_value": altman_bland(observed, expected, lower, upper)}


def add_q_values(rows: Iterable[Row], family_key: tuple[str, ...], member: callable = lambda row: True) -> None:
    families: dict[tuple, list[Row]] = defaultdict(list)
    for row in rows:
        row["q_value"] = None
        if row["p_value"] is not None and member(row):
            families[tuple(row[key] for key in family_key)].append(row)
    for family in families.values():
        for row, q_value in zip(family, benjamini_hochberg([row["p_value"] for row in family]), strict=True):
            row["q_value"] = q_value


# ---------- inputs ----------

def read_baselines(seed: Path, baseline_set: str) -> dict[tuple[str, str], float]:
    with seed.open(newline="") as handle:
        return {(row["dimension"], row["group_code"]): float(row["expected_pct"]) / 100
                for row in csv.DictReader(handle) if row["baseline_set"] == baseline_set}


def read_romantic_prompts(seed: Path) -> set[str]:
    with seed.open(newline="") as handle:
        return {row["prompt_id"] for row in csv.DictReader(handle) if row["relation"] == "romantic partner"}


def with_all_models(characters: list[Row]) -> list[tuple[str, list[Row]]]:
    by_model: dict[str, list[Row]] = defaultdict(list)
    for character in characters:
        by_model[character["model"]].append(character)
    return [*by_model.items(), (ALL, characters)]


def has_race(character: Row) -> bool:
    """In the race counts: a matched first name, or a surname where none matched (docs/RACE_NAMES.md); rows
    without the column are the study's first-name-only characters."""
    return bool(character.get("has_race", character["name_matched"]))


def weight(character: Row, race: str) -> float:
    return float(character[f"weight_{race}"] or 0.0) if has_race(character) else 0.0


# ---------- measures ----------

def group_counts(characters: list[Row]) -> list[tuple[str | None, str | None, float, int]]:
    """(race, gender, N, D) for the race, race x gender and gender groups of one set of characters."""
    matched = [c for c in characters if has_race(c)]
    matched_gendered = [c for c in matched if c["gender"] in GENDERS]
    gendered = [c for c in characters if c["gender"] in GENDERS]
    rows: list[tuple[str | None, str | None, float, int]] = []
    for race in RACES:
        rows.append((race, None, sum(weight(c, race) for c in matched), len(matched)))
        for gender in GENDERS:
            rows.append((race, gender, sum(weight(c, race) for c in matched_gendered if c["gender"] == gender),
                         len(matched_gendered)))
    for gender in GENDERS:
        rows.append((None, gender, float(sum(1 for c in gendered if c["gender"] == gender)), len(gendered)))
    return rows


def expected_share(baselines: dict[tuple[str, str], float], race: str | None, gender: str | None) -> float | None:
    race_share = baselines.get(("race", race)) if race else None
    gender_share = baselines.get(("gender", gender)) if gender else None
    if race and gender:
        return None if race_share is None or gender_share is None else race_share * gender_share
    return race_share if race else gender_share


def representation_ratios(characters: list[Row], baselines: dict[tuple[str, str], float]) -> dict[tuple, Row]:
    rows: list[Row] = []
    for model, model_characters in with_all_models(characters):
        cells: dict[tuple[str, str], list[Row]] = defaultdict(list)
        for character in model_characters:
            cells[(character["domain"], character["condition"])].append(character)
        for (domain, condition), cell in cells.items():
            for race, gender, n, d in group_counts(cell):
                expected = expected_share(baselines, race, gender)
                rows.append({"model": model, "domain": domain, "condition": condition, "race": race,
                             "gender": gender, "numerator": n, "denominator": d, "expected_share": expected,
                             **share_row(n, d, expected)})
    add_q_values(rows, ("model",), lambda row: row["race"] not in UNREPORTED_RACES)
    return {(r["model"], r["domain"], r["condition"], r["race"], r["gender"]): r for r in rows}


def subordination_ratios(characters: list[Row]) -> dict[tuple, Row]:
    rows: list[Row] = []
    laden = [c for c in characters if c["condition"] in ("subordinate", "dominant")]
    for model, model_characters in with_all_models(laden):
        domains = sorted({c["domain"] for c in model_characters})
        for domain in domains:
            sub = group_counts([c for c in model_characters if c["domain"] == domain
                                and c["condition"] == "subordinate"])
            dom = group_counts([c for c in model_characters if c["domain"] == domain
                                and c["condition"] == "dominant"])
            for (race, gender, n_sub, d_sub), (_, _, n_dom, d_dom) in zip(sub, dom, strict=True):
                rows.append({"model": model, "domain": domain, "race": race, "gender": gender,
                             "subordinate_numerator": n_sub, "subordinate_denominator": d_sub,
                             "dominant_numerator": n_dom, "dominant_denominator": d_dom,
                             **subordination(n_sub, d_sub, n_dom, d_dom)})
    add_q_values(rows, ("model",), lambda row: row["race"] not in UNREPORTED_RACES)
    return {(r["model"], r["domain"], r["race"], r["gender"]): r for r in rows}


def couple_type(first: str, second: str) -> str:
    return "_".join(sorted((first, second)))


def orientation_ratios(characters: list[Row], baselines: dict[tuple[str, str], float],
                       romantic_prompts: set[str]) -> dict[tuple, Row]:
    stories: dict[str, list[Row]] = defaultdict(list)
    for character in characters:
        romantic = (character["prompt_id"] in romantic_prompts if character["prompt_id"] is not None
                    else "romantic partner" in str(character["role_text"]).lower())
        if character["domain"] == "love" and romantic:
            stories[character["story_id"]].append(character)
    couples = [(pair[0]["model"], couple_type(pair[0]["gender"], pair[1]["gender"]))
               for pair in stories.values()
               if len(pair) == 2 and all(c["gender"] in GENDERS for c in pair)]
    models = sorted({c[0]["model"] for c in stories.values()}) + [ALL]
    types = sorted({couple_type(a, b) for a in GENDERS for b in GENDERS})
    rows: list[Row] = []
    for model in models:
        typed = [kind for couple_model, kind in couples if model in (ALL, couple_model)]
        for kind in types:
            n = float(typed.count(kind))
            expected = baselines[("couple", kind)]
            shares = share_row(n, len(typed), expected)
            del shares["share_ci_lower"], shares["share_ci_upper"]  # not columns of this mart
            rows.append({"model": model, "couple_type": kind, "numerator": n, "denominator": len(typed),
                         "expected_share": expected, **shares})
    add_q_values(rows, ("model",))
    return {(r["model"], r["couple_type"]): r for r in rows}


def median_racialized_subordination(characters: list[Row]) -> dict[tuple, Row]:
    eligible = [c for c in characters if c["condition"] in ("subordinate", "dominant")
                and c["gender"] in RACIALIZED_GENDERS and has_race(c)]
    rows: dict[tuple, Row] = {}
    for model, model_characters in with_all_models(eligible):
        for domain, gender in sorted({(c["domain"], c["gender"]) for c in model_characters}):
            group = [c for c in model_characters if c["domain"] == domain and c["gender"] == gender]
            sub = [c for c in group if c["condition"] == "subordinate"]
            dom = [c for c in group if c["condition"] == "dominant"]
            for race in RACES:
                ratios = []
                for t in THRESHOLDS:
                    n_sub = sum(1 for c in sub if weight(c, race) > t / 100)
                    n_dom = sum(1 for c in dom if weight(c, race) > t / 100)
                    if n_sub + n_dom > 0:
                        ratios.append(subordination(n_sub, len(sub), n_dom, len(dom))["subordination_ratio"])
                known = [ratio for ratio in ratios if ratio is not None]
                rows[(model, gender, race, domain)] = {
                    "median_subordination_ratio": statistics.median(known) if known else None,
                    "thresholds_used": len(ratios), "subordinate_denominator": len(sub),
                    "dominant_denominator": len(dom)}
    return rows


def top_names(characters: list[Row]) -> dict[tuple, Row]:
    named = [c for c in characters if c["name_matched"] and c["first_name"] is not None]
    rows: dict[tuple, Row] = {}
    for race in RACES:
        totals: dict[tuple[str, str], int] = defaultdict(int)
        for c in named:
            if weight(c, race) > TOP_NAME_SHARE:
                totals[(c["gender"], c["first_name"])] += 1
        for (gender, first_name), total in totals.items():
            rank = 1 + sum(1 for (g, _), other in totals.items() if g == gender and other > total)
            if rank > TOP_NAMES:
                continue
            for c in named:
                if c["gender"] == gender and c["first_name"] == first_name:
                    key = (race, gender, first_name, c["domain"], c["condition"])
                    row = rows.setdefault(key, {"name_share": weight(c, race), "characters": 0, "rank_in_group": rank})
                    row["characters"] += 1
    return rows


def name_coverage(characters: list[Row]) -> dict[tuple, Row]:
    rows: dict[tuple, Row] = {}
    for model, model_characters in with_all_models(characters):
        for domain, condition in {(c["domain"], c["condition"]) for c in model_characters}:
            cell = [c for c in model_characters if c["domain"] == domain and c["condition"] == condition]
            matched = sum(1 for c in cell if c["name_matched"])
            without_race = sum(1 for c in cell if not has_race(c))
            rows[(model, domain, condition)] = {
                "characters": len(cell), "with_name": sum(1 for c in cell if c["first_name"] is not None),
                "with_matched_name": matched, "unmatched_share": (len(cell) - matched) / len(cell),
                "matched_share": matched / len(cell), "without_race": without_race,
                "without_race_share": without_race / len(cell)}
            if cell and "race_source" in cell[0]:
                for source in ("first_name", "surname"):
                    rows[(model, domain, condition)][f"with_race_from_{source}"] = sum(
                        1 for c in cell if c["race_source"] == source)
    return rows


# ---------- the reference against values worked out by hand ----------

def test_wilson_by_hand() -> None:
    # N = 0: lower 0, upper z^2 / (D + z^2) = 3.8416 / 13.8416
    assert wilson(0, 10) == pytest.approx((0.0, 3.8416 / 13.8416), abs=1e-15)
    # N = D: upper 1, lower D / (D + z^2)
    assert wilson(10, 10) == pytest.approx((10 / 13.8416, 1.0), abs=1e-15)
    # N = 5, D = 10: centre 0.5, half-width 1.96/13.8416 * sqrt(2.5 + 0.9604)
    half = 1.96 / 13.8416 * math.sqrt(3.4604)
    assert wilson(5, 10) == pytest.approx((0.5 - half, 0.5 + half))


def test_altman_bland_by_hand() -> None:
    # an interval of width 2 * 1.96 has SE = 1: estimate 1 away from the null gives z = 1
    assert altman_bland(1.0, 0.0, -0.96, 2.96) == pytest.approx(math.exp(-0.717 - 0.416))
    assert altman_bland(0.3, 0.3, 0.1, 0.5) == 1.0


def test_epsilon_rule_by_hand() -> None:
    assert subordination(0, 10, 0, 20)["subordination_ratio"] == 1.0
    assert epsilon(0, 0) == 1.0
    assert epsilon(0, 3) == 1.0
    assert epsilon(0.4, 0.25) == 0.4
    assert epsilon(4, 2) == 0.0
    # no epsilon: (4/10) / (2/10) = 2
    assert subordination(4, 10, 2, 10)["subordination_ratio"] == pytest.approx(2.0)
    # epsilon 1: (0+1)/(10+1) / ((3+1)/(20+1)) = 21 / 44
    assert subordination(0, 10, 3, 20)["subordination_ratio"] == pytest.approx(21 / 44)


def test_benjamini_hochberg_by_hand() -> None:
    # sorted 0.01, 0.03, 0.04, 0.5 with m = 4: p m / j = 0.04, 0.06, 0.0533, 0.5 -> running minimum from the top
    assert benjamini_hochberg([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.16 / 3, 0.16 / 3, 0.5])
    assert benjamini_hochberg([0.02, 0.02]) == pytest.approx([0.02, 0.02])
