-- The workforce share p* of each compared group in each Labor occupation (docs/METHOD.md §7: p* can be
-- the occupation's workforce): seeds/occupation_workforce_baselines.csv (generated from BLS CPS table 11 by
-- `lfh occupation-baselines`) unpivoted to one row per occupation and group, kept only for the groups that
-- seeds/occupation_baseline_groups.csv marks as validly compared (its reason column says why each is or is not).
-- Percent -> fraction. A BLS dash (no percentage published) stays null: no baseline is made up.

with baselines as (

    select
        occupation,
        bls_title,
        total_employed_thousands,
        women_pct,
        white_pct,
        black_pct,
        asian_pct,
        hispanic_pct,
        source,
        vintage
    from {{ ref('occupation_workforce_baselines') }}

),

compared_groups as (

    select dimension, group_code, bls_column, reason
    from {{ ref('occupation_baseline_groups') }}
    where compared

),

published_columns as (

    select occupation, 'women_pct' as bls_column, women_pct as bls_pct from baselines
    union all
    select occupation, 'white_pct' as bls_column, white_pct as bls_pct from baselines
    union all
    select occupation, 'black_pct' as bls_column, black_pct as bls_pct from baselines
    union all
    select occupation, 'asian_pct' as bls_column, asian_pct as bls_pct from baselines
    union all
    select occupation, 'hispanic_pct' as bls_column, hispanic_pct as bls_pct from baselines

),

shares as (

    select
        baselines.occupation,
        case when compared_groups.dimension = 'race' then compared_groups.group_code end as race,
        case when compared_groups.dimension = 'gender' then compared_groups.group_code end as gender,
        cast(published_columns.bls_pct as double) / 100.0 as workforce_share,
        baselines.bls_title,
        baselines.total_employed_thousands,
        baselines.source,
        baselines.vintage,
        case
            when published_columns.bls_pct is null
                then 'No workforce baseline: BLS publishes no percentage for this line (under 50,000 employed). '
                    || compared_groups.reason
            else compared_groups.reason
        end as comparison_note
    from baselines
    cross join compared_groups
    inner join published_columns
        on baselines.occupation = published_columns.occupation
        and compared_groups.bls_column = published_columns.bls_column

)

select
    cast(occupation as string) as occupation,
    cast(race as string) as race,
    cast(gender as string) as gender,
    cast(workforce_share as double) as workforce_share,
    cast(bls_title as string) as bls_title,
    cast(total_employed_thousands as bigint) as bls_total_employed_thousands,
    cast(source as string) as baseline_source,
    cast(vintage as string) as baseline_vintage,
    cast(comparison_note as string) as comparison_note
from shares
