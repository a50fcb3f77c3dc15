-- N, D and Q = the sum of squared per-character values behind N, per model x domain x condition x group
-- (the rows of int_groups_counted, without the 'All' rows: a contrast compares models with disjoint characters).
-- Q is what the variance of a fractional share needs (log_share_variance, docs/CONTRASTS.md): for race and
-- race x gender rows the sum of p_r(first name)^2 over the matched characters (of the gender); for gender rows
-- the values are 0/1, so Q = N. Read from the characters once more (int_character_cells_summed sums weights,
-- not their squares).

with characters as (

    select
        model,
        domain,
        condition,
        gender,
        name_matched,
        {%- for race in measure_race_codes() %}
            {{ race_weight_column(race) }}{% if not loop.last %},{% endif %}
        {%- endfor %}
    from {{ ref('int_characters_joined') }}

),

group_counts as (

    select * from {{ ref('int_groups_counted') }}
    where model <> '{{ var("all_models_label") }}'

),

races as (
    {{ codes_relation(measure_race_codes(), 'race') }}
),

square_cells as (

    select
        model,
        domain,
        condition,
        gender,
        {%- for race in measure_race_codes() %}
            cast(sum(case
                when name_matched
                    then coalesce({{ race_weight_column(race) }}, 0) * coalesce({{ race_weight_column(race) }}, 0)
                else 0
            end) as double) as square_sum_{{ race }}{% if not loop.last %},{% endif %}
        {%- endfor %}
    from characters
    group by model, domain, condition, gender

),

square_cells_by_race as (

    select
        square_cells.model,
        square_cells.domain,
        square_cells.condition,
        square_cells.gender,
        races.race,
        case races.race
            {%- for race in measure_race_codes() %}
                when '{{ race }}' then square_cells.square_sum_{{ race }}
            {%- endfor %}
        end as race_square_sum
    from square_cells
    cross join races

),

race_squares as (

    select
        model,
        domain,
        condition,
        race,
        cast(null as string) as gender,
        cast(sum(race_square_sum) as double) as sum_of_squares
    from square_cells_by_race
    group by model, domain, condition, race

    union all

    select
        model,
        domain,
        condition,
        race,
        gender,
        cast(sum(race_square_sum) as double) as sum_of_squares
    from square_cells_by_race
    where gender in {{ sql_in_list(measure_gender_codes()) }}
    group by model, domain, condition, race, gender

)

select
    group_counts.model,
    group_counts.domain,
    group_counts.condition,
    group_counts.race,
    group_counts.gender,
    cast(group_counts.numerator as double) as numerator,
    cast(group_counts.denominator as bigint) as denominator,
    cast(case
        when group_counts.race is null then group_counts.numerator
        else coalesce(race_squares.sum_of_squares, 0)
    end as double) as sum_of_squares
from group_counts
left join race_squares
    on group_counts.race is not null
    and group_counts.model = race_squares.model
    and group_counts.domain = race_squares.domain
    and group_counts.condition = race_squares.condition
    and group_counts.race = race_squares.race
    and group_counts.gender is not distinct from race_squares.gender
