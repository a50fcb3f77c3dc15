"""The planted truth of a simulated corpus, in the method's own terms (METHOD.md section 6): expected
fractional race counts (the lexicon weights p_r(x) of the names that can be drawn, times their probabilities),
gender and couple shares, and the subordination ratios they imply, per model (and 'All'), domain, condition."""

from __future__ import annotations

import numpy as np
import polars as pl

from lfh.simulate.config import COUPLE_TYPES, GENDERS, RACE_POOLS, SimConfig
from lfh.simulate.design import GENDER_OUTCOMES, Design
from lfh.simulate.lexicon import RACES, pool_mean_weights

ALL_MODELS = "All"


def expected_counts(design: Design, pools: pl.DataFrame, characters_per_row: int) -> pl.DataFrame:
    """Per design row and (race | None, gender | None): the expected numerator and denominator of §6."""
    # names are drawn by pool and gender: the expected p_r(x) per design row, for each gender outcome
    race_mean_by_gender = []
    for outcome in GENDER_OUTCOMES:
        means = pool_mean_weights(pools, outcome)
        race_mean_by_gender.append(design.pool_mix @ np.vstack([means[pool] for pool in RACE_POOLS]))  # (rows, 8)
    race_mean = sum(design.gender[:, index, None] * race_mean_by_gender[index]
                    for index in range(len(GENDER_OUTCOMES)))
    named = design.named * characters_per_row
    known_gender = 1 - design.gender[:, 3]
    base = design.rows.select("design_index", "model", "domain", "condition")
    parts = []
    for race_index, race in enumerate(RACES):
        parts.append(base.with_columns(
            pl.lit(race).alias("race"), pl.lit(None, pl.String).alias("gender"),
            pl.Series("numerator", named * race_mean[:, race_index]), pl.Series("denominator", named)))
        for gender_index, gender in enumerate(GENDERS):
            parts.append(base.with_columns(
                pl.lit(race).alias("race"), pl.lit(gender).alias("gender"),
                pl.Series("numerator",
                          named * design.gender[:, gender_index] * race_mean_by_gender[gender_index][:, race_index]),
                pl.Series("denominator", named * known_gender)))
    for gender_index, gender in enumerate(GENDERS):
        parts.append(base.with_columns(
            pl.lit(None, pl.String).alias("race"), pl.lit(gender).alias("gender"),
            pl.Series("numerator", characters_per_row * design.gender[:, gender_index]),
            pl.Series("denominator", characters_per_row * known_gender)))
    return pl.concat(parts)


def _with_all_models(frame: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    summed = frame.group_by(keys).agg(pl.col("numerator").sum(), pl.col("denominator").sum())
    everyone = summed.group_by([key for key in keys if key != "model"]).agg(
        pl.col("numerator").sum(), pl.col("denominator").sum()).with_columns(pl.lit(ALL_MODELS).alias("model"))
    return pl.concat([summed, everyone.select(summed.columns)])


def representation_truth(counts: pl.DataFrame) -> pl.DataFrame:
    keys = ["model", "domain", "condition", "race", "gender"]
    return _with_all_models(counts, keys).with_columns(
        (pl.col("numerator") / pl.col("denominator")).alias("expected_share")
    ).rename({"numerator": "expected_numerator", "denominator": "expected_denominator"}).sort(keys)


def subordination_truth(counts: pl.DataFrame) -> pl.DataFrame:
    keys = ["model", "domain", "race", "gender"]
    laden = counts.filter(pl.col("condition") != "baseline")
    frame = _with_all_models(laden, [*keys, "condition"])
    sub = frame.filter(pl.col("condition") == "subordinate").drop("condition")
    dom = frame.filter(pl.col("condition") == "dominant").drop("condition")
    joined = sub.join(dom, on=keys, how="inner", suffix="_dominant", nulls_equal=True)
    return joined.select(
        *keys,
        pl.col("numerator").alias("expected_subordinate_numerator"),
        pl.col("denominator").alias("expected_subordinate_denominator"),
        pl.col("numerator_dominant").alias("expected_dominant_numerator"),
        pl.col("denominator_dominant").alias("expected_dominant_denominator"),
        ((pl.col("numerator") / pl.col("denominator"))
         / (pl.col("numerator_dominant") / pl.col("denominator_dominant"))).alias("expected_ratio"),
    ).sort(keys)


def occupation_truth(design: Design, pools: pl.DataFrame, characters_per_row: int) -> pl.DataFrame:
    """Per model (and 'All'), Labor occupation and condition, over the occupation holders (the subject of each
    Labor prompt): the expected female count among female and male characters (the BLS comparison's gender
    denominator) and the expected fractional race counts among named characters (issue 15)."""
    occupation_of = {prompt.prompt_id: prompt.subject for prompt in design.prompts}
    holders = design.rows.filter((pl.col("domain") == "labor") & (pl.col("role") == "subject")).select(
        "design_index", pl.col("prompt_id").replace_strict(occupation_of).alias("occupation"))
    counts = expected_counts(design, pools, characters_per_row).join(holders, on="design_index", how="inner")
    races = counts.filter(pl.col("gender").is_null()).select(
        "model", "occupation", "condition", "race", "gender", "numerator", "denominator")
    index = holders["design_index"].to_numpy()
    female, male = design.gender[index, 0], design.gender[index, 1]
    genders = design.rows[index].select("model", "condition").with_columns(
        holders["occupation"], pl.lit(None, pl.String).alias("race"), pl.lit("female").alias("gender"),
        pl.Series("numerator", female * characters_per_row),
        pl.Series("denominator", (female + male) * characters_per_row)).select(races.columns)
    keys = ["model", "occupation", "condition", "race", "gender"]
    return _with_all_models(pl.concat([genders, races]), keys).with_columns(
        (pl.col("numerator") / pl.col("denominator")).alias("expected_share")
    ).rename({"numerator": "expected_numerator", "denominator": "expected_denominator"}).sort(keys)


def couple_truth(config: SimConfig) -> pl.DataFrame:
    models = list(dict.fromkeys(model.name for model in config.models)) + [ALL_MODELS]  # waves: one model
    return pl.DataFrame([{"model": model, "couple_type": couple, "expected_share": config.couple_shares[couple]}
                         for model in models for couple in COUPLE_TYPES])


def coverage_truth(design: Design, characters_per_row: int) -> pl.DataFrame:
    frame = design.rows.select("model", "domain", "condition").with_columns(
        pl.Series("characters", np.full(len(design.named), float(characters_per_row))),
        pl.Series("with_name", design.named * characters_per_row))
    summed = frame.group_by("model", "domain", "condition").agg(pl.col("characters").sum(),
                                                                pl.col("with_name").sum())
    return summed.with_columns((pl.col("with_name") / pl.col("characters")).alias("expected_matched_share")) \
        .sort("model", "domain", "condition")


def planted_truth(config: SimConfig, design: Design, pools: pl.DataFrame, stories_per_prompt: int) -> dict:
    counts = expected_counts(design, pools, stories_per_prompt)
    return {
        "note": "SIMULATED corpus: these are the planted values, not findings about any real model.",
        "config": str(config.source),
        "seed": config.seed,
        "stories_per_prompt": stories_per_prompt,
        "samples_per_story": config.samples_per_story,
        "representation": representation_truth(counts).to_dicts(),
        "subordination": subordination_truth(counts).to_dicts(),
        "couples": couple_truth(config).to_dicts(),
        "occupations": occupation_truth(design, pools, stories_per_prompt).to_dicts(),
        "coverage": coverage_truth(design, stories_per_prompt).to_dicts(),
        "name_pools": pools.to_dicts(),
    }
