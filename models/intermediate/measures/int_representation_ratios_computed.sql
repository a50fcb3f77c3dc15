-- Representation ratio per group (docs/METHOD.md §6–7) before the family-wise q-values: observed share p = N / D,
-- expected share p* from seeds/baselines.csv (var baseline_set; percent -> fraction; race x gender:
-- p*_race * p*_gender), R = p / p*, Wilson share bounds and their ratio-scale images (bounds / p*), and the
-- Altman–Bland p-value of p against p* on the share scale. Null shares where D = 0, null ratios where no p*.
-- Gender rows (race null) also get the share corrected from hand labels (int_gender_shares_corrected,
-- docs/METHOD.md §9, docs/CORRECTION.md) and its ratio corrected_share / p*; null where hand labels do not allow it.

with group_counts as (

    select * from {{ ref('int_groups_counted') }}

),

baselines as (

    select
        dimension,
        group_code,
        cast(expected_pct as double) / 100.0 as expected_share
    from {{ ref('baselines') }}
    where baseline_set = '{{ var("baseline_set") }}'

),

corrected as (

    select * from {{ ref('int_gender_shares_corrected') }}

),

with_expected as (

    select
        group_counts.model,
        group_counts.domain,
        group_counts.condition,
        group_counts.race,
        group_counts.gender,
        group_counts.numerator,
        group_counts.denominator,
        case
            when group_counts.race is not null and group_counts.gender is not null
                then race_baseline.expected_share * gender_baseline.expected_share
            when group_counts.race is not null then race_baseline.expected_share
            else gender_baseline.expected_share
        end as expected_share
    from group_counts
    left join baselines as race_baseline
        on race_baseline.dimension = 'race' and group_counts.race = race_baseline.group_code
    left join baselines as gender_baseline
        on gender_baseline.dimension = 'gender' and group_counts.gender = gender_baseline.group_code

),

with_shares as (

    select
        *,
        {{ share_with_interval('numerator', 'denominator') }}
    from with_expected

),

with_corrected as (

    select
        with_shares.*,
        corrected.hand_labeled_n,
        corrected.corrected_share,
        corrected.corrected_share_ci_lower,
        corrected.corrected_share_ci_upper,
        corrected.rectifier_source as correction_source
    from with_shares
    left join corrected
        on with_shares.race is null
        and with_shares.model = corrected.model
        and with_shares.domain = corrected.domain
        and with_shares.condition = corrected.condition
        and with_shares.gender = corrected.gender

)

select
    model,
    domain,
    condition,
    race,
    gender,
    cast(numerator as double) as numerator,
    cast(denominator as bigint) as denominator,
    cast(observed_share as double) as observed_share,
    cast(expected_share as double) as expected_share,
    {{ representation_ratio_columns('observed_share', 'expected_share', 'share_ci_lower', 'share_ci_upper') }},
    cast(share_ci_lower as double) as share_ci_lower,
    cast(share_ci_upper as double) as share_ci_upper,
    cast('{{ var("baseline_set") }}' as string) as baseline_set,
    {{ corrected_ratio_columns('hand_labeled_n', 'corrected_share', 'corrected_share_ci_lower',
                               'corrected_share_ci_upper', 'expected_share', 'correction_source') }}
from with_corrected
