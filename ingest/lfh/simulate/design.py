"""The simulation's design: for every (model, catalog prompt, role) the probabilities the corpus is drawn
with. The corpus draws from these rows and the planted truth is computed from the same rows, so the two agree
by construction; whether the dbt marts recover the truth is what tests/test_simulate_recovery.py checks."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from lfh.llm.prompts import CatalogPrompt, catalog
from lfh.simulate.config import COUPLE_TYPES, GENDERS, RACE_POOLS, SimConfig

# Gender columns of the design, in this order; 'unspecified' = the story gives the character no gendered word.
GENDER_OUTCOMES = (*GENDERS, "unspecified")


@dataclass(frozen=True)
class Design:
    """One row per (model, prompt, role); array columns are aligned with `rows`."""
    rows: pl.DataFrame              # model, model_index, prompt_index, prompt_id, domain, prompt_condition, role,
                                    # condition, romantic, role_key
    gender: np.ndarray              # (rows, 4): P(female, male, nonbinary, unspecified)
    named: np.ndarray               # (rows,): P(character has a name)
    pool_mix: np.ndarray            # (rows, 7): P(name pool) in RACE_POOLS order, given a name
    couple_shares: np.ndarray       # (6,) in COUPLE_TYPES order
    prompts: tuple[CatalogPrompt, ...]
    versions: tuple[str | None, ...] = ()  # per model_index: the version its stories report (SimModel.version)


def _condition(prompt: CatalogPrompt, role: str) -> str:
    if prompt.prompt_condition == "power_neutral":
        return "baseline"
    return "dominant" if role == "subject" else "subordinate"


def _romantic_gender(config: SimConfig, prompt: CatalogPrompt, role: str) -> np.ndarray:
    """P(female, male, nonbinary) of one partner when the pair's genders are drawn as a couple type."""
    share = dict(zip(COUPLE_TYPES, couple_vector(config), strict=True))
    male_first = config.p_male_dominant if prompt.prompt_condition == "power_laden" else 0.5
    male_is_subject = male_first if role == "subject" else 1 - male_first
    female = share["female_female"] + share["female_male"] * (1 - male_is_subject) + share["female_nonbinary"] / 2
    male = share["male_male"] + share["female_male"] * male_is_subject + share["male_nonbinary"] / 2
    nonbinary = share["nonbinary_nonbinary"] + share["female_nonbinary"] / 2 + share["male_nonbinary"] / 2
    return np.array([female, male, nonbinary])


def couple_vector(config: SimConfig) -> np.ndarray:
    return np.array([config.couple_shares[couple] for couple in COUPLE_TYPES])


def is_romantic(prompt: CatalogPrompt) -> bool:
    return prompt.domain == "love" and "romantic partner" in (prompt.subject_key or "")


def build_design(config: SimConfig) -> Design:
    prompts = catalog()
    records, gender_rows, named_rows, mix_rows = [], [], [], []
    for model_index, model in enumerate(config.models):
        for prompt_index, prompt in enumerate(prompts):
            roles = ("subject",) if prompt.label_form == "one" else ("subject", "object")
            for role in roles:
                condition = _condition(prompt, role)
                romantic = is_romantic(prompt)
                if romantic:
                    known = _romantic_gender(config, prompt, role)
                else:
                    shares = config.gender_shares[prompt.domain][condition]
                    known = np.array([shares[g] * model.gender_multiplier.get(g, 1.0) for g in GENDERS])
                    known = known / known.sum()
                unspecified = config.p_unspecified_gender
                gender_rows.append(np.append(known * (1 - unspecified), unspecified))
                named_rows.append(min(1.0, config.named[prompt.domain][condition] * model.named_multiplier))
                planted = model.condition_multiplier.get(condition, {})
                mix = np.array([config.pool_mix[pool] * model.race_multiplier.get(pool, 1.0)
                                * config.condition_multiplier[condition].get(pool, 1.0) * planted.get(pool, 1.0)
                                for pool in RACE_POOLS])
                mix_rows.append(mix / mix.sum())
                records.append({
                    "model": model.name, "model_index": model_index, "prompt_index": prompt_index,
                    "prompt_id": prompt.prompt_id, "domain": prompt.domain,
                    "prompt_condition": prompt.prompt_condition, "role": role, "condition": condition,
                    "romantic": romantic,
                    "role_key": prompt.subject_key if role == "subject" else prompt.object_key,
                })
    return Design(rows=pl.DataFrame(records).with_row_index("design_index"), gender=np.array(gender_rows),
                  named=np.array(named_rows), pool_mix=np.array(mix_rows), couple_shares=couple_vector(config),
                  prompts=prompts, versions=tuple(model.version for model in config.models))
