-- Couples of romantic Love stories (docs/METHOD.md §6, sexual orientation), one row per story of a prompt whose
-- relation is 'romantic partner' (both conditions: the two partners of a power-neutral story, or the dominant and
-- the subordinate partner of a power-laden one). The relation comes from seeds/prompt_catalog.csv through
-- prompt_id; for a story whose query is not in the catalog, from the role text the labeler was asked about.
-- A couple's type is the unordered pair of its two characters' genders (min || '_' || max), by the inferred
-- genders and by the hand genders; null when the story has not exactly two characters or when a gender is not
-- female, male or nonbinary (unspecified, unsure; a hand label the project cannot code, 'unmapped').
-- Read by int_couples_counted (inferred types), int_couple_shares_corrected (both) and fct_labeler_couples.
with

characters as (
    select story_id, role, model, prompt_id, role_text, gender
    from {{ ref('int_characters_joined') }}
    where domain = 'love'
),

hand_labels as (
    select story_id, role, hand_gender
    from {{ ref('int_hand_labels_paired') }}
    where domain = 'love'
),

catalog as (
    select prompt_id, relation from {{ ref('prompt_catalog') }}
),

romantic_characters as (
    select
        characters.story_id,
        characters.model,
        characters.gender as inferred_gender,
        hand_labels.hand_gender
    from characters
    left join catalog on characters.prompt_id = catalog.prompt_id
    left join hand_labels
        on characters.story_id = hand_labels.story_id
        and characters.role = hand_labels.role
    where coalesce(catalog.relation = 'romantic partner', lower(characters.role_text) like '%romantic partner%')
),

couples as (
    select
        story_id,
        min(model) as model,
        count(*) as characters,
        min(inferred_gender) as inferred_first,
        max(inferred_gender) as inferred_second,
        sum(case when inferred_gender in {{ sql_in_list(measure_gender_codes()) }} then 1 else 0 end)
            as inferred_typed,
        min(hand_gender) as hand_first,
        max(hand_gender) as hand_second,
        sum(case when hand_gender in {{ sql_in_list(measure_gender_codes()) }} then 1 else 0 end) as hand_typed,
        count(hand_gender) as hand_labels,
        sum(case when hand_gender <> 'unmapped' then 1 else 0 end) as codable_hand_labels
    from romantic_characters
    group by story_id
)

select
    cast(story_id as string) as story_id,
    cast(model as string) as model,
    cast(characters as bigint) as characters,
    cast(case when characters = 2 and inferred_typed = 2 then inferred_first || '_' || inferred_second end
        as string) as inferred_couple_type,
    cast(case when characters = 2 and hand_typed = 2 then hand_first || '_' || hand_second end
        as string) as hand_couple_type,
    cast(hand_labels as bigint) as hand_labeled_characters,
    characters = 2 and codable_hand_labels = 2 as is_hand_labeled
from couples
