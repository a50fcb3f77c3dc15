-- N and D per model (and 'All', var all_models_label) x Labor occupation x condition x group, over the characters
-- who hold the occupation: the subject of each Labor prompt, in power-neutral prompts (condition baseline) and in
-- power-laden ones (condition dominant: the occupation holder who mentors, critiques, catches ... someone). The
-- object of a power-laden prompt (new employee, patient, fan) does not hold the occupation and is not counted.
--   gender: N = characters of the gender; D = characters whose gender is one of var occupation_gender_codes
--           (female, male: CPS records sex as female or male only, so non-binary characters leave D and are
--           counted in nonbinary_characters; unspecified and unsure leave D as everywhere, METHOD.md §6)
--   race:   N = sum of p_r(name) over characters with race; D = characters with race (as METHOD.md §6; with race:
--           a matched first name, or a matched surname under var race_name_source = first_then_surname)

with characters as (

    select model, condition, prompt_id, gender, has_race,
        {%- for race in measure_race_codes() %}
        {{ race_weight_column(race) }}{% if not loop.last %},{% endif %}
        {%- endfor %}
    from {{ ref('int_characters_joined') }}  -- not fct_characters: no model reads a mart (tests/test_layers.py)
    where domain = 'labor' and role = 'subject'
        and {{ in_selected_versions('story_id') }}  -- the model versions the measures use (docs/RUNS.md)

),

occupations as (

    select prompt_id, subject as occupation
    from {{ ref('prompt_catalog') }}
    where domain = 'labor'

),

occupation_characters as (

    select
        characters.model,
        occupations.occupation,
        characters.condition,
        characters.gender,
        characters.has_race,
        {%- for race in measure_race_codes() %}
        characters.{{ race_weight_column(race) }}{% if not loop.last %},{% endif %}
        {%- endfor %}
    from characters
    inner join occupations on characters.prompt_id = occupations.prompt_id

),

per_model as (

    select
        model,
        occupation,
        condition,
        cast(count(*) as bigint) as characters,
        cast(sum(case when gender = 'nonbinary' then 1 else 0 end) as bigint) as nonbinary_characters,
        cast(sum(case when gender in {{ sql_in_list(var('occupation_gender_codes')) }} then 1 else 0 end)
            as bigint) as gender_denominator,
        {%- for gender in var('occupation_gender_codes') %}
        cast(sum(case when gender = '{{ gender }}' then 1 else 0 end) as double) as gender_count_{{ gender }},
        {%- endfor %}
        cast(sum(case when has_race then 1 else 0 end) as bigint) as with_race,
        {%- for race in measure_race_codes() %}
        cast(sum(case when has_race then coalesce({{ race_weight_column(race) }}, 0) else 0 end) as double)
            as weight_sum_{{ race }}{% if not loop.last %},{% endif %}
        {%- endfor %}
    from occupation_characters
    group by model, occupation, condition

),

all_models as (

    select
        cast('{{ var("all_models_label") }}' as string) as model,
        occupation,
        condition,
        cast(sum(characters) as bigint) as characters,
        cast(sum(nonbinary_characters) as bigint) as nonbinary_characters,
        cast(sum(gender_denominator) as bigint) as gender_denominator,
        {%- for gender in var('occupation_gender_codes') %}
        cast(sum(gender_count_{{ gender }}) as double) as gender_count_{{ gender }},
        {%- endfor %}
        cast(sum(with_race) as bigint) as with_race,
        {%- for race in measure_race_codes() %}
        cast(sum(weight_sum_{{ race }}) as double) as weight_sum_{{ race }}{% if not loop.last %},{% endif %}
        {%- endfor %}
    from per_model
    group by occupation, condition

),

cells as (

    select * from per_model
    union all
    select * from all_models

)

{% for gender in var('occupation_gender_codes') %}
select
    model,
    occupation,
    condition,
    cast(null as string) as race,
    cast('{{ gender }}' as string) as gender,
    characters,
    nonbinary_characters,
    gender_count_{{ gender }} as numerator,
    gender_denominator as denominator
from cells
union all
{% endfor %}
{%- for race in measure_race_codes() %}
select
    model,
    occupation,
    condition,
    cast('{{ race }}' as string) as race,
    cast(null as string) as gender,
    characters,
    cast(null as bigint) as nonbinary_characters,
    weight_sum_{{ race }} as numerator,
    with_race as denominator
from cells
{% if not loop.last %}union all{% endif %}
{%- endfor %}
