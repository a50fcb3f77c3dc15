"""Stable identities for stories and label responses, and model-name aliases.

A story's id comes from its content (model after aliases, query, text) and its occurrence number among
identical stories of that model in the same source, so the same file arriving again maps to the same ids while
two generations that happen to share a text stay two observations.
"""

from __future__ import annotations

import csv
import hashlib
from functools import cache

from lfh.paths import seeds_dir

SEPARATOR = "\x1f"


def _digest(*parts: object) -> str:
    text = SEPARATOR.join("" if part is None else str(part) for part in parts)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def story_id(model_canonical: str, query: str, story_text: str, occurrence: int) -> str:
    return _digest(model_canonical, query, story_text, occurrence)


def response_id(story: str, labeler_model: str, prompt_version: str, sample_index: int) -> str:
    return _digest(story, labeler_model, prompt_version, sample_index)


@cache
def model_aliases() -> dict[str, str]:
    """alias -> canonical model name, from seeds/model_aliases.csv (matched case-insensitively)."""
    with open(seeds_dir() / "model_aliases.csv", newline="", encoding="utf-8") as handle:
        return {row["alias"].strip().lower(): row["model"].strip() for row in csv.DictReader(handle)}


def canonical_model(name: str) -> str:
    """The canonical model name; names without an alias pass through unchanged (trimmed)."""
    cleaned = name.strip()
    return model_aliases().get(cleaned.lower(), cleaned)
