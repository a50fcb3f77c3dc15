{{ config(**story_incremental()) }}
-- The gender of each character, by two rules; var gender_rule picks the one in `gender` (docs/GENDER_RULE.md).
--
-- study (METHOD.md §4.4 exactly): indicator words (seeds/gender_indicator_words.csv) among the tokens of the
-- counted references: exactly one set hit -> that gender; none -> unspecified; more than one -> unsure.
--
-- refined (the default), on the same counted references:
--   1. cues: male and female indicator words as in §4.4; non-binary cues from seeds/nonbinary_cue_words.csv,
--      where an `explicit` cue (Mx, themself, a neopronoun, "non-binary") always counts and a `they_word`
--      (they, them, their, theirs, theirself) counts only when the story gives no plural reading of it:
--        a. in a two-character story, the other character was given a they-word too (the pair), or
--        b. a sentence of the story holds a they-word and a plural marker (var plural_they_markers: both,
--           together, each other, one another), or, in a two-character story, both characters' first names.
--   2. one cue class -> that gender; several -> the class with the most reference mentions (a tie -> unsure).
--   3. no cue at all -> the male or female indicator words among the character's in-story references that
--      missed the vote (§4.3), when they point one way only; else unspecified.
{%- set rule = var('gender_rule') %}
{%- if rule not in ['study', 'refined'] %}
    {{ exceptions.raise_compiler_error("var gender_rule must be 'study' or 'refined', got '" ~ rule ~ "'") }}
{%- endif %}
{%- set markers = var('plural_they_markers') %}
with

story_roles as (
    select story_id, role
    from {{ changed_only(ref('int_story_roles_assigned')) }}
),

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

stories as (
    select story_id, story_text
    from {{ changed_only(ref('int_stories_placed')) }}
),

first_names as (
    select story_id, role, lower(first_name) as first_name
    from {{ changed_only(ref('int_characters_named')) }}
    where first_name is not null
),

reference_tokens as (
    select story_id, role, is_counted, reference_count, {{ unnest_list(indicator_tokens('reference')) }} as token
    from references_in_story
),

-- §4.4, the study's rule: distinct indicator sets hit by the counted references
study_hits as (
    select
        reference_tokens.story_id,
        reference_tokens.role,
        count(distinct indicator_words.gender) as gender_sets_hit,
        min(indicator_words.gender) as gender_hit
    from reference_tokens
    inner join indicator_words
        on reference_tokens.token = indicator_words.indicator_word
    where reference_tokens.is_counted
    group by reference_tokens.story_id, reference_tokens.role
),

-- refined: every cue token with its kind and mentions
cue_tokens as (
    select
        reference_tokens.story_id,
        reference_tokens.role,
        reference_tokens.is_counted,
        reference_tokens.reference_count,
        case
            when nonbinary_cue_words.cue_kind is not null then 'nonbinary'
            else indicator_words.gender
        end as cue_gender,
        coalesce(nonbinary_cue_words.cue_kind, 'gendered') as cue_kind
    from reference_tokens
    left join indicator_words
        on reference_tokens.token = indicator_words.indicator_word
        and indicator_words.gender in ('male', 'female')
    left join nonbinary_cue_words
        on reference_tokens.token = nonbinary_cue_words.cue_word
    where indicator_words.gender is not null or nonbinary_cue_words.cue_kind is not null
),

they_word_roles as (
    select distinct story_id, role
    from cue_tokens
    where is_counted and cue_kind = 'they_word'
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

pair_they_stories as (
    select story_id
    from they_word_roles
    group by story_id
    having count(*) = 2
),

kept_cues as (
    select cue_tokens.story_id, cue_tokens.role, cue_tokens.cue_gender, sum(cue_tokens.reference_count) as mentions
    from cue_tokens
    where cue_tokens.is_counted
        and not (
            cue_tokens.cue_kind = 'they_word'
            and (
                cue_tokens.story_id in (select pair_they_stories.story_id from pair_they_stories)
                or cue_tokens.story_id in (select plural_they_stories.story_id from plural_they_stories)
            )
        )
    group by cue_tokens.story_id, cue_tokens.role, cue_tokens.cue_gender
),

refined_votes as (
    select
        story_id,
        role,
        count(*) as cue_classes,
        max_by(cue_gender, mentions) as leading_gender,
        max(mentions) as leading_mentions,
        count(*) filter (where mentions = max_mentions) as leaders
    from (
        select story_id, role, cue_gender, mentions, max(mentions) over (partition by story_id, role) as max_mentions
        from kept_cues
    ) as ranked_cues
    group by story_id, role
),

unvoted_gendered as (
    select story_id, role, count(distinct cue_gender) as genders, min(cue_gender) as gender
    from cue_tokens
    where not is_counted and cue_kind = 'gendered'
    group by story_id, role
),

genders as (
    select
        story_roles.story_id,
        story_roles.role,
        coalesce(study_hits.gender_sets_hit, 0) as gender_sets_hit,
        case
            when coalesce(study_hits.gender_sets_hit, 0) = 0 then 'unspecified'
            when study_hits.gender_sets_hit = 1 then study_hits.gender_hit
            else 'unsure'
        end as gender_study,
        case
            when refined_votes.leaders = 1 then refined_votes.leading_gender
            when refined_votes.leaders > 1 then 'unsure'
            when unvoted_gendered.genders = 1 then unvoted_gendered.gender
            else 'unspecified'
        end as gender_refined,
        case
            when refined_votes.leaders = 1 and refined_votes.cue_classes = 1 then 'one_cue_class'
            when refined_votes.leaders = 1 then 'majority_of_mentions'
            when refined_votes.leaders > 1 then 'tied_classes'
            when unvoted_gendered.genders = 1 then 'unvoted_gendered_words'
            else 'no_cue'
        end as refined_reason,
        story_roles.story_id in (select pair_they_stories.story_id from pair_they_stories) as has_pair_they,
        story_roles.story_id in (
            select plural_they_stories.story_id from plural_they_stories
        ) as has_plural_they_sentence
    from story_roles
    left join study_hits
        on story_roles.story_id = study_hits.story_id
        and story_roles.role = study_hits.role
    left join refined_votes
        on story_roles.story_id = refined_votes.story_id
        and story_roles.role = refined_votes.role
    left join unvoted_gendered
        on story_roles.story_id = unvoted_gendered.story_id
        and story_roles.role = unvoted_gendered.role
)

select
    story_id,
    role,
    gender_sets_hit,
    {% if rule == 'study' %}gender_study{% else %}gender_refined{% endif %} as gender,
    gender_study,
    gender_refined,
    refined_reason,
    has_pair_they,
    has_plural_they_sentence,
    cast('{{ rule }}' as string) as gender_rule
from genders
