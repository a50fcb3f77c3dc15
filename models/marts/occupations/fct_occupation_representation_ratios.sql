-- Labor occupations against their real workforce (docs/METHOD.md §6–7 with p* = the occupation's workforce share,
-- BLS CPS table 11): observed share of each compared group among the characters who hold the occupation,
-- the workforce share, R = p / p*, Wilson share interval and its ratio-scale image, Altman–Bland p-value, and
-- Benjamini–Hochberg q-values — the macros of macros/stats/, as in fct_representation_ratios.
-- BH family = every row of this mart for one model (occupations, conditions and groups together) that has a
-- p-value; rows without a workforce baseline (professional athlete: BLS publishes no percentages) have none.
-- The female rows also get the share corrected from hand labels (int_occupation_shares_corrected, docs/METHOD.md §9,
-- docs/CORRECTION.md) and its ratio corrected_share / p*; null where hand labels do not allow it, and on race rows.

with group_counts as (

    select * from {{ ref('int_occupation_groups_counted') }}

),

workforce as (

    select * from {{ ref('int_workforce_shares_unpivoted') }}

),

corrected as (

    select * from {{ ref('int_occupation_shares_corrected') }}

),

compared as (

    select
        group_counts.model,
        group_counts.occupation,
        group_counts.condition,
        group_counts.race,
        group_counts.gender,
        group_counts.characters,
        group_counts.nonbinary_characters,
        group_counts.numerator,
        group_counts.denominator,
        workforce.workforce_share,
        workforce.bls_title,
        workforce.bls_total_employed_thousands,
        workforce.baseline_source,
        workforce.baseline_vintage,
        workforce.comparison_note,
        corrected.hand_labeled_n,
        corrected.corrected_share,
        corrected.corrected_share_ci_lower,
        corrected.corrected_share_ci_upper,
        corrected.rectifier_source as correction_source
    from group_counts
    -- inner: only the groups seeds/occupation_baseline_groups.csv marks as validly compared have a row
    inner join workforce
        on group_counts.occupation = workforce.occupation
        and workforce.race is not distinct from group_counts.race
        and workforce.gender is not distinct from group_counts.gender
    -- gender rows only: race shares are not corrected (docs/CORRECTION.md, "What is not corrected")
    left join corrected
        on group_counts.race is null
        and group_counts.model = corrected.model
        and group_counts.occupation = corrected.occupation
        and group_counts.condition = corrected.condition
        and group_counts.gender = corrected.gender

),

with_shares as (

    select
        *,
        {{ share_with_interval('numerator', 'denominator') }}
    from compared

),

with_p_values as (

    select
        *,
        {{ representation_ratio_columns('observed_share', 'workforce_share', 'share_ci_lower', 'share_ci_upper') }}
    from with_shares

),

with_q_values as (

    {{ bh_q_values('with_p_values', 'p_value', ['model']) }}

)

select
    cast(model as string) as model,
    cast(occupation as string) as occupation,
    cast(condition as string) as condition,
    cast(race as string) as race,
    cast(gender as string) as gender,
    cast(characters as bigint) as characters,
    cast(nonbinary_characters as bigint) as nonbinary_characters,
    cast(numerator as double) as numerator,
    cast(denominator as bigint) as denominator,
    cast(observed_share as double) as observed_share,
    cast(workforce_share as double) as workforce_share,
    cast(representation_ratio as double) as representation_ratio,
    cast(ci_lower as double) as ci_lower,
    cast(ci_upper as double) as ci_upper,
    cast(share_ci_lower as double) as share_ci_lower,
    cast(share_ci_upper as double) as share_ci_upper,
    cast(p_value as double) as p_value,
    cast(q_value as double) as q_value,
    cast(bls_title as string) as bls_title,
    cast(bls_total_employed_thousands as bigint) as bls_total_employed_thousands,
    cast(baseline_source as string) as baseline_source,
    cast(baseline_vintage as string) as baseline_vintage,
    cast(comparison_note as string) as comparison_note,
    {{ corrected_ratio_columns('hand_labeled_n', 'corrected_share', 'corrected_share_ci_lower',
                               'corrected_share_ci_upper', 'workforce_share', 'correction_source') }}
from with_q_values
