"""Drawing the simulated corpus: stories (with names and pronouns in the text) and the labeling model's
responses (with faults), all vectorised over numpy arrays so 500,000 stories take seconds."""

from __future__ import annotations

from string import Formatter

import numpy as np
import polars as pl

from lfh.identity import canonical_model, story_id
from lfh.llm.prompts import PROMPT_VERSION, LabelKeys
from lfh.simulate.config import RACE_POOLS, SimConfig
from lfh.simulate.design import GENDER_OUTCOMES, Design
from lfh.simulate.lexicon import draw_column
from lfh.simulate.text import (
    OBJECT_PRONOUN,
    ONE_CHARACTER,
    POSSESSIVE,
    SUBJECT_PRONOUN,
    TEMPLATE_COUNT,
    TWO_CHARACTERS,
    prompt_predicate,
    references_json,
    role_nouns,
)

FAULT_KINDS = ("none", "malformed", "wrapped", "unspecified_name")
_SENTINEL = "\x00STORY\x00"
START_TIME = "2026-01-01T00:00:00"


def _categorical(rng: np.random.Generator, probabilities: np.ndarray) -> np.ndarray:
    """One draw per row of a (rows, k) probability matrix."""
    cumulative = np.cumsum(probabilities, axis=1)
    draws = rng.random(len(probabilities))[:, None]
    return np.minimum((draws > cumulative).sum(axis=1), probabilities.shape[1] - 1)


def _design_lookup(design: Design, role: str, n_models: int, n_prompts: int) -> np.ndarray:
    """(model, prompt) -> design row index for that role, -1 where the prompt has no such role."""
    lookup = np.full((n_models, n_prompts), -1, dtype=np.int64)
    rows = design.rows.filter(pl.col("role") == role)
    lookup[rows["model_index"].to_numpy(), rows["prompt_index"].to_numpy()] = rows["design_index"].to_numpy()
    return lookup


def _draw_genders(rng: np.random.Generator, config: SimConfig, design: Design, design_index: np.ndarray,
                  romantic_couple: np.ndarray, is_subject: np.ndarray, male_first: np.ndarray) -> np.ndarray:
    """Gender codes 0 female, 1 male, 2 nonbinary, 3 unspecified. Romantic partners follow their couple type."""
    genders = _categorical(rng, design.gender[design_index])
    romantic = romantic_couple >= 0
    # couple types in COUPLE_TYPES order: (first gender, second gender)
    pair = np.array([[0, 0], [0, 1], [0, 2], [1, 1], [1, 2], [2, 2]])
    first, second = pair[romantic_couple[romantic], 0], pair[romantic_couple[romantic], 1]
    subject_gets_second = male_first[romantic]  # for female_male, 'second' is the man
    mine = np.where(is_subject[romantic] == subject_gets_second, second, first)
    unspecified = rng.random(romantic.sum()) < config.p_unspecified_gender
    genders[romantic] = np.where(unspecified, 3, mine)
    return genders


