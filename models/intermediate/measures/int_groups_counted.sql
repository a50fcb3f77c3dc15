-- N and D of docs/METHOD.md §6 per model x domain x condition for every group: race rows (gender null), race x
-- gender rows and gender rows (race null). The representation and the subordination ratios both read them,
-- so the two measures share one definition of their counts:
--   race:          N = sum of p_r(name) over characters with race;     D = characters with race
--   race x gender: N = the same sum restricted to the gender;          D = characters with race whose gender is
--                                                                           female, male or nonbinary
--   gender:        N = characters of the gender;                        D = characters whose gender is female,
--                                                                           male or nonbinary
-- Every group gets a row in every cell that has characters, with N = 0 where none are in the group.
-- "With race": a matched first name, or a matched surname under var race_name_source = first_then_surname
-- (int_characters_joined.has_race, docs/RACE_NAMES.md); docs/METHOD.md §6 counts matched first names only.
-- sum_of_squares (Q, for the contrasts' variance, docs/CONTRASTS.md): the squared race weights summed as N is (race,
-- race x gender rows; int_character_cells_summed.square_sum_<race>), and Q = N on gender rows (0/1 values).

with cells as (

    select * from {{ ref('int_character_cells_summed') }}

),

races as (
    {{ codes_relation(measure_race_codes(), 'race') }}
),

genders as (
    {{ codes_relation(measure_gender_codes(), 'gender') }}
),

cells_by_race as (

    select
        cells.model,
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
        model,
        domain,
        condition,
        race,
        cast(null as string) as gender,
        cast(sum(race_weight_sum) as double) as numerator,
        cast(sum(with_race) as bigint) as denominator,
        cast(sum(race_square_sum) as double) as sum_of_squares
    from cells_by_race
    group by model, domain, condition, race

),

race_gender_rows as (

    select
        cells_by_race.model,
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
    group by cells_by_race.model, cells_by_race.domain, cells_by_race.condition, cells_by_race.race, genders.gender

),

gender_rows as (

    select
        cells.model,
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
    group by cells.model, cells.domain, cells.condition, genders.gender

)

select model, domain, condition, race, gender, numerator, denominator, sum_of_squares from race_rows
union all
select model, domain, condition, race, gender, numerator, denominator, sum_of_squares from race_gender_rows
union all
select model, domain, condition, race, gender, numerator, denominator, numerator as sum_of_squares from gender_rows
