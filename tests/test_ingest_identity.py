"""The frame-at-once ids (lfh.identity.story_ids / response_ids, used by ingest) equal the row-by-row ids."""

from __future__ import annotations

import polars as pl

from lfh.identity import response_id, response_ids, story_id, story_ids

TRICKY_TEXTS = ["", " ", "plain", "naïve café — 東京 🙂", "line one\nline two\r\n", "tab\there",
                "\x1f", "a\x1fb", "\x00nul", None]


def test_story_ids_equal_the_row_by_row_ids_on_tricky_inputs() -> None:
    rows = [(model, query, text, occurrence)
            for model in ("ChatGPT3.5", "Ünïcode-model", "", None)
            for query in ("Write a story about a student.", "", "query\nwith newline", None)
            for text in TRICKY_TEXTS
            for occurrence in (1, 2, 10)]
    frame = pl.DataFrame(rows, schema={"model_canonical": pl.String, "query": pl.String, "story_text": pl.String,
                                       "occurrence": pl.Int32}, orient="row")

    assert story_ids(frame).to_list() == [story_id(*row) for row in rows]


def test_a_separator_inside_a_value_is_joined_the_same_way() -> None:
    # "a\x1fb" + "c" and "a" + "b\x1fc" join to the same text; both ways must hash exactly that text
    frame = pl.DataFrame({"model_canonical": ["a\x1fb", "a"], "query": ["c", "b\x1fc"], "story_text": ["t", "t"],
                          "occurrence": [1, 1]})
    assert story_ids(frame).to_list() == [story_id("a\x1fb", "c", "t", 1), story_id("a", "b\x1fc", "t", 1)]


def test_response_ids_equal_the_row_by_row_ids_on_tricky_inputs() -> None:
    rows = [(story, labeler, version, index)
            for story in ("0" * 64, "gen-1", "", "ü\n")
            for labeler in ("gpt-4o-mini", "", None)
            for version in ("method-v1", "v\x1f2", None)
            for index in (0, 1, 123456)]
    frame = pl.DataFrame(rows, schema={"story_id": pl.String, "labeler_model": pl.String, "prompt_version": pl.String,
                                       "sample_index": pl.Int64}, orient="row")

    assert response_ids(frame).to_list() == [response_id(*row) for row in rows]


def test_an_empty_frame_has_no_ids() -> None:
    frame = pl.DataFrame(schema={"model_canonical": pl.String, "query": pl.String, "story_text": pl.String,
                                 "occurrence": pl.Int32})
    assert story_ids(frame).len() == 0
