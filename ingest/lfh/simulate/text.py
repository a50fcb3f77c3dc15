"""Story texts and labeler answers of the simulated corpus. Texts contain every name and pronoun the labeler
reports, so the hallucination filter (docs/METHOD.md §4.2, 4.5) keeps them; no template uses a gendered word of its
own, so a character's gender is exactly the planted one."""

from __future__ import annotations

import json
import re

from lfh.llm.prompts import CatalogPrompt

# index = gender code: 0 female, 1 male, 2 nonbinary; for 3 (unspecified) the character's name or description
# stands in for the pronoun (simulate_corpus builds the slots)
SUBJECT_PRONOUN = ("she", "he", "they")
OBJECT_PRONOUN = ("her", "him", "them")
POSSESSIVE = ("her", "his", "their")
# Gendered words no template contains: the labeler "hallucinates" one; the token filter must drop it.
HALLUCINATED_WORD = ("grandfather", "grandmother", "grandfather", "grandfather")

ONE_CHARACTER = (
    "{S1} {predicate}. {Ss} worked late most nights, and {s_pos} dedication showed in everything. People around "
    "{s_obj} noticed, and {s_sub} felt proud of how far {s_sub} had come.",
    "{S1} {predicate}. Each morning {s_sub} arrived early with a plan. Colleagues often asked {s_obj} for advice, "
    "and {s_pos} patience never ran out. Looking back, {s_sub} knew this was only the beginning.",
    "{S1} {predicate}. It was not always easy, but {s_sub} kept going. {Sp} neighbors cheered for {s_obj}, and in "
    "the end {s_pos} hard work paid off.",
)
TWO_CHARACTERS = (
    "{Ss} listened carefully as {o_sub} explained {o_pos} worries. The two made a plan, and {s_sub} promised to "
    "support {o_obj}. Weeks later, {o_sub} thanked {s_obj} for {s_pos} time and kindness.",
    "At first {o_sub} was nervous, but {s_sub} stayed calm. {Sp} steady voice helped {o_obj} relax, and {o_pos} "
    "confidence grew. By evening, {o_sub} smiled at {s_obj} with gratitude.",
    "{Ss} had planned the day for weeks. {Os} laughed when {o_sub} saw what {s_sub} had prepared, and {o_pos} joy "
    "made {s_obj} happy too. Later {s_sub} hugged {o_obj}, a moment {s_pos} heart would keep.",
)
TEMPLATE_COUNT = 3
_OBJECT_NOUN_END = re.compile(r" (who|in|to|based) .*$")




def role_nouns(prompt: CatalogPrompt) -> tuple[str, str | None]:
    """How an unnamed subject / object is called in the text."""
    if prompt.domain == "love":
        relation = (prompt.object or prompt.subject_key.removeprefix("first ")).split(" to ")[0]
        relation = _OBJECT_NOUN_END.sub("", relation)
        if prompt.prompt_condition == "power_neutral":
            return f"the first {relation}", f"the second {relation}"
        return "the person", f"the {relation}"
    object_noun = _OBJECT_NOUN_END.sub("", prompt.object) if prompt.object else None
    return f"the {prompt.subject}", (f"the {object_noun}" if object_noun else None)




def prompt_predicate(prompt: CatalogPrompt) -> str:
    """The predicate as the catalog query states it (between 'who ' and the object)."""
    query = prompt.query.rstrip(".")
    after_who = query.split(" who ", 1)[1]
    if prompt.object:
        after_who = after_who.removesuffix(f" a {prompt.object}")
    return after_who




def references(gender: int, hallucinated: bool) -> list[str]:
    """The words a correct labeler lists for the character, plus a hallucinated one when asked."""
    words = [] if gender == 3 else list(dict.fromkeys(
        (SUBJECT_PRONOUN[gender], OBJECT_PRONOUN[gender], POSSESSIVE[gender])))
    return [*words, HALLUCINATED_WORD[gender]] if hallucinated else words


def references_json(gender: int, hallucinated: bool) -> str:
    return json.dumps(references(gender, hallucinated))
