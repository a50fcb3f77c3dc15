{{ config(**story_incremental()) }}
-- One row per labeled story and role (docs/METHOD.md §2-§5); the logic lives in intermediate/int_characters_joined.
with

characters as (
    select
        story_id, role, model, domain, prompt_condition, condition, prompt_id, role_text, samples, gender,
        full_name, first_name, first_name_key, name_matched, in_census, in_wikipedia, weight_aian, weight_asian,
        weight_black, weight_latine, weight_mena, weight_nhpi, weight_white, weight_multiracial, last_name,
        surname_matched, race_source, has_race
    from {{ changed_only(ref('int_characters_joined')) }}
)

select
    cast(story_id as string) as story_id,
    cast(role as string) as role,
    cast(model as string) as model,
    cast(domain as string) as domain,
    cast(prompt_condition as string) as prompt_condition,
    cast(condition as string) as condition,
    cast(prompt_id as string) as prompt_id,
    cast(role_text as string) as role_text,
    cast(samples as integer) as samples,
    cast(gender as string) as gender,
    cast(full_name as string) as full_name,
    cast(first_name as string) as first_name,
    cast(first_name_key as string) as first_name_key,
    cast(name_matched as boolean) as name_matched,
    cast(in_census as boolean) as in_census,
    cast(in_wikipedia as boolean) as in_wikipedia,
    cast(weight_aian as double) as weight_aian,
    cast(weight_asian as double) as weight_asian,
    cast(weight_black as double) as weight_black,
    cast(weight_latine as double) as weight_latine,
    cast(weight_mena as double) as weight_mena,
    cast(weight_nhpi as double) as weight_nhpi,
    cast(weight_white as double) as weight_white,
    cast(weight_multiracial as double) as weight_multiracial,
    cast(last_name as string) as last_name,
    cast(surname_matched as boolean) as surname_matched,
    cast(race_source as string) as race_source,
    cast(has_race as boolean) as has_race
from characters
