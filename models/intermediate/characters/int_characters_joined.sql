{{ config(**story_incremental()) }}
-- docs/METHOD.md §2-§5 together: each character's condition, gender, name and race weights: from the first name
-- when the first-name lexicon has it; under var race_name_source = first_then_surname (the default), else from
-- the surname when the Census surname table has it (macro race_source_expression, docs/RACE_NAMES.md).
-- name_matched / in_census / in_wikipedia describe the first name only; has_race says the character enters
-- race counts.
with

story_roles as (
    select story_id, role, model, domain, prompt_condition, condition, prompt_id, role_text, samples
    from {{ changed_only(ref('int_story_roles_assigned')) }}
),

genders as (
    select story_id, role, gender
    from {{ changed_only(ref('int_characters_gendered')) }}
),

names as (
    select
        story_id, role, full_name, first_name, first_name_key, last_name,
        {{ normalize_name_key('last_name') }} as last_name_key
    from {{ changed_only(ref('int_characters_named')) }}
),

lexicon as (
    select
        first_name_key, in_census, in_wikipedia, weight_aian, weight_asian, weight_black, weight_latine,
        weight_mena, weight_nhpi, weight_white, weight_multiracial
    from {{ ref('int_first_names_merged') }}
),

surnames as (
    select
        surname_key,
        {%- for race in measure_race_codes() %}
        weight_{{ race }}{{ ',' if not loop.last }}
        {%- endfor %}
    from {{ ref('int_surnames_mapped') }}
),

matched as (
    select
        story_roles.story_id,
        story_roles.role,
        story_roles.model,
        story_roles.domain,
        story_roles.prompt_condition,
        story_roles.condition,
        story_roles.prompt_id,
        story_roles.role_text,
        story_roles.samples,
        genders.gender,
        names.full_name,
        names.first_name,
        names.first_name_key,
        names.last_name,
        names.last_name_key,
        lexicon.first_name_key is not null as name_matched,
        surnames.surname_key is not null as surname_matched,
        {{ race_source_expression('lexicon.first_name_key is not null', 'surnames.surname_key is not null',
                                  var('race_name_source')) }} as race_source,
        lexicon.in_census,
        lexicon.in_wikipedia,
        {%- for race in measure_race_codes() %}
        lexicon.weight_{{ race }} as first_name_weight_{{ race }},
        surnames.weight_{{ race }} as surname_weight_{{ race }}{{ ',' if not loop.last }}
        {%- endfor %}
    from story_roles
    inner join genders
        on
            story_roles.story_id = genders.story_id
            and story_roles.role = genders.role
    left join names
        on
            story_roles.story_id = names.story_id
            and story_roles.role = names.role
    left join lexicon
        on names.first_name_key = lexicon.first_name_key
    left join surnames
        on names.last_name_key = surnames.surname_key
)

select
    story_id,
    role,
    model,
    domain,
    prompt_condition,
    condition,
    prompt_id,
    role_text,
    samples,
    gender,
    full_name,
    first_name,
    first_name_key,
    name_matched,
    coalesce(in_census, false) as in_census,
    coalesce(in_wikipedia, false) as in_wikipedia,
    {%- for race in measure_race_codes() %}
    {{ race_weight_from_source('race_source', 'first_name_weight_' ~ race, 'surname_weight_' ~ race) }}
        as weight_{{ race }},
    {%- endfor %}
    last_name,
    last_name_key,
    surname_matched,
    race_source,
    race_source is not null as has_race
from matched
