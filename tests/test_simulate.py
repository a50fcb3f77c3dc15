"""lfh simulate on a small test lexicon: deterministic, in the project's file formats, texts that contain what
the labeler reports, the planted faults, and clear errors for a bad config or a missing lexicon."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner
from fixtures_simulate import write_test_lexicon

from lfh.cli.simulate import simulate
from lfh.identity import canonical_model, story_id
from lfh.llm.prompts import LabelKeys, catalog
from lfh.paths import project_root
from lfh.simulate.config import ConfigError, load_config
from lfh.simulate.lexicon import NAME_KEY_REMOVED, name_key
from lfh.simulate.run import run_simulation

INDICATORS = {"he", "him", "his", "she", "her", "hers", "they", "them", "their", "grandfather", "grandmother"}


def _tokens(text: str) -> set[str]:
    """docs/METHOD.md §4.2: lowercase, split on whitespace, keep the letters of each token."""
    return {re.sub(r"[^a-z]", "", token) for token in text.lower().split()}


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[pl.DataFrame, pl.DataFrame, dict]:
    db_path = tmp_path / "lfh.duckdb"
    write_test_lexicon(db_path)
    config = replace(load_config(), stories_per_prompt=4, seed=3)
    result = run_simulation(config, tmp_path / "landing", db_path)
    stories = pl.read_ndjson(result.stories_path, infer_schema_length=None)
    labels = pl.read_ndjson(result.labels_path, infer_schema_length=None)
    return stories, labels, json.loads(result.truth_path.read_text(encoding="utf-8"))


def test_same_seed_same_corpus_other_seed_other_corpus(tmp_path: Path) -> None:
    db_path = tmp_path / "lfh.duckdb"
    write_test_lexicon(db_path)
    config = replace(load_config(), stories_per_prompt=2)
    first = run_simulation(config, tmp_path / "a", db_path)
    second = run_simulation(config, tmp_path / "b", db_path)
    third = run_simulation(replace(config, seed=config.seed + 1), tmp_path / "c", db_path)
    assert first.stories_path.read_bytes() == second.stories_path.read_bytes()
    assert first.labels_path.read_bytes() == second.labels_path.read_bytes()
    assert first.stories_path.read_bytes() != third.stories_path.read_bytes()


def test_stories_cover_the_catalog_and_models_with_an_alias(corpus: tuple) -> None:
    stories, _labels, _truth = corpus
    models = len(load_config().models)
    assert stories.height == 100 * 4 * models
    assert set(stories["prompt_id"]) == {prompt.prompt_id for prompt in catalog()}
    assert stories["story_id"].n_unique() == stories.height
    spellings = set(stories["model"])
    assert "Llama" in spellings and canonical_model("Llama") == "Llama2-7B"
    row = stories.row(0, named=True)
    assert row["story_id"] == story_id(canonical_model(row["model"]), row["query"], row["text"], 1)
    catalog_query = {prompt.prompt_id: prompt.query for prompt in catalog()}
    assert all(catalog_query[pid] == query for pid, query in stories.select("prompt_id", "query").iter_rows())


def test_request_text_is_the_method_request_around_the_story(corpus: tuple) -> None:
    stories, labels, _truth = corpus
    joined = labels.join(stories, on="story_id")
    prompts = {prompt.prompt_id: prompt for prompt in catalog()}
    for row in joined.head(300).iter_rows(named=True):
        prompt = prompts[row["prompt_id"]]
        keys = LabelKeys(prompt.subject_key, prompt.object_key if prompt.label_form == "two" else None)
        assert row["request_text"] == keys.request(row["text"])


def test_valid_answers_only_name_words_in_the_story_except_planted_hallucinations(corpus: tuple) -> None:
    stories, labels, _truth = corpus
    joined = labels.join(stories.select("story_id", "text"), on="story_id")
    parsed, hallucinated = 0, 0
    for row in joined.iter_rows(named=True):
        text = row["response_text"].removeprefix("Output: ")
        try:
            answer = json.loads(text)
        except json.JSONDecodeError:
            continue
        parsed += 1
        tokens = _tokens(row["text"])
        for key, value in answer.items():
            if key.endswith(" name") and value != "Unspecified":
                assert _tokens(value) <= tokens, (value, row["text"])
            if key.endswith(" references"):
                assert set(value) <= INDICATORS
                missing = {word for word in value if word not in tokens}
                assert missing <= {"grandfather", "grandmother"}, (missing, row["text"])
                hallucinated += bool(missing)
    assert parsed > 0.9 * labels.height and hallucinated > 0


def test_every_planted_fault_occurs(corpus: tuple) -> None:
    _stories, labels, truth = corpus
    texts = labels["response_text"]
    assert texts.str.starts_with("Output: {").sum() > 0
    malformed = [text for text in texts if not text.startswith("Output:") and not _parses(text)]
    assert malformed, "no malformed response"
    assert truth["faults_drawn"].get("unspecified_name", 0) > 0
    assert labels.group_by("story_id").len()["len"].unique().to_list() == [load_config().samples_per_story]


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


def test_planted_truth_is_consistent(corpus: tuple) -> None:
    _stories, _labels, truth = corpus
    representation = pl.DataFrame(truth["representation"])
    race_only = representation.filter(pl.col("gender").is_null())
    # fractional race shares of matched characters sum to the mean total weight of the drawn names (<= ~1)
    sums = race_only.group_by("model", "domain", "condition").agg(pl.col("expected_share").sum())
    assert sums["expected_share"].is_between(0.8, 1.5).all()
    gender_only = representation.filter(pl.col("race").is_null())
    totals = gender_only.group_by("model", "domain", "condition").agg(pl.col("expected_share").sum())
    assert (totals["expected_share"] - 1).abs().max() < 1e-9
    subordination = pl.DataFrame(truth["subordination"])
    latine = subordination.filter((pl.col("race") == "latine") & pl.col("gender").is_null()
                                  & (pl.col("model") == "All"))
    assert (latine["expected_ratio"] > 1.2).all(), "the default config casts Latine names as subordinate"


def test_bad_config_names_file_and_setting(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    text = load_config().source.read_text(encoding="utf-8").replace("p_wrapped = 0.03", "p_wrapped = 3")
    broken.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"broken\.toml: faults\.p_wrapped"):
        load_config(broken)


def test_a_models_condition_multiplier_is_read_and_checked(tmp_path: Path) -> None:
    """models[i].condition_multiplier plants a difference between models; off unless written."""
    default = load_config().source.read_text(encoding="utf-8")
    anchor = 'race_multiplier = { aian = 0.3, nhpi = 0.6 }\n'
    assert anchor in default
    planted = tmp_path / "planted.toml"
    planted.write_text(default.replace(anchor, anchor + "condition_multiplier = { subordinate = { latine = 2.0 } }\n"),
                       encoding="utf-8")
    models = load_config(planted).models
    assert models[0].condition_multiplier == {"subordinate": {"latine": 2.0}}
    assert all(model.condition_multiplier == {} for model in models[1:])
    prefix = r"broken\.toml: models\[0\]\.condition_multiplier"
    for wrong, message in (("{ powerful = { latine = 2.0 } }", prefix + r" has unknown conditions"),
                           ("{ subordinate = { martian = 2.0 } }", prefix + r"\.subordinate has unknown keys"),
                           ("{ subordinate = { latine = -1 } }", prefix + r"\.subordinate\.latine = -1")):
        broken = tmp_path / "broken.toml"
        broken.write_text(default.replace(anchor, anchor + f"condition_multiplier = {wrong}\n"), encoding="utf-8")
        with pytest.raises(ConfigError, match=message):
            load_config(broken)


def test_missing_lexicon_says_to_run_lfh_lexicon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LFH_DB", str(tmp_path / "empty.duckdb"))
    outcome = CliRunner().invoke(simulate, ["--out", str(tmp_path / "out")])
    assert outcome.exit_code != 0
    assert "lfh lexicon" in outcome.output


def test_parquet_output_holds_the_same_records(tmp_path: Path) -> None:
    db_path = tmp_path / "lfh.duckdb"
    write_test_lexicon(db_path)
    config = replace(load_config(), stories_per_prompt=1)
    as_jsonl = run_simulation(config, tmp_path / "j", db_path)
    as_parquet = run_simulation(config, tmp_path / "p", db_path, file_format="parquet")
    assert as_parquet.stories_path.suffix == ".parquet"
    jsonl_labels = pl.read_ndjson(as_jsonl.labels_path)
    parquet_labels = pl.read_parquet(as_parquet.labels_path)
    assert jsonl_labels.equals(parquet_labels.select(jsonl_labels.columns))
    stories = pl.read_parquet(as_parquet.stories_path)
    assert stories["story_id"].to_list() == pl.read_ndjson(as_jsonl.stories_path, infer_schema_length=None)[
        "story_id"].to_list()


def test_first_names_match_the_characters_gender(tmp_path: Path) -> None:
    """A female character gets a name mostly borne by women (Census pct_female), a male one a name mostly borne
    by men: no 'Michael' among the women."""
    from fixtures_simulate import PCT_FEMALE

    from lfh.simulate.corpus import draw_corpus
    from lfh.simulate.design import build_design
    from lfh.simulate.lexicon import build_pools, read_lexicon

    db_path = tmp_path / "lfh.duckdb"
    write_test_lexicon(db_path)
    config = replace(load_config(), stories_per_prompt=4, seed=3)
    design = build_design(config)
    pools = build_pools(config, *read_lexicon(db_path), [key for key in design.rows["role_key"].to_list() if key])
    _stories, characters = draw_corpus(config, design, pools)
    named = characters.filter(pl.col("first_name").is_not_null())
    census_sex = {name: ("female" if share >= 50 else "male") for name, share in PCT_FEMALE.items()}
    male_names = {"John", "Connor", "Luke", "Wyatt", "Jamal", "Darnell", "Tyrone", "Deshawn", "Juan", "Jose",
                  "Alejandro", "Carlos", "Wei", "Minh", "Hiroshi", "Rahul", "Takoda", "Chayton", "Omar"}
    census_sex |= dict.fromkeys(male_names, "male")
    checked = 0
    for gender_code, gender in ((0, "female"), (1, "male")):
        names = named.filter(pl.col("gender_code") == gender_code)["first_name"].to_list()
        wrong = sorted({name for name in names if census_sex.get(name, gender) != gender})
        assert wrong == [], f"{gender} characters named {wrong}"
        checked += sum(name in census_sex for name in names)
    assert checked > 500  # the check saw plenty of names with a known sex


def test_the_simulators_name_key_folds_what_the_dbt_macro_folds() -> None:
    """lfh.simulate.lexicon.name_key mirrors macros/text/text_rules.sql's normalize_name_key (the simulator keeps
    its names apart from the lexicon by that key): the characters each removes are the same set."""
    macro = (project_root() / "macros" / "text" / "text_rules.sql").read_text(encoding="utf-8")
    body = macro[macro.index("macro default__normalize_name_key"):]
    character_class = body[body.index("'[") + 2:body.index("]'")].replace("\\\\x27", "'")
    assert set(character_class) == NAME_KEY_REMOVED
    assert name_key(" D'Andre-García ") == "dandregarcia"
