"""The corrected couple shares (int_couple_shares_corrected's compiled SQL, the project's default vars) on simulated
couples with a known truth: the couple types the development audit never shows among its hand labels (Female-Female,
Female-Non-binary, Male-Non-binary) are planted at 2-4%, and the labeler errs at rates that differ by
model (a partner's gender read as non-binary, the "they" of a pair, or swapped), as it does on the study's audit.
Each replication draws new stories, hand-labels a random 30% of them (story level, as the dev-audit validation does),
and scores every corrected interval against the replication's own hand-label share of the whole set. Coverage must
be at least 90% in every couple type, all-model and per-model cells.
"""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl
import pytest
from fixtures_correction import correction_queries  # noqa: F401 (a fixture, used by name)

from bench.correction_check import COUPLE_COLUMNS, units_from_couples

pytestmark = pytest.mark.slow  # compiles the dbt project (once per run, shared: tests/fixtures_correction.py)

REPLICATIONS = 80
LABELED_FRACTION = 0.3
FLOOR = 0.90
TYPES = ("female_male", "female_female", "male_male", "female_nonbinary", "male_nonbinary", "nonbinary_nonbinary")
# model -> (couples, true type probabilities in TYPES order, labeler error rate: a partner read non-binary, swap rate)
MODELS = {
    "M1": (60, (0.86, 0.04, 0.04, 0.03, 0.02, 0.01), 0.02, 0.01),
    "M2": (50, (0.80, 0.03, 0.05, 0.04, 0.04, 0.04), 0.20, 0.02),
    "M3": (70, (0.88, 0.02, 0.03, 0.03, 0.02, 0.02), 0.08, 0.05),
    "M4": (40, (0.84, 0.04, 0.02, 0.04, 0.03, 0.03), 0.30, 0.00),
    "M5": (55, (0.90, 0.02, 0.02, 0.02, 0.02, 0.02), 0.05, 0.03),
}
PARTNERS = {"female_male": ("female", "male"), "female_female": ("female", "female"), "male_male": ("male", "male"),
            "female_nonbinary": ("female", "nonbinary"), "male_nonbinary": ("male", "nonbinary"),
            "nonbinary_nonbinary": ("nonbinary", "nonbinary")}
SWAP = {"female": "male", "male": "female", "nonbinary": "nonbinary"}
# the couples as bench.correction_check.units_from_couples reads them
COUPLE_SCHEMA = {name: pl.Boolean if kind == "boolean" else pl.String for name, kind in COUPLE_COLUMNS}


def _couple_type(first: str, second: str) -> str:
    return "_".join(sorted((first, second), key=("female", "male", "nonbinary").index))


def _stories(rng: np.random.Generator) -> list[tuple]:
    """(story_id, model, inferred type, hand type, condition) for every simulated romantic story."""
    stories = []
    for model, (count, probabilities, nonbinary_rate, swap_rate) in MODELS.items():
        for index in range(count):
            hand = TYPES[rng.choice(len(TYPES), p=probabilities)]
            inferred = []
            for gender in PARTNERS[hand]:
                draw = rng.random()
                inferred.append("nonbinary" if draw < nonbinary_rate
                                else SWAP[gender] if draw < nonbinary_rate + swap_rate else gender)
            condition = "baseline" if rng.random() < 0.5 else "dominant"
            stories.append((f"{model}-{index}", model, _couple_type(*inferred), hand, condition))
    return stories


@pytest.fixture(scope="module")
def couple_sql(correction_queries: dict[str, str]) -> str:  # noqa: F811 (the imported fixture)
    return correction_queries["couple"]


def test_rare_couple_types_are_covered_on_simulated_stories(couple_sql: str) -> None:
    rng = np.random.default_rng(24)
    covered: dict[tuple[str, str], list[bool]] = {}
    widths: dict[tuple[str, str], list[float]] = {}
    # one thread: a few hundred rows per replication, where DuckDB's second thread only adds overhead
    connection = duckdb.connect(config={"threads": 1})
    for _ in range(REPLICATIONS):
        stories = _stories(rng)
        labeled = rng.random(len(stories)) < LABELED_FRACTION
        # each couple with its story's prompt condition (a power-neutral story's characters are in the baseline one)
        couples = pl.DataFrame([(story, model, "power_neutral" if condition == "baseline" else "power_laden", inferred,
                                 hand if keep else None, bool(keep))
                                for (story, model, inferred, hand, condition), keep in zip(stories, labeled,
                                                                                           strict=True)],
                               schema=COUPLE_SCHEMA, orient="row")
        connection.register("couples", couples.to_arrow())
        units_from_couples(connection, "couples")
        truth = {}
        for model in [*MODELS, "All"]:
            hands = [hand for _, owner, _, hand, _ in stories if model in ("All", owner)]
            for couple_type in TYPES:
                truth[(model, couple_type)] = hands.count(couple_type) / len(hands)
        rows = connection.execute(f"select model, couple_type, corrected_share_ci_lower, corrected_share_ci_upper "
                                  f"from ({couple_sql}) where corrected_share is not null").fetchall()
        assert len(rows) == 6 * len(TYPES), "every cell has a corrected value (pools of 80 hand-labeled couples)"
        for model, couple_type, lower, upper in rows:
            level = "All" if model == "All" else "per model"
            value = truth[(model, couple_type)]
            covered.setdefault((level, couple_type), []).append(lower - 1e-12 <= value <= upper + 1e-12)
            widths.setdefault((level, couple_type), []).append(upper - lower)
    coverage = {key: sum(values) / len(values) for key, values in covered.items()}
    for key in sorted(coverage):
        print(key, f"covers {coverage[key]:.3f}", f"mean width {np.mean(widths[key]):.3f}")
    assert {couple_type for _, couple_type in coverage} == set(TYPES)
    assert min(min(values) for values in widths.values()) > 0  # no zero-width interval
    short = {key: value for key, value in coverage.items() if value < FLOOR}
    assert not short, short
