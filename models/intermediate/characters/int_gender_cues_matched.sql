{{ config(**story_incremental()) }}
-- The gender words of each character's in-story references (docs/METHOD.md §4.4, docs/GENDER_RULE.md): every token
-- of a reference that is an indicator word (seeds/gender_indicator_words.csv) or a non-binary cue
-- (seeds/nonbinary_cue_words.csv), with the reference's vote and mentions. int_characters_gendered reads both rules
-- from it: the study's indicator sets (indicator_gender) and the refined rule's cues (cue_gender, cue_kind).
with

references_in_story as (
    select story_id, role, reference, reference_count, is_counted
    from {{ changed_only(ref('int_references_voted')) }}
    where in_story
),

indicator_words as (
    select distinct lower(trim(indicator_word)) as indicator_word, gender
    from {{ ref('gender_indicator_words') }}
),

nonbinary_cue_words as (
    select distinct lower(trim(cue_word)) as cue_word, cue_kind
    from {{ ref('nonbinary_cue_words') }}
),

reference_tokens as (
    select story_id, role, is_counted, reference_count, {{ unnest_list(indicator_tokens('reference')) }} as token
    from references_in_story
)

select
    reference_tokens.story_id,
    reference_tokens.role,
    reference_tokens.token,
    reference_tokens.is_counted,
    reference_tokens.reference_count,
    indicator_words.gender as indicator_gender,
    -- the refined rule's cues: male and female indicator words, and every non-binary cue word
    case
        when nonbinary_cue_words.cue_kind is not null then 'nonbinary'
        when indicator_words.gender in ('male', 'female') then indicator_words.gender
    end as cue_gender,
    case
        when nonbinary_cue_words.cue_kind is not null then nonbinary_cue_words.cue_kind
        when indicator_words.gender in ('male', 'female') then 'gendered'
    end as cue_kind
from reference_tokens
left join indicator_words
    on reference_tokens.token = indicator_words.indicator_word
left join nonbinary_cue_words
    on reference_tokens.token = nonbinary_cue_words.cue_word
where indicator_words.gender is not null or nonbinary_cue_words.cue_kind is not null
