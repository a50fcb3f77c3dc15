-- The units of the three corrections (docs/METHOD.md §9, docs/CORRECTION.md), counted once for every reader: the
-- correction models (int_gender_shares_corrected, int_occupation_shares_corrected, int_couple_shares_corrected), the
-- hand-label planner (lfh audit-plan) and the checks that hide hand labels (bench/correction_check.py).
-- family    unit                                                  cell_key     condition     machine_class / hand_class
-- gender    a character                                           its domain   its condition its gender, 'none' if none
-- occupation the subject of a Labor story                         occupation   its condition its gender, 'none' if none
-- couple    a romantic Love story with two characters             'romantic'   null          its couple type, 'untyped'
-- Units of one story with the same values are counted in one row (unit_count). The story's own columns are its
-- sampling stratum: model, domain, prompt_condition, and story_class, what the machine labels say of the story
-- before anyone hand-labels it: 'gendered' when every character is female or male, else 'uncertain'
-- (docs/CORRECTION.md, "Strata on the machine labels"). hand_class is null where the unit has no hand label; a couple
-- counts as hand-labeled only when both of its characters carry one. The story grain lets a check hide the hand
-- labels of some stories in a copy of this relation.
with

characters as (
    select story_id, role, model, domain, prompt_condition, condition, prompt_id, inferred_gender, hand_gender,
        is_hand_labeled
    from {{ ref('int_characters_hand_paired') }}
),

stories as (
    select
        story_id,
        max(prompt_condition) as prompt_condition,
        case when min(case when inferred_gender in ('female', 'male') then 1 else 0 end) = 1
            then 'gendered' else 'uncertain' end as story_class
    from characters
    group by story_id
),

occupations as (
    select prompt_id, subject as occupation
    from {{ ref('prompt_catalog') }}
    where domain = 'labor'
),

units as (
    select
        'gender' as family,
        story_id,
        model,
        domain,
        domain as cell_key,
        condition,
        coalesce(inferred_gender, 'none') as machine_class,
        case when is_hand_labeled then hand_gender end as hand_class,
        is_hand_labeled
    from characters

    union all

    select
        'occupation' as family,
        characters.story_id,
        characters.model,
        characters.domain,
        occupations.occupation as cell_key,
        characters.condition,
        coalesce(characters.inferred_gender, 'none') as machine_class,
        case when characters.is_hand_labeled then characters.hand_gender end as hand_class,
        characters.is_hand_labeled
    from characters
    inner join occupations on characters.prompt_id = occupations.prompt_id
    where characters.domain = 'labor' and characters.role = 'subject'

    union all

    select
        'couple' as family,
        typed.story_id,
        typed.model,
        'love' as domain,
        'romantic' as cell_key,
        cast(null as string) as condition,
        coalesce(typed.inferred_couple_type, 'untyped') as machine_class,
        case when typed.is_hand_labeled then coalesce(typed.hand_couple_type, 'untyped') end as hand_class,
        typed.is_hand_labeled
    from {{ ref('int_couples_typed') }} as typed
    where typed.characters = 2
        and {{ in_selected_versions('typed.story_id') }}  -- the model versions the measures use (docs/RUNS.md)
)

select
    units.family,
    units.story_id,
    units.model,
    units.domain,
    stories.prompt_condition,
    stories.story_class,
    units.cell_key,
    units.condition,
    units.machine_class,
    units.hand_class,
    units.is_hand_labeled,
    count(*) as unit_count
from units
-- every unit's story has characters (a couple's are its two): a unit without one keeps null stratum columns,
-- which the not_null_columns test on them reports rather than a default stratum hides
left join stories on units.story_id = stories.story_id
group by
    units.family,
    units.story_id,
    units.model,
    units.domain,
    stories.prompt_condition,
    stories.story_class,
    units.cell_key,
    units.condition,
    units.machine_class,
    units.hand_class,
    units.is_hand_labeled
