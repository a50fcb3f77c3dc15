-- Characters summed into cells of model x domain x condition x gender (macro character_cells_summed, which
-- int_version_cells_summed calls per model version), plus the same cells over all models (var all_models_label).
-- Every count-based measure reads these cells, so the characters are scanned once.
-- Race weights are summed over characters with race only (has_race: a matched first name, or a matched
-- surname under var race_name_source = first_then_surname; a weight is 0 without race, but a null or a stray
-- weight must not enter a race count). with_matched_name counts matched first names (the study's coverage);
-- with_race the characters in race counts, split by where their race comes from. square_sum_<race>: the squared
-- weights, for the variance of a fractional share (int_groups_counted.sum_of_squares, docs/CONTRASTS.md), over the
-- same characters as the weights (has_race): Q must square the very values whose sum is N.

with characters as (

    select
        model,
        domain,
        condition,
        gender,
        first_name,
        name_matched,
        has_race,
        race_source,
        {%- for race in measure_race_codes() %}
            {{ race_weight_column(race) }}{% if not loop.last %},{% endif %}
        {%- endfor %}
    from {{ ref('int_characters_joined') }}
    -- the model versions the measures use (int_model_versions_ranked.is_selected; all stories when each model
    -- has one version)
    where {{ in_selected_versions('story_id') }}

),

per_model as (

    {{ character_cells_summed('characters', ['model']) }}

),

all_models as (

    select
        cast('{{ var("all_models_label") }}' as string) as model,
        domain,
        condition,
        gender,
        cast(sum(characters) as bigint) as characters,
        cast(sum(with_name) as bigint) as with_name,
        cast(sum(with_matched_name) as bigint) as with_matched_name,
        cast(sum(with_race) as bigint) as with_race,
        cast(sum(with_race_from_first_name) as bigint) as with_race_from_first_name,
        cast(sum(with_race_from_surname) as bigint) as with_race_from_surname,
        {%- for race in measure_race_codes() %}
            cast(sum(weight_sum_{{ race }}) as double) as weight_sum_{{ race }},
        {%- endfor %}
        {%- for race in measure_race_codes() %}
            cast(sum(square_sum_{{ race }}) as double) as square_sum_{{ race }}{% if not loop.last %},{% endif %}
        {%- endfor %}
    from per_model
    group by domain, condition, gender

)

select * from per_model
union all
select * from all_models
