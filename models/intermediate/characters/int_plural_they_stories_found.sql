{{ config(**story_incremental()) }}
-- The refined gender rule (docs/GENDER_RULE.md): where a they-word (they, them, their, ...) may be plural. One row per
-- story whose characters were given a counted they-word, saying whether the story gives it a plural reading:
--   a. in a two-character story, both characters were given a they-word (the pair), or
--   b. a sentence of the story holds a they-word and a plural marker (var plural_they_markers: both, together,
--      each other, one another), or, in a two-character story, both characters' first names.
-- int_characters_gendered then counts a they-word as a non-binary cue only in a story without such a reading.
{%- set markers = var('plural_they_markers') %}
with

they_word_roles as (
    select distinct story_id, role
    from {{ changed_only(ref('int_gender_cues_matched')) }}
    where is_counted and cue_kind = 'they_word'
),

nonbinary_cue_words as (
    select distinct lower(trim(cue_word)) as cue_word, cue_kind
    from {{ ref('nonbinary_cue_words') }}
),

stories as (
    select story_id, story_text
    from {{ changed_only(ref('int_stories_placed')) }}
),

first_names as (
    select story_id, role, lower(first_name) as first_name
    from {{ changed_only(ref('int_characters_named')) }}
    where first_name is not null
),

-- the story's sentences as letter tokens ("they're" -> they, re), only those holding a they-word
story_sentences as (
    select story_id, {{ unnest_list(split_regex('story_text', "'[.!?;\\n]+'")) }} as sentence
    from stories
    where story_id in (select they_word_roles.story_id from they_word_roles)
),

they_sentences as (
    select
        story_id,
        ' ' || {{ list_join(split_regex('lower(sentence)', "'[^a-z]+'"), "' '") }} || ' ' as words
    from story_sentences
    where {{ list_contains_any(
        split_regex('lower(sentence)', "'[^a-z]+'"),
        "(select " ~ agg_list('nonbinary_cue_words.cue_word') ~ " from nonbinary_cue_words"
        ~ " where nonbinary_cue_words.cue_kind = 'they_word')"
    ) }}
),

story_names as (
    select
        story_id,
        max(case when role = 'subject' then first_name end) as subject_first_name,
        max(case when role = 'object' then first_name end) as object_first_name
    from first_names
    group by story_id
),

plural_they_stories as (
    select distinct they_sentences.story_id
    from they_sentences
    left join story_names
        on they_sentences.story_id = story_names.story_id
    where
        {%- for marker in markers %}
        they_sentences.words like '% {{ marker | lower }} %' or
        {%- endfor %}
        (
            contains(they_sentences.words, ' ' || story_names.subject_first_name || ' ')
            and contains(they_sentences.words, ' ' || story_names.object_first_name || ' ')
        )
),

they_roles_counted as (
    select story_id, count(*) as they_word_roles
    from they_word_roles
    group by story_id
)

select
    they_roles_counted.story_id,
    they_roles_counted.they_word_roles = 2 as has_pair_they,
    plural_they_stories.story_id is not null as has_plural_they_sentence
from they_roles_counted
left join plural_they_stories
    on they_roles_counted.story_id = plural_they_stories.story_id
