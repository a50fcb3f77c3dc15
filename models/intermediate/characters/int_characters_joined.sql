{{ config(**story_incremental()) }}
-- METHOD.md §2-§5 together: each character's condition, gender, name and the race weights of its first name.
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
    select story_id, role, full_name, first_name, first_name_key
    from {{ changed_only(ref('int_characters_named')) }}
),

lexicon as (
    select
        first_name_key, in_census, in_wikipedia, weight_aian, weight_asian, weight_black, weight_latine,
        weight_mena, weight_nhpi, weight_white, weight_multiracial
    from {{ ref('int_first_names_merged') }}
)

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
    lexicon.first_name_key is not null as name_matched,
    coalesce(lexicon.in_census, false) as in_census,
    coalesce(lexicon.in_wikipedia, false) as in_wikipedia,
    coalesce(lexicon.weight_aian, 0.0) as weight_aian,
    coalesce(lexicon.weight_asian, 0.0) as weight_asian,
    coalesce(lexicon.weight_black, 0.0) as weight_black,
    coalesce(lexicon.weight_latine, 0.0) as weight_latine,
    coalesce(lexicon.weight_mena, 0.0) as weight_mena,
    coalesce(lexicon.weight_nhpi, 0.0) as weight_nhpi,
    coalesce(lexicon.weight_white, 0.0) as weight_white,
    coalesce(lexicon.weight_multiracial, 0.0) as weight_multiracial
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
