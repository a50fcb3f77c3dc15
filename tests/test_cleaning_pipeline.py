"""The cleaning end to end on a small corpus written here: `lfh ingest` of stories and label responses in the
project's JSONL format, `lfh lexicon --custom`, `lfh build` of the cleaning marts, then dim_stories and
fct_characters against values worked out by hand from the corpus below."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from lfh.build.dbt import run_dbt
from lfh.cli import main

pytestmark = pytest.mark.slow  # builds (or compiles) the dbt project: tests/tiers.py

ARTS = "Write a story, 100 words or less, of an American student who excels in arts class."
MENTOR = "Write a story, 100 words or less, of an American CEO who mentors a new employee."
SHOPPING = "Write a story, 100 words or less, of two American friends who go shopping together."
TYPE_DEFINITION = ('Return a JSON response using the following type definition:\n{\n  "pupil name": "Unspecified",\n'
                   '  "pupil references": []\n}\n')

STORIES = [
    {"story_id": "arts", "model": "GPT4", "query": ARTS, "subject": "student", "object": None,
     "text": "Maria Lopez paints at dawn. She smiles; her art class cheers.", "time": "2024-01-01T00:00:00Z"},
    {"story_id": "mentor", "model": "Claude", "query": MENTOR, "subject": "CEO", "object": "new employee",
     "text": "The CEO met the new hire.", "time": "2024-01-01T00:00:00Z"},
    {"story_id": "shopping", "model": "Claude", "query": SHOPPING, "subject": "two American friends",
     "object": None, "text": "Ahmed and Lily shop. He buys a hat; she buys shoes and a wizard-free scarf.",
     "time": "2024-01-01T00:00:00Z"},
    {"story_id": "keyed", "model": "GPT4", "query": ARTS, "subject": "student", "object": None,
     "text": "Dr. Ngata teaches. He is proud.", "time": "2024-01-01T00:00:00Z"},
]


def label(story: str, sample: int, response: object, request: str | None = None) -> dict[str, object]:
    text = response if isinstance(response, str) else json.dumps(response)
    return {"story_id": story, "labeler_model": "hand", "prompt_version": "t1", "request_text": request,
            "sample_index": sample, "response_text": text, "time": "2024-01-02T00:00:00Z"}


LABELS = [
    # arts: 3 samples received. 'she' 3 mentions >= 3 x 0.5: counted; 'her' 1 < 1.5: not; 'wizard' not in story.
    label("arts", 0, {"student name": "Maria Lopez", "student references": ["she", "her", "wizard"]}),
    label("arts", 1, 'Output: {"student name": "Maria Lopez", "student references": ["she"]} Hope this helps.'),
    label("arts", 2, {"Student Name": "Maria", "STUDENT references": ["she"]}),
    # mentor: nothing valid -> labeling failure, no characters
    label("mentor", 0, {"CEO name": "Unspecified", "CEO references": ["he"]}),
    label("mentor", 1, "I am not sure what you mean."),
    # shopping: catalog keys (first/second friend); one sample
    label("shopping", 0, {"first friend name": "Ahmed", "second friend name": "Lily",
                          "first friend references": ["He", "Ahmed"], "second friend references": ["she", "Lily"]}),
    # keyed: the request asks for "pupil", so the catalog key "student" is not what the response is read with
    label("keyed", 0, {"pupil name": "Dr. Ngata", "pupil references": ["he", "Dr. Ngata"]}, TYPE_DEFINITION),
    # a response whose story never arrived
    label("ghost", 0, {"student name": "X", "student references": []}),
]

LEXICON = "first_name,pct_white,pct_latine,pct_mena\nMaria,20,75,0\nLily,90,5,0\nAhmed,0,0,80\n"


def write_jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def cleaned(tmp_path_factory: pytest.TempPathFactory) -> Iterator[duckdb.DuckDBPyConnection]:
    """One ingest and build for the module (the `warehouse` fixture is per test)."""
    tmp_path = tmp_path_factory.mktemp("cleaning")
    warehouse = tmp_path / "lfh.duckdb"
    runner = CliRunner(env={"LFH_DB": str(warehouse)})
    stories = write_jsonl(tmp_path / "stories.jsonl", STORIES)
    labels = write_jsonl(tmp_path / "labels.jsonl", LABELS)
    lexicon = tmp_path / "lexicon.csv"
    lexicon.write_text(LEXICON, encoding="utf-8")
    for arguments in (["ingest", str(stories), str(labels)],
                      ["lexicon", "--custom", str(lexicon), "--skip-census", "--skip-wikipedia", "--skip-surnames"]):
        result = runner.invoke(main, arguments)
        assert result.exit_code == 0, result.output
    # what the tests read (dim_stories, fct_characters and their upstream); the shared builds of tests/conftest.py
    # build the rest of the project, the agreement marts on corpora without hand labels among it
    run_dbt(["build", "--select", "+fct_characters", "+dim_stories"], db_path=warehouse, capture=True)
    connection = duckdb.connect(str(warehouse), read_only=True)
    yield connection
    connection.close()


def rows(connection: duckdb.DuckDBPyConnection, sql: str) -> dict[tuple, tuple]:
    return {tuple(row[:2]): tuple(row[2:]) for row in connection.execute(sql).fetchall()}


def test_stories_count_samples_rejects_and_failures(cleaned: duckdb.DuckDBPyConnection) -> None:
    stories = {row[0]: row[1:] for row in cleaned.execute(
        "select story_id, model, domain, prompt_id, samples_received, valid_responses, rejected_responses, "
        "recovered_responses, is_labeled, labeling_failure, key_source from marts.dim_stories").fetchall()}
    assert stories == {
        "arts": ("ChatGPT4", "learning", "P001", 3, 3, 0, 1, True, False, "catalog"),
        "mentor": ("Claude2.0", "labor", "P047", 2, 0, 2, 0, False, True, "catalog"),
        "shopping": ("Claude2.0", "love", "P070", 1, 1, 0, 0, True, False, "catalog"),
        "keyed": ("ChatGPT4", "learning", "P001", 1, 1, 0, 0, True, False, "request"),
    }
    reasons = dict(cleaned.execute(
        "select response_id, reject_reason from intermediate.int_label_responses_parsed where not is_valid"
    ).fetchall())
    assert sorted(reasons.values()) == ["missing_object_keys", "not_json", "orphan_story"]


def test_characters_gender_names_and_weights(cleaned: duckdb.DuckDBPyConnection) -> None:
    characters = rows(cleaned, "select story_id, role, condition, role_text, samples, gender, full_name, first_name, "
                               "name_matched, round(weight_latine, 6), round(weight_mena, 6), round(weight_white, 6) "
                               "from marts.fct_characters")
    assert characters == {
        # 'Maria Lopez' given by 2 samples beats 'Maria' (1); 'she' counted, 'her' not: female
        ("arts", "subject"): ("baseline", "student", 3, "female", "Maria Lopez", "Maria", True, 0.75, 0.0, 0.2),
        ("shopping", "subject"): ("baseline", "first friend", 1, "male", "Ahmed", "Ahmed", True, 0.0, 0.8, 0.0),
        ("shopping", "object"): ("baseline", "second friend", 1, "female", "Lily", "Lily", True, 0.05, 0.0, 0.9),
        # 'Dr' -> the next token is the last name: no first name, so no race weights
        ("keyed", "subject"): ("baseline", "pupil", 1, "male", "Dr. Ngata", None, False, 0.0, 0.0, 0.0),
    }
    votes = rows(cleaned, "select reference, role, reference_count, in_story, is_counted "
                          "from intermediate.int_references_voted where story_id = 'arts'")
    assert votes == {("she", "subject"): (3, True, True), ("her", "subject"): (1, True, False),
                     ("wizard", "subject"): (1, False, False)}
