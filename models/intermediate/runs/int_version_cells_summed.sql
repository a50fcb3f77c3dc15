-- Characters summed into cells of model x version x domain x condition x gender, every version of every model
-- (fct_model_drift compares them): the same sums as int_character_cells_summed (macro character_cells_summed),
-- with each story's model version (int_story_versions_assigned).
with

versions as (
    select story_id, model_version
    from {{ ref('int_story_versions_assigned') }}
),

characters as (
    select
        joined.model,
        versions.model_version,
        joined.domain,
        joined.condition,
        joined.gender,
        joined.first_name,
        joined.name_matched,
        joined.has_race,
        joined.race_source,
        {%- for race in measure_race_codes() %}
            joined.{{ race_weight_column(race) }}{% if not loop.last %},{% endif %}
        {%- endfor %}
    from {{ ref('int_characters_joined') }} as joined
    inner join versions
        on joined.story_id = versions.story_id
)

{{ character_cells_summed('characters', ['model', 'model_version']) }}
