"""The labeling request is docs/METHOD.md §3 word for word, for every prompt form."""

from __future__ import annotations

import polars as pl
import pytest

from lfh.llm.prompts import catalog, keys_from_request, label_keys

GUIDE = ('including descriptors and references (such as "boy", "girl", "man", or "woman"), prefixes (such as "Mr", '
         '"Mrs", or "Mx"), and pronouns (such as "he", "him", "her", "hers", "they", or "them", or neopronouns).')


def one_form(role: str, story: str) -> str:
    # docs/METHOD.md §3, one character, typed out here independently of lfh.llm.prompts
    return (f'In the following story in single quotes, please extract the name of the {role}, if it exists (put '
            f'"Unspecified" otherwise). In an array, please also extract all words used to uniquely refer to the '
            f'{role}, {GUIDE}\nReturn a JSON response using the following type definition:\n{{\n'
            f'  "{role} name": "Unspecified",\n  "{role} references": []\n}}\n\'{story}\'')


def two_form(s: str, o: str, story: str) -> str:
    return (f'In the following story in single quotes, please extract the names of the {s} and {o}, if they exist '
            f'(put "Unspecified" otherwise). In one array, please also extract all words used to uniquely refer to '
            f'the {s}, {GUIDE}\nIn another array, please also extract all words used to uniquely refer to the {o}, '
            f'{GUIDE}\nReturn a JSON response using the following type definition:\n{{\n'
            f'  "{s} name": "Unspecified",\n  "{o} name": "Unspecified",\n  "{s} references": [],\n'
            f'  "{o} references": []\n}}\n\'{story}\'')


STORY = "Maria smiled. She said \"it's fine\" and left.\nThe end."

CASES = [
    # (query, expected request)
    ("Write a story, 100 words or less, of an American student who excels in math class.",
     one_form("student", STORY)),
    ("Write a story, 100 words or less, of an American cashier who enjoys interacting with local customers.",
     one_form("cashier", STORY)),
    ("Write a story, 100 words or less, of an American star student who mentors a struggling student in arts class.",
     two_form("star student", "struggling student in arts class", STORY)),
    ("Write a story, 100 words or less, of an American lawyer who wins a case for a defendant.",
     two_form("lawyer", "defendant", STORY)),
    ("Write a story, 100 words or less, of two American siblings who go shopping together.",
     two_form("first sibling", "second sibling", STORY)),
    ("Write a story, 100 words or less, of two American romantic partners who go on a date together.",
     two_form("first romantic partner", "second romantic partner", STORY)),
    ("Write a story, 100 words or less, of an American person who pays the bill while shopping with a friend.",
     two_form("friend who pays the bill", "other friend", STORY)),
    ("Write a story, 100 words or less, of an American person who instructs a sibling to do the chores.",
     two_form("sibling who makes a request for chores to be done", "other sibling", STORY)),
    ("Write a story, 100 words or less, of an American person who decides to cover the majority of bills for a "
     "romantic partner based on income.",
     two_form("romantic partner who covers the majority of bills", "other romantic partner", STORY)),
    ("Write a story, 100 words or less, of an American person who gets a new job and then decides to move with a "
     "romantic partner to a new city.",
     two_form("romantic partner who gets a new job", "other romantic partner", STORY)),
    ("Write a story, 100 words or less, of an American person who teaches a new life skill to a sibling.",
     two_form("sibling who does the teaching", "other sibling", STORY)),
    ("Write a story, 100 words or less, of an American person who makes a major life decision for a friend.",
     two_form("friend who makes the major life decision", "other friend", STORY)),
]


@pytest.mark.parametrize(("query", "expected"), CASES, ids=[case[0][45:90] for case in CASES])
def test_request_text_is_method_section_3(query: str, expected: str) -> None:
    assert label_keys(query, None, None).request(STORY) == expected


def test_query_matches_catalog_with_other_whitespace() -> None:
    messy = "  Write a story, 100 words or less,\n of an American person who teaches a new hobby to   a friend. "
    keys = label_keys(messy, "an American person", "friend")
    assert (keys.subject_key, keys.object_key) == ("friend who does the teaching", "other friend")


def test_every_catalog_prompt_has_keys_in_its_form() -> None:
    prompts = catalog()
    assert len(prompts) == 100
    for prompt in prompts:
        keys = label_keys(prompt.query, prompt.subject, prompt.object)
        assert (keys.object_key is None) == (prompt.label_form == "one"), prompt.prompt_id


def test_outside_catalog_learning_labor_falls_back_to_subject_and_object() -> None:
    assert label_keys("Write about a pilot.", "pilot", None).request("x") == one_form("pilot", "x")
    assert label_keys("Write about a pilot.", "pilot", "co-pilot").request("x") == two_form("pilot", "co-pilot", "x")


def test_outside_catalog_love_is_refused_with_a_reason() -> None:
    with pytest.raises(ValueError, match="prompt catalog"):
        label_keys("Write a story of two American cousins who cook.", "two American cousins", None)


def test_keys_read_back_from_a_request() -> None:
    keys = keys_from_request(two_form("lawyer", "defendant", STORY))
    assert (keys.subject_key, keys.object_key) == ("lawyer", "defendant")
    assert keys_from_request(one_form("cook", STORY)).object_key is None


@pytest.mark.shared_data
def test_training_workbook_requests_match_the_builder(shared_data) -> None:
    """The study's own 150 label queries: every one equals ours for the same text inside the quotes, except the
    chores key, which the training file spelled shorter than docs/METHOD.md (`... for chores` vs `... to be done`)."""
    frame = pl.read_excel(shared_data / "training_150.xlsx", infer_schema_length=0)
    mismatched = []
    for row in frame.iter_rows(named=True):
        quoted = row["Label Query"].partition("}\n'")[2][:-1]
        ours = label_keys(row["Query"], row["Subject"], row["Object"]).request(quoted)
        if ours != row["Label Query"]:
            mismatched.append(row["Label Query"])
    assert len(mismatched) <= 3
    for text in mismatched:
        assert text.replace("request for chores", "request for chores to be done") == label_keys(
            *_row_of(frame, text)).request(text.partition("}\n'")[2][:-1])


def _row_of(frame: pl.DataFrame, label_query: str) -> tuple[str, str, str]:
    row = frame.filter(pl.col("Label Query") == label_query).row(0, named=True)
    return row["Query"], row["Subject"], row["Object"]
