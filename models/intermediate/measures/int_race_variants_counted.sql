-- N and D of the race rows (METHOD.md §6) per model (and var all_models_label) x domain x condition under every
-- race inference variant (docs/RACE_NAMES.md), for fct_race_sensitivity:
--   first_name                 first names only, merged lexicon (census + Wikipedia + custom): the study
--   first_then_surname         a surname where no first name matched, merged lexicon
--   census_first_name          first names only, the census first-name table alone (no MENA / NH-PI source)
--   census_first_then_surname  the census first-name table, then a surname
-- One rule for which name gives race (macro race_source_expression); the variant the build publishes is the
-- merged one var race_name_source names, so its N and D equal int_groups_counted's race rows.
{%- set variants = [
    ('first_name', 'first_name', 'merged'),
    ('first_then_surname', 'first_then_surname', 'merged'),
    ('census_first_name', 'first_name', 'census'),
    ('census_first_then_surname', 'first_then_surname', 'census')] %}
{%- set census_races = ['aian', 'asian', 'black', 'latine', 'white', 'multiracial'] %}

with characters as (

    select model, domain, condition, first_name_key, last_name_key
    from {{ ref('int_characters_joined') }}
    where {{ in_selected_versions('story_id') }}  -- the model versions the measures use (docs/RUNS.md)

),

lexicon as (

    select
        first_name_key,
        in_census_table,
        {%- for race in measure_race_codes() %}
        weight_{{ race }},
        {%- endfor %}
        {%- for race in census_races %}
        census_table_weight_{{ race }}{{ ',' if not loop.last }}
        {%- endfor %}
    from {{ ref('int_first_names_merged') }}

),

surnames as (

    select
        surname_key,
        {%- for race in measure_race_codes() %}
        weight_{{ race }}{{ ',' if not loop.last }}
        {%- endfor %}
    from {{ ref('int_surnames_mapped') }}

),

matched as (

    select
        characters.model,
        characters.domain,
        characters.condition,
        lexicon.first_name_key is not null as merged_matched,
        coalesce(lexicon.in_census_table, false) as census_matched,
        surnames.surname_key is not null as surname_matched,
        {%- for race in measure_race_codes() %}
        lexicon.weight_{{ race }} as merged_weight_{{ race }},
        {% if race in census_races -%}
        lexicon.census_table_weight_{{ race }}
        {%- else -%}
        cast(0.0 as double)
        {%- endif %} as census_weight_{{ race }},
        surnames.weight_{{ race }} as surname_weight_{{ race }}{{ ',' if not loop.last }}
        {%- endfor %}
    from characters
    left join lexicon
        on characters.first_name_key = lexicon.first_name_key
    left join surnames
        on characters.last_name_key = surnames.surname_key

),

sourced as (

    select
        matched.*,
        {%- for variant, name_source, lexicon_kind in variants %}
        {{ race_source_expression(lexicon_kind ~ '_matched', 'surname_matched', name_source) }}
            as source_{{ variant }}{{ ',' if not loop.last }}
        {%- endfor %}
    from matched

),

per_model as (

    select
        model,
        domain,
        condition,
        {%- for variant, name_source, lexicon_kind in variants %}
        cast(sum(case when source_{{ variant }} is not null then 1 else 0 end) as bigint)
            as with_race_{{ variant }},
        {%- for race in measure_race_codes() %}
        cast(sum({{ race_weight_from_source('source_' ~ variant, lexicon_kind ~ '_weight_' ~ race,
                                            'surname_weight_' ~ race) }}) as double)
            as weight_sum_{{ race }}_{{ variant }},
        {%- endfor %}
        {%- endfor %}
        cast(count(*) as bigint) as characters
    from sourced
    group by model, domain, condition

),

cells as (

    select * from per_model
    union all
    select
        cast('{{ var("all_models_label") }}' as string) as model,
        domain,
        condition,
        {%- for variant, name_source, lexicon_kind in variants %}
        cast(sum(with_race_{{ variant }}) as bigint) as with_race_{{ variant }},
        {%- for race in measure_race_codes() %}
        cast(sum(weight_sum_{{ race }}_{{ variant }}) as double) as weight_sum_{{ race }}_{{ variant }},
        {%- endfor %}
        {%- endfor %}
        cast(sum(characters) as bigint) as characters
    from per_model
    group by domain, condition

),

races as (
    {{ codes_relation(measure_race_codes(), 'race') }}
)

select
    cells.model,
    cells.domain,
    cells.condition,
    races.race,
    cells.characters,
    {%- for variant, name_source, lexicon_kind in variants %}
    cells.with_race_{{ variant }} as denominator_{{ variant }},
    case races.race
        {%- for race in measure_race_codes() %}
        when '{{ race }}' then cells.weight_sum_{{ race }}_{{ variant }}
        {%- endfor %}
    end as numerator_{{ variant }}{{ ',' if not loop.last }}
    {%- endfor %}
from cells
cross join races
