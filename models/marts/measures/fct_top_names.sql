-- Stereotypes (METHOD.md §6): per race and gender, the most common first names among names strongly
-- associated with the race (p_r > var top_name_share_threshold), over all models, with their counts per
-- domain and condition. rank_in_group ranks names by their total characters within race x gender (rank():
-- ties share a rank, ties at the cut are all kept); names with rank <= var top_names_per_group are listed.

with characters as (

    select
        domain, condition, gender, first_name,
        {%- for race in measure_race_codes() %}
            coalesce({{ race_weight_column(race) }}, 0) as {{ race_weight_column(race) }}{% if not loop.last %}
            ,
            {% endif %}
    {%- endfor %}
    from {{ ref('fct_characters') }}
    where name_matched and first_name is not null
        and {{ in_selected_versions('story_id') }}  -- the model versions the measures use (docs/RUNS.md)

),

name_cells as (

    select
        domain, condition, gender, first_name,
        {%- for race in measure_race_codes() %}
            max({{ race_weight_column(race) }}) as {{ race_weight_column(race) }},
        {%- endfor %}
        count(*) as characters
    from characters
    group by domain, condition, gender, first_name

),

races as (
    {{ codes_relation(measure_race_codes(), 'race') }}
),

name_cells_by_race as (

    select
        races.race,
        name_cells.gender,
        name_cells.first_name,
        name_cells.domain,
        name_cells.condition,
        case races.race
            {%- for race in measure_race_codes() %}
                when '{{ race }}' then name_cells.{{ race_weight_column(race) }}
            {%- endfor %}
        end as name_share,
        name_cells.characters
    from name_cells
    cross join races

),

strong_names as (

    select * from name_cells_by_race
    where name_share > {{ var('top_name_share_threshold') }}

),

name_totals as (

    select race, gender, first_name, sum(characters) as total_characters
    from strong_names
    group by race, gender, first_name

),

ranked_names as (

    select
        race,
        gender,
        first_name,
        rank() over (partition by race, gender order by total_characters desc) as rank_in_group
    from name_totals

)

select
    strong_names.race,
    strong_names.gender,
    strong_names.first_name,
    strong_names.domain,
    strong_names.condition,
    cast(strong_names.name_share as double) as name_share,
    cast(strong_names.characters as bigint) as characters,
    cast(ranked_names.rank_in_group as bigint) as rank_in_group
from strong_names
inner join ranked_names
    on
        strong_names.race = ranked_names.race
        and ranked_names.gender is not distinct from strong_names.gender
        and strong_names.first_name = ranked_names.first_name
where ranked_names.rank_in_group <= {{ var('top_names_per_group') }}
