-- Characters summed into cells of model x domain x condition x gender, plus the same cells over all models
-- (var all_models_label). Every count-based measure reads these cells, so the characters are scanned once.
-- Race weights are summed over matched characters only (a weight is 0 when not matched, but a null or a
-- stray weight on an unmatched name must not enter a race count).

with characters as (

    select
        model,
        domain,
        condition,
        gender,
        first_name,
        name_matched,
        {%- for race in measure_race_codes() %}
            {{ race_weight_column(race) }}{% if not loop.last %},{% endif %}
        {%- endfor %}
    from {{ ref('int_characters_joined') }}

),

per_model as (

    select
        model,
        domain,
        condition,
        gender,
        cast(count(*) as bigint) as characters,
        cast(count(first_name) as bigint) as with_name,
        cast(sum(case when name_matched then 1 else 0 end) as bigint) as with_matched_name,
        {%- for race in measure_race_codes() %}
            cast(sum(case when name_matched then coalesce({{ race_weight_column(race) }}, 0) else 0 end) as double)
                as weight_sum_{{ race }}{% if not loop.last %},{% endif %}
        {%- endfor %}
    from characters
    group by model, domain, condition, gender

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
        {%- for race in measure_race_codes() %}
            cast(sum(weight_sum_{{ race }}) as double) as weight_sum_{{ race }}{% if not loop.last %},{% endif %}
        {%- endfor %}
    from per_model
    group by domain, condition, gender

)

select * from per_model
union all
select * from all_models