def draw_corpus(config: SimConfig, design: Design, pools: pl.DataFrame,
                stories_per_prompt: int | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The stories (one row each, with text and the labeler's clean and faulty answers) and the characters."""
    rng = np.random.default_rng(config.seed)
    per_prompt = stories_per_prompt or config.stories_per_prompt
    n_models, n_prompts = len(config.models), len(design.prompts)
    model_index = np.repeat(np.arange(n_models), n_prompts * per_prompt)
    prompt_index = np.tile(np.repeat(np.arange(n_prompts), per_prompt), n_models)
    n_stories = len(model_index)

    subject_design = _design_lookup(design, "subject", n_models, n_prompts)[model_index, prompt_index]
    object_design = _design_lookup(design, "object", n_models, n_prompts)[model_index, prompt_index]
    has_object = object_design >= 0

    romantic_story = design.rows["romantic"].to_numpy()[subject_design]
    couple = np.where(romantic_story, _categorical(rng, np.broadcast_to(design.couple_shares, (n_stories, 6))), -1)
    laden = np.array([prompt.prompt_condition == "power_laden" for prompt in design.prompts])[prompt_index]
    p_second_is_subject = np.where((couple == 1) & laden, config.p_male_dominant, 0.5)
    second_is_subject = rng.random(n_stories) < p_second_is_subject

    # characters: every story's subject, then the objects of two-character stories
    story_of = np.concatenate([np.arange(n_stories), np.flatnonzero(has_object)])
    is_subject = np.arange(len(story_of)) < n_stories
    char_design = np.where(is_subject, subject_design[story_of], object_design[story_of])
    gender = _draw_genders(rng, config, design, char_design, couple[story_of], is_subject,
                           second_is_subject[story_of])
    named = rng.random(len(story_of)) < design.named[char_design]
    pool = _categorical(rng, design.pool_mix[char_design])

    first_name = np.empty(len(story_of), dtype=object)
    for pool_code, pool_name in enumerate(RACE_POOLS):
        members = pools.filter(pl.col("pool") == pool_name)
        for gender_code, gender_outcome in enumerate(GENDER_OUTCOMES):  # a name consistent with the gender
            chosen = (pool == pool_code) & (gender == gender_code)
            picks = rng.choice(len(members), size=int(chosen.sum()),
                               p=members[draw_column(gender_outcome)].to_numpy())
            first_name[chosen] = members["display_name"].to_numpy()[picks]
    last_names = np.array(config.last_names or ("",), dtype=object)
    with_last = (rng.random(len(story_of)) < config.p_last_name) & (len(config.last_names) > 0)
    last_pick = last_names[rng.integers(0, len(last_names), len(story_of))]
    full_name = np.where(with_last, first_name + " " + last_pick, first_name)
    hallucinated = is_subject & (rng.random(len(story_of)) < config.faults["p_hallucinated_reference"])

    characters = pl.DataFrame({
        "story_index": story_of, "role": np.where(is_subject, "subject", "object"), "design_index": char_design,
        "gender_code": gender, "named": named, "pool": np.array(RACE_POOLS)[pool],
        "first_name": pl.Series(np.where(named, first_name, None).tolist(), dtype=pl.String),
        "full_name": pl.Series(np.where(named, full_name, None).tolist(), dtype=pl.String),
        "hallucinated_reference": hallucinated,
    })

    template = rng.integers(0, TEMPLATE_COUNT, n_stories)
    fault_probabilities = np.array([config.faults["p_malformed"], config.faults["p_wrapped"],
                                    config.faults["p_unspecified_name"] if config.samples_per_story > 1 else 0.0])
    fault_kind = _categorical(rng, np.broadcast_to(np.append(1 - fault_probabilities.sum(), fault_probabilities),
                                                   (n_stories, 4)))
    fault_sample = rng.integers(0, config.samples_per_story, n_stories)

    stories = _write_texts(config, design, model_index, prompt_index, template, characters, n_stories)
    stories = stories.with_columns(
        pl.Series("fault_kind", np.array(FAULT_KINDS)[fault_kind]),
        pl.Series("fault_sample", fault_sample),
    )
    return stories, characters


def _template_expression(template: str) -> pl.Expr:
    """A str.format template as one vectorised concatenation of literal pieces and slot columns."""
    pieces: list[pl.Expr] = []
    for literal, field, _spec, _conversion in Formatter().parse(template):
        if literal:
            pieces.append(pl.lit(literal))
        if field is not None:
            pieces.append(pl.col(field))
    return pl.concat_str(pieces)


def _capitalised(column: str) -> pl.Expr:
    return pl.concat_str(pl.col(column).str.slice(0, 1).str.to_uppercase(), pl.col(column).str.slice(1))


def _slot_columns(prefix: str, gender: str, label: str) -> list[pl.Expr]:
    """Pronoun slots of one character (see simulate_text.slots), as columns."""
    unspecified = pl.col(gender) == 3
    code = pl.col(gender).clip(0, 2)
    lookups = (("sub", SUBJECT_PRONOUN), ("obj", OBJECT_PRONOUN), ("pos", POSSESSIVE))
    columns = []
    for slot, words in lookups:
        pronoun = code.replace_strict(dict(enumerate(words)), return_dtype=pl.String)
        fallback = pl.concat_str(pl.col(label), pl.lit("'s")) if slot == "pos" else pl.col(label)
        columns.append(pl.when(unspecified).then(fallback).otherwise(pronoun).alias(f"{prefix}_{slot}"))
    return columns


def _write_texts(config: SimConfig, design: Design, model_index: np.ndarray, prompt_index: np.ndarray,
                 template: np.ndarray, characters: pl.DataFrame, n_stories: int) -> pl.DataFrame:
    """Story text, the clean JSON answer and the answer with the subject's name 'Unspecified' (vectorised)."""
    prompts = pl.DataFrame({
        "prompt_index": np.arange(len(design.prompts)),
        "two_characters": [prompt.label_form == "two" for prompt in design.prompts],
        "love_neutral": [prompt.domain == "love" and prompt.prompt_condition == "power_neutral"
                         for prompt in design.prompts],
        "predicate": [prompt_predicate(prompt) for prompt in design.prompts],
        "subject_noun": [role_nouns(prompt)[0] for prompt in design.prompts],
        "object_noun": [role_nouns(prompt)[1] for prompt in design.prompts],
        "object_text": [prompt.object for prompt in design.prompts],
        "subject_key": [prompt.subject_key for prompt in design.prompts],
        "object_key": [prompt.object_key if prompt.label_form == "two" else None for prompt in design.prompts],
    }, schema_overrides={"object_noun": pl.String, "object_text": pl.String, "object_key": pl.String})
    reference_json = {gender * 2 + flag: references_json(gender, bool(flag)) for gender in range(4) for flag in (0, 1)}
    subjects = characters.filter(pl.col("role") == "subject").select(
        "story_index", pl.col("first_name").alias("s_first"), pl.col("full_name").alias("s_full"),
        pl.col("gender_code").alias("s_gender"), pl.col("hallucinated_reference").alias("s_hall"))
    objects = characters.filter(pl.col("role") == "object").select(
        "story_index", pl.col("first_name").alias("o_first"), pl.col("full_name").alias("o_full"),
        pl.col("gender_code").alias("o_gender"))
    spellings = [model.spellings for model in config.models]
    replicate = np.arange(n_stories)
    model_spelling = [spellings[m][r % len(spellings[m])] for m, r in zip(model_index, replicate, strict=True)]

    frame = pl.DataFrame({"story_index": np.arange(n_stories), "model_index": model_index,
                          "prompt_index": prompt_index, "template": template, "model": model_spelling}) \
        .join(prompts, on="prompt_index", how="left") \
        .join(subjects, on="story_index", how="left").join(objects, on="story_index", how="left")
    frame = frame.with_columns(
        pl.coalesce("s_first", "subject_noun").alias("s_label"),
        pl.coalesce("s_full", "subject_noun").alias("s_mention"),
        pl.coalesce("o_first", "object_noun").alias("o_label"),
        pl.coalesce("o_full", pl.when(pl.col("love_neutral")).then(pl.col("object_noun"))
                    .otherwise(pl.concat_str(pl.lit("a "), pl.col("object_text")))).alias("o_mention"),
        pl.col("o_gender").fill_null(3),
    ).with_columns(
        *_slot_columns("s", "s_gender", "s_label"), *_slot_columns("o", "o_gender", "o_label"),
    ).with_columns(
        _capitalised("s_sub").alias("Ss"), _capitalised("s_pos").alias("Sp"), _capitalised("o_sub").alias("Os"),
        _capitalised("s_mention").alias("S1"),
    )
    one = pl.when(pl.col("template") == 0).then(_template_expression(ONE_CHARACTER[0]))
    two = pl.when(pl.col("template") == 0).then(_template_expression(TWO_CHARACTERS[0]))
    for index in range(1, TEMPLATE_COUNT):
        one = one.when(pl.col("template") == index).then(_template_expression(ONE_CHARACTER[index]))
        two = two.when(pl.col("template") == index).then(_template_expression(TWO_CHARACTERS[index]))
    opening = pl.when(pl.col("love_neutral")).then(
        pl.concat_str("S1", pl.lit(" and "), "o_mention", pl.lit(" "), "predicate", pl.lit(".")))\
        .otherwise(pl.concat_str("S1", pl.lit(" "), "predicate", pl.lit(" "), "o_mention", pl.lit(".")))
    s_refs = (pl.col("s_gender") * 2 + pl.col("s_hall").cast(pl.Int64)).replace_strict(reference_json,
                                                                                      return_dtype=pl.String)
    o_refs = (pl.col("o_gender") * 2).replace_strict(reference_json, return_dtype=pl.String)

    def answer(subject_name: pl.Expr) -> pl.Expr:
        one_answer = pl.concat_str(pl.lit('{"'), "subject_key", pl.lit(' name": "'), subject_name, pl.lit('", "'),
                                   "subject_key", pl.lit(' references": '), s_refs, pl.lit("}"))
        two_answer = pl.concat_str(
            pl.lit('{"'), "subject_key", pl.lit(' name": "'), subject_name, pl.lit('", "'), "object_key",
            pl.lit(' name": "'), pl.coalesce("o_full", pl.lit("Unspecified")), pl.lit('", "'), "subject_key",
            pl.lit(' references": '), s_refs, pl.lit(', "'), "object_key", pl.lit(' references": '), o_refs,
            pl.lit("}"))
        return pl.when(pl.col("two_characters")).then(two_answer).otherwise(one_answer)

    return frame.sort("story_index").select(
        "story_index", "model_index", "prompt_index", "model",
        pl.when(pl.col("two_characters")).then(pl.concat_str(opening, pl.lit(" "), two)).otherwise(one)
        .alias("text"),
        answer(pl.coalesce("s_full", pl.lit("Unspecified"))).alias("answer"),
        answer(pl.lit("Unspecified")).alias("answer_unspecified_name"),
    )


def story_frame(stories: pl.DataFrame, design: Design) -> pl.DataFrame:
    """The stories in the project's story file format (docs/CONTRACTS.md), with content-derived ids and the
    model_version each story's model (wave) reports (Design.versions; null where the config gives none). Two waves
    of one model writing the same text get occurrences 1 and 2: two stories."""
    prompts = pl.DataFrame({
        "prompt_index": np.arange(len(design.prompts)),
        "prompt_id": [prompt.prompt_id for prompt in design.prompts],
        "query": [prompt.query for prompt in design.prompts],
        "subject": [prompt.subject for prompt in design.prompts],
        "object": [prompt.object for prompt in design.prompts],
    }, schema_overrides={"object": pl.String})
    frame = stories.join(prompts, on="prompt_index", how="left").sort("story_index").with_columns(
        pl.col("model").replace_strict({spelling: canonical_model(spelling) for spelling in
                                        stories["model"].unique().to_list()}).alias("model_canonical"),
        (pl.lit(START_TIME).str.to_datetime() + pl.duration(seconds=pl.col("story_index")))
        .dt.strftime("%Y-%m-%dT%H:%M:%SZ").alias("time"),
        # the version a wave's responses report (SimModel.version; null when the config gives none)
        pl.col("model_index").replace_strict(dict(enumerate(design.versions)), return_dtype=pl.String, default=None)
        .alias("model_version"),
    ).with_columns((pl.int_range(pl.len()).over(["model_canonical", "query", "text"]) + 1).alias("occurrence"))
    ids = [story_id(model, query, text, occurrence) for model, query, text, occurrence in zip(
        frame["model_canonical"], frame["query"], frame["text"], frame["occurrence"], strict=True)]
    return frame.with_columns(pl.Series("story_id", ids))


def request_prefixes(design: Design) -> pl.DataFrame:
    """Per prompt, the labeling request around the story, built by lfh.llm.prompts (METHOD.md section 3)."""
    prefixes, suffixes = [], []
    for prompt in design.prompts:
        keys = LabelKeys(prompt.subject_key, prompt.object_key if prompt.label_form == "two" else None)
        before, after = keys.request(_SENTINEL).split(_SENTINEL)
        prefixes.append(before)
        suffixes.append(after)
    return pl.DataFrame({"prompt_index": np.arange(len(design.prompts)), "request_prefix": prefixes,
                         "request_suffix": suffixes})


def label_frame(stories: pl.DataFrame, design: Design, config: SimConfig) -> pl.DataFrame:
    """One label response per (story, sample) in the project's label file format, faults applied."""
    samples = config.samples_per_story
    frame = stories.select("story_id", "story_index", "prompt_index", "text", "answer", "answer_unspecified_name",
                           "fault_kind", "fault_sample") \
        .join(request_prefixes(design), on="prompt_index", how="left") \
        .with_columns(pl.int_ranges(0, samples).alias("sample_index")).explode("sample_index")
    faulty = pl.col("sample_index") == pl.col("fault_sample")
    return frame.sort("story_index", "sample_index").select(
        "story_id",
        pl.lit(config.labeler_model).alias("labeler_model"),
        pl.lit(PROMPT_VERSION).alias("prompt_version"),
        pl.concat_str("request_prefix", "text", "request_suffix").alias("request_text"),
        pl.col("sample_index").cast(pl.Int64),
        pl.when(faulty & (pl.col("fault_kind") == "malformed"))
        .then(pl.col("answer").str.slice(0, pl.col("answer").str.len_chars() // 2))
        .when(faulty & (pl.col("fault_kind") == "wrapped")).then(pl.lit("Output: ") + pl.col("answer"))
        .when(faulty & (pl.col("fault_kind") == "unspecified_name")).then(pl.col("answer_unspecified_name"))
        .otherwise(pl.col("answer")).alias("response_text"),
        (pl.lit(START_TIME).str.to_datetime() + pl.duration(seconds=pl.col("story_index"),
                                                             milliseconds=pl.col("sample_index") * 10 + 500))
        .dt.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").alias("time"),
    )
