{#- The counts every count-based measure reads, for any unit of comparison: a model (int_character_cells_summed,
    int_groups_counted) or a model version (int_version_cells_summed, int_version_groups_counted, for
    fct_model_drift), so both are one formula. `units` is the list of columns that name a unit (['model'] or
    ['model', 'model_version']).

    character_cells_summed: characters summed into cells of unit x domain x condition x gender. Race weights are
    summed over characters with race only (has_race); with_matched_name counts matched first names; square_sum_<race>
    the squared weights over the same characters (Q of the contrasts' variance, docs/CONTRASTS.md). `characters` is a
    relation with the unit columns, domain, condition, gender, first_name, name_matched, has_race, race_source and
    the race weight columns. -#}
{% macro character_cells_summed(characters, units) -%}
    select
        {%- for unit in units %}
        {{ unit }},
        {%- endfor %}
        domain,
        condition,
        gender,
        cast(count(*) as bigint) as characters,
        cast(count(first_name) as bigint) as with_name,
        cast(sum(case when name_matched then 1 else 0 end) as bigint) as with_matched_name,
        cast(sum(case when has_race then 1 else 0 end) as bigint) as with_race,
        cast(sum(case when race_source = 'first_name' then 1 else 0 end) as bigint) as with_race_from_first_name,
        cast(sum(case when race_source = 'surname' then 1 else 0 end) as bigint) as with_race_from_surname,
        {%- for race in measure_race_codes() %}
            cast(sum(case when has_race then coalesce({{ race_weight_column(race) }}, 0) else 0 end) as double)
                as weight_sum_{{ race }},
        {%- endfor %}
        {%- for race in measure_race_codes() %}
            cast(sum(case
                when has_race
                    then coalesce({{ race_weight_column(race) }}, 0) * coalesce({{ race_weight_column(race) }}, 0)
                else 0
            end) as double) as square_sum_{{ race }}{% if not loop.last %},{% endif %}
        {%- endfor %}
    from {{ characters }}
    group by {% for unit in units %}{{ unit }}, {% endfor %}domain, condition, gender
{%- endmacro %}

{#- groups_counted: N, D and Q of METHOD.md §6 per unit x domain x condition for every group, from cells of
    character_cells_summed(): race rows (gender null), race x gender rows and gender rows (race null).
      race:          N = sum of p_r(name) over characters with race;     D = characters with race
      race x gender: N = the same sum restricted to the gender;          D = characters with race whose gender is
                                                                             female, male or nonbinary
      gender:        N = characters of the gender;                        D = characters whose gender is female,
                                                                             male or nonbinary
    Every group gets a row in every cell that has characters, with N = 0 where none are in the group. Q: the
    squared race weights summed as N is (race, race x gender rows), and Q = N on gender rows (0/1 values).
    A whole query (its own CTEs): a model's body. -#}
{% macro groups_counted(cells, units) -%}
{%- set unit_list = units | join(', ') -%}
with cells as (

    select * from {{ cells }}

),

races as (
    {{ codes_relation(measure_race_codes(), 'race') }}
),

genders as (
    {{ codes_relation(measure_gender_codes(), 'gender') }}
),

cells_by_race as (

    select
        {%- for unit in units %}
        cells.{{ unit }},
        {%- endfor %}
        cells.domain,
        cells.condition,
        cells.gender,
        cells.characters,
        cells.with_race,
        races.race,
        case races.race
            {%- for race in measure_race_codes() %}
                when '{{ race }}' then cells.weight_sum_{{ race }}
            {%- endfor %}
        end as race_weight_sum,
        case races.race
            {%- for race in measure_race_codes() %}
                when '{{ race }}' then cells.square_sum_{{ race }}
            {%- endfor %}
        end as race_square_sum
    from cells
    cross join races

),

race_rows as (

    select
        {{ unit_list }},
        domain,
        condition,
        race,
        cast(null as string) as gender,
        cast(sum(race_weight_sum) as double) as numerator,
        cast(sum(with_race) as bigint) as denominator,
        cast(sum(race_square_sum) as double) as sum_of_squares
    from cells_by_race
    group by {{ unit_list }}, domain, condition, race

),

race_gender_rows as (

    select
        {%- for unit in units %}
        cells_by_race.{{ unit }},
        {%- endfor %}
        cells_by_race.domain,
        cells_by_race.condition,
        cells_by_race.race,
        genders.gender,
        cast(
            sum(case when cells_by_race.gender = genders.gender then cells_by_race.race_weight_sum else 0 end)
            as double
        ) as numerator,
        cast(sum(case
            when cells_by_race.gender in {{ sql_in_list(measure_gender_codes()) }}
                then cells_by_race.with_race
            else 0
        end) as bigint) as denominator,
        cast(
            sum(case when cells_by_race.gender = genders.gender then cells_by_race.race_square_sum else 0 end)
            as double
        ) as sum_of_squares
    from cells_by_race
    cross join genders
    group by
        {%- for unit in units %} cells_by_race.{{ unit }},{% endfor %}
        cells_by_race.domain, cells_by_race.condition, cells_by_race.race, genders.gender

),

gender_rows as (

    select
        {%- for unit in units %}
        cells.{{ unit }},
        {%- endfor %}
        cells.domain,
        cells.condition,
        cast(null as string) as race,
        genders.gender,
        cast(sum(case when cells.gender = genders.gender then cells.characters else 0 end) as double) as numerator,
        cast(sum(case
            when cells.gender in {{ sql_in_list(measure_gender_codes()) }}
                then cells.characters
            else 0
        end) as bigint) as denominator
    from cells
    cross join genders
    group by {%- for unit in units %} cells.{{ unit }},{% endfor %} cells.domain, cells.condition, genders.gender

)

select {{ unit_list }}, domain, condition, race, gender, numerator, denominator, sum_of_squares from race_rows
union all
select {{ unit_list }}, domain, condition, race, gender, numerator, denominator, sum_of_squares from race_gender_rows
union all
select {{ unit_list }}, domain, condition, race, gender, numerator, denominator, numerator as sum_of_squares
from gender_rows
{%- endmacro %}
