{{ config(**story_incremental()) }}
-- The gender of each character, by two rules; var gender_rule picks the one in `gender` (docs/GENDER_RULE.md).
--
-- The words come from int_gender_cues_matched, the plural readings of they-words from int_plural_they_stories_found.
--
-- study (docs/METHOD.md §4.4 exactly): indicator words (seeds/gender_indicator_words.csv) among the tokens of the
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
with

story_roles as (
    select story_id, role
    from {{ changed_only(ref('int_story_roles_assigned')) }}
),

matched_words as (
    select story_id, role, is_counted, reference_count, indicator_gender, cue_gender, cue_kind
    from {{ changed_only(ref('int_gender_cues_matched')) }}
),

they_readings as (
    select story_id, has_pair_they, has_plural_they_sentence
    from {{ changed_only(ref('int_plural_they_stories_found')) }}
),

-- §4.4, the study's rule: distinct indicator sets hit by the counted references
study_hits as (
    select
        story_id,
        role,
        count(distinct indicator_gender) as gender_sets_hit,
        min(indicator_gender) as gender_hit
    from matched_words
    where is_counted and indicator_gender is not null
    group by story_id, role
),

-- refined: the counted cues, less the they-words of a story that reads them as plural, summed per class
kept_cues as (
    select
        matched_words.story_id,
        matched_words.role,
        matched_words.cue_gender,
        sum(matched_words.reference_count) as mentions
    from matched_words
    left join they_readings
        on matched_words.story_id = they_readings.story_id
    where matched_words.is_counted and matched_words.cue_gender is not null
        and not (
            matched_words.cue_kind = 'they_word'
            and coalesce(they_readings.has_pair_they or they_readings.has_plural_they_sentence, false)
        )
    group by matched_words.story_id, matched_words.role, matched_words.cue_gender
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
    from matched_words
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
        coalesce(they_readings.has_pair_they, false) as has_pair_they,
        coalesce(they_readings.has_plural_they_sentence, false) as has_plural_they_sentence
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
    left join they_readings
        on story_roles.story_id = they_readings.story_id
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
