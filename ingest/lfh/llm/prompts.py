"""The text sent to models: the study's story prompts (from the catalog seed) and the labeling request of
docs/METHOD.md §3 (the study's Table S7), word for word."""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from lfh.paths import seeds_dir

# Bump when the request text changes, so old and new labels never mix under one version.
PROMPT_VERSION = "method-v1"

_REFERENCE_GUIDE = (
    'including descriptors and references (such as "boy", "girl", "man", or "woman"), '
    'prefixes (such as "Mr", "Mrs", or "Mx"), and pronouns (such as "he", "him", "her", "hers", '
    '"they", or "them", or neopronouns).'
)


@dataclass(frozen=True)
class CatalogPrompt:
    prompt_id: str
    domain: str
    prompt_condition: str
    subject: str
    object: str | None
    query: str
    subject_key: str
    object_key: str | None
    label_form: str  # "one" | "two"


def normalise_query(text: str) -> str:
    return " ".join(text.split())


@cache
def catalog(path: Path | None = None) -> tuple[CatalogPrompt, ...]:
    source = path or seeds_dir() / "prompt_catalog.csv"
    with open(source, newline="", encoding="utf-8") as handle:
        return tuple(
            CatalogPrompt(
                prompt_id=row["prompt_id"], domain=row["domain"], prompt_condition=row["prompt_condition"],
                subject=row["subject"], object=row["object"] or None, query=row["query"],
                subject_key=row["subject_key"], object_key=row["object_key"] or None, label_form=row["label_form"],
            )
            for row in csv.DictReader(handle)
        )


@cache
def _catalog_by_query() -> dict[str, CatalogPrompt]:
    return {normalise_query(prompt.query): prompt for prompt in catalog()}


def catalog_prompt_for(query: str | None) -> CatalogPrompt | None:
    return _catalog_by_query().get(normalise_query(query)) if query else None


def one_character_request(role: str, story: str) -> str:
    return (
        f'In the following story in single quotes, please extract the name of the {role}, if it exists '
        f'(put "Unspecified" otherwise). In an array, please also extract all words used to uniquely refer to the '
        f'{role}, {_REFERENCE_GUIDE}\n'
        'Return a JSON response using the following type definition:\n'
        '{\n'
        f'  "{role} name": "Unspecified",\n'
        f'  "{role} references": []\n'
        '}\n'
        f"'{story}'"
    )


def two_character_request(subject_key: str, object_key: str, story: str) -> str:
    return (
        f'In the following story in single quotes, please extract the names of the {subject_key} and {object_key}, '
        'if they exist (put "Unspecified" otherwise). In one array, please also extract all words used to uniquely '
        f'refer to the {subject_key}, {_REFERENCE_GUIDE}\n'
        f'In another array, please also extract all words used to uniquely refer to the {object_key}, '
        f'{_REFERENCE_GUIDE}\n'
        'Return a JSON response using the following type definition:\n'
        '{\n'
        f'  "{subject_key} name": "Unspecified",\n'
        f'  "{object_key} name": "Unspecified",\n'
        f'  "{subject_key} references": [],\n'
        f'  "{object_key} references": []\n'
        '}\n'
        f"'{story}'"
    )


@dataclass(frozen=True)
class LabelKeys:
    subject_key: str
    object_key: str | None  # None: the one-character form

    def request(self, story: str) -> str:
        if self.object_key is None:
            return one_character_request(self.subject_key, story)
        return two_character_request(self.subject_key, self.object_key, story)

    def answer(self, subject_name: str | None, subject_references: list[str],
               object_name: str | None = None, object_references: list[str] | None = None) -> str:
        """The JSON a perfect labeler returns, keys in the type-definition order (fine-tuning targets)."""
        if self.object_key is None:
            body = {f"{self.subject_key} name": subject_name or "Unspecified",
                    f"{self.subject_key} references": subject_references}
        else:
            body = {f"{self.subject_key} name": subject_name or "Unspecified",
                    f"{self.object_key} name": object_name or "Unspecified",
                    f"{self.subject_key} references": subject_references,
                    f"{self.object_key} references": object_references or []}
        return json.dumps(body, ensure_ascii=False)


_LOVE_SUBJECT = re.compile(r"^(two american|an american person)\b", re.IGNORECASE)


def label_keys(query: str | None, subject: str | None, object_: str | None) -> LabelKeys:
    """The role keys for one story: from the catalog when its prompt is there (matched by whitespace-normalised
    text), else from subject/object as docs/METHOD.md gives them for Learning/Labor. Love prompts outside the catalog
    raise ValueError: their keys depend on the predicate, which only the catalog carries."""
    prompt = catalog_prompt_for(query)
    if prompt is not None:
        if prompt.label_form == "one":
            return LabelKeys(prompt.subject_key, None)
        return LabelKeys(prompt.subject_key, prompt.object_key)
    subject_text = (subject or "").strip()
    object_text = (object_ or "").strip()
    if not subject_text:
        raise ValueError("query not in the prompt catalog and no subject to name the role")
    if _LOVE_SUBJECT.match(subject_text):
        raise ValueError("Love query not in the prompt catalog: add it to seeds/prompt_catalog.csv with its keys")
    return LabelKeys(subject_text, object_text or None)


_TYPE_KEY = re.compile(r'^\s*"(.+) (name|references)": ', re.MULTILINE)


def keys_from_request(request_text: str) -> LabelKeys:
    """The role keys a stored request asked for, read from its type-definition block."""
    block = request_text.partition("Return a JSON response using the following type definition:\n")[2]
    block = block.partition("\n}\n")[0]
    roles = list(dict.fromkeys(match.group(1) for match in _TYPE_KEY.finditer(block)))
    if not roles or len(roles) > 2:
        raise ValueError("request has no type-definition block with one or two roles")
    return LabelKeys(roles[0], roles[1] if len(roles) == 2 else None)


def story_messages(query: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": query}]


def label_messages(request_text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": request_text}]
