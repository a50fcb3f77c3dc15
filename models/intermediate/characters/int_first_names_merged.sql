-- docs/METHOD.md §5: one row per normalised first name with p_r(x) for every group, as fractions. Census-style groups
-- come from the census table, MENA and NH/PI from the Wikipedia table. A custom row in mode 'replace' overrides a
-- table's values for that name (the table is the one its non-null columns belong to); 'add' only fills names the
-- table lacks. Names that fold to the same key are merged, weighted by their counts. The census table's own
-- values (before any custom row) are kept beside, as census_table_weight_*: the "census-only" lexicon of
-- fct_race_sensitivity (no Wikipedia MENA/NH-PI, no custom rows).
with

census as (
    select first_name_key, n_total, share_white, share_black, share_latine, share_asian, share_aian, share_multiracial
    from {{ ref('stg_census_first_names') }}
    where first_name_key is not null
),

wikipedia as (
    select first_name_key, n_bearers, share_mena, share_nhpi
    from {{ ref('stg_wikipedia_first_names') }}
    where first_name_key is not null
),

custom as (
    select
        first_name_key, mode, share_white, share_black, share_latine, share_asian, share_aian, share_multiracial,
        share_mena, share_nhpi,
        coalesce(share_white, share_black, share_latine, share_asian, share_aian, share_multiracial) is not null
            as has_census_values,
        coalesce(share_mena, share_nhpi) is not null as has_wikipedia_values
    from {{ ref('stg_custom_first_names') }}
    where first_name_key is not null and mode in ('replace', 'add')
),

census_by_key as (
    select
        first_name_key,
    {% for group_code in ['white', 'black', 'latine', 'asian', 'aian', 'multiracial'] -%}
        sum(coalesce(share_{{ group_code }}, 0) * coalesce(n_total, 1)) / sum(coalesce(n_total, 1))
            as share_{{ group_code }}{{ ',' if not loop.last }}

{% endfor %}
    from census
    group by first_name_key
),

custom_census as (
    select
        first_name_key,
        min(mode) as mode,  -- 'add' < 'replace': a name given both ways is treated as added
    {% for group_code in ['white', 'black', 'latine', 'asian', 'aian', 'multiracial'] -%}
        avg(coalesce(share_{{ group_code }}, 0)) as share_{{ group_code }}{{ ',' if not loop.last }}

    {% endfor %}
    from custom
    where has_census_values
    group by first_name_key
),

census_final as (
    select
        coalesce(custom_census.first_name_key, census_by_key.first_name_key) as first_name_key,
        census_by_key.first_name_key is not null as in_census_table,
    {% for group_code in ['white', 'black', 'latine', 'asian', 'aian', 'multiracial'] -%}
        census_by_key.share_{{ group_code }} as table_share_{{ group_code }},
    {% endfor %}
    {% for group_code in ['white', 'black', 'latine', 'asian', 'aian', 'multiracial'] -%}
        case
            when custom_census.mode = 'replace' or census_by_key.first_name_key is null
                then custom_census.share_{{ group_code }}
            else census_by_key.share_{{ group_code }}
        end as share_{{ group_code }}{{ ',' if not loop.last }}

    {% endfor %}
    from census_by_key
    full outer join custom_census
        on census_by_key.first_name_key = custom_census.first_name_key
),

wikipedia_by_key as (
    select
        first_name_key,
        sum(coalesce(share_mena, 0) * coalesce(n_bearers, 1)) / sum(coalesce(n_bearers, 1)) as share_mena,
        sum(coalesce(share_nhpi, 0) * coalesce(n_bearers, 1)) / sum(coalesce(n_bearers, 1)) as share_nhpi
    from wikipedia
    group by first_name_key
),

custom_wikipedia as (
    select
        first_name_key,
        min(mode) as mode,
        avg(coalesce(share_mena, 0)) as share_mena,
        avg(coalesce(share_nhpi, 0)) as share_nhpi
    from custom
    where has_wikipedia_values
    group by first_name_key
),

wikipedia_final as (
    select
        coalesce(custom_wikipedia.first_name_key, wikipedia_by_key.first_name_key) as first_name_key,
        case
            when custom_wikipedia.mode = 'replace' or wikipedia_by_key.first_name_key is null
                then custom_wikipedia.share_mena
            else wikipedia_by_key.share_mena
        end as share_mena,
        case
            when custom_wikipedia.mode = 'replace' or wikipedia_by_key.first_name_key is null
                then custom_wikipedia.share_nhpi
            else wikipedia_by_key.share_nhpi
        end as share_nhpi
    from wikipedia_by_key
    full outer join custom_wikipedia
        on wikipedia_by_key.first_name_key = custom_wikipedia.first_name_key
)

select
    coalesce(census_final.first_name_key, wikipedia_final.first_name_key) as first_name_key,
    census_final.first_name_key is not null as in_census,
    wikipedia_final.first_name_key is not null as in_wikipedia,
    cast(coalesce(census_final.share_aian, 0) as double) as weight_aian,
    cast(coalesce(census_final.share_asian, 0) as double) as weight_asian,
    cast(coalesce(census_final.share_black, 0) as double) as weight_black,
    cast(coalesce(census_final.share_latine, 0) as double) as weight_latine,
    cast(coalesce(wikipedia_final.share_mena, 0) as double) as weight_mena,
    cast(coalesce(wikipedia_final.share_nhpi, 0) as double) as weight_nhpi,
    cast(coalesce(census_final.share_white, 0) as double) as weight_white,
    cast(coalesce(census_final.share_multiracial, 0) as double) as weight_multiracial,
    coalesce(census_final.in_census_table, false) as in_census_table,
{%- for group_code in ['aian', 'asian', 'black', 'latine', 'white', 'multiracial'] %}
    cast(coalesce(census_final.table_share_{{ group_code }}, 0) as double)
        as census_table_weight_{{ group_code }}{{ ',' if not loop.last }}
{%- endfor %}
from census_final
full outer join wikipedia_final
    on census_final.first_name_key = wikipedia_final.first_name_key
