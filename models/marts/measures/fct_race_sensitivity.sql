-- How much each race's share and representation ratio move with the way race is inferred from names
-- (docs/RACE_NAMES.md): per model (and 'All'), domain, condition and race, the share N / D and the ratio
-- (N / D) / p* under each variant of int_race_variants_counted, and the largest relative change of the share
-- from the variant the build publishes (the merged lexicon with var race_name_source). p* is one constant per
-- race (var baseline_set), so the ratio moves by the same relative change as the share.
{%- set variants = ['first_name', 'first_then_surname', 'census_first_name', 'census_first_then_surname'] %}
{%- set selected = var('race_name_source') %}

with counts as (

    select * from {{ ref('int_race_variants_counted') }}

),

baselines as (

    select group_code, cast(expected_pct as double) / 100.0 as expected_share
    from {{ ref('baselines') }}
    where baseline_set = '{{ var("baseline_set") }}' and dimension = 'race'

),

shares as (

    select
        counts.model,
        counts.domain,
        counts.condition,
        counts.race,
        counts.characters,
        baselines.expected_share,
        {%- for variant in variants %}
        counts.denominator_{{ variant }},
        counts.numerator_{{ variant }} / nullif(cast(counts.denominator_{{ variant }} as double), 0)
            as share_{{ variant }}{{ ',' if not loop.last }}
        {%- endfor %}
    from counts
    left join baselines
        on counts.race = baselines.group_code

),

changes as (

    select
        *,
        {%- for variant in variants %}
        abs(share_{{ variant }} - share_{{ selected }}) / nullif(share_{{ selected }}, 0)
            as change_{{ variant }}{{ ',' if not loop.last }}
        {%- endfor %}
    from shares

),

largest as (

    select
        *,
        greatest(
            {%- for variant in variants %}
            coalesce(change_{{ variant }}, -1.0){{ ',' if not loop.last }}
            {%- endfor %}
        ) as largest_change_or_missing
    from changes

)

select
    cast(model as string) as model,
    cast(domain as string) as domain,
    cast(condition as string) as condition,
    cast(race as string) as race,
    cast(characters as bigint) as characters,
    cast(expected_share as double) as expected_share,
    {%- for variant in variants %}
    cast(denominator_{{ variant }} as bigint) as with_race_{{ variant }},
    cast(share_{{ variant }} as double) as share_{{ variant }},
    cast(share_{{ variant }} / nullif(expected_share, 0) as double) as representation_ratio_{{ variant }},
    {%- endfor %}
    cast('{{ selected }}' as string) as selected_variant,
    cast(case when largest_change_or_missing >= 0 then largest_change_or_missing end as double)
        as largest_relative_change,
    cast(case
        when largest_change_or_missing <= 0 then null
        {%- for variant in variants %}
        when change_{{ variant }} = largest_change_or_missing then '{{ variant }}'
        {%- endfor %}
    end as string) as most_changed_variant
from largest
