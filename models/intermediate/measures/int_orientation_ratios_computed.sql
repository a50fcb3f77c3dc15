-- Sexual orientation representation ratios (docs/METHOD.md §6–7) before the q-values: observed share of each
-- couple type among the typed couples, expected share from the 'couple' rows of seeds/baselines.csv (var
-- baseline_set), ratio, Wilson bounds (ratio scale: share bounds / p*) and the Altman–Bland p-value.
-- Each couple type also gets the share corrected from hand labels (int_couple_shares_corrected,
-- docs/METHOD.md §9, docs/CORRECTION.md) and its ratio corrected_share / p*; null where hand labels do not allow it.

with couple_counts as (

    select * from {{ ref('int_couples_counted') }}

),

baselines as (

    select group_code, cast(expected_pct as double) / 100.0 as expected_share
    from {{ ref('baselines') }}
    where baseline_set = '{{ var("baseline_set") }}' and dimension = 'couple'

),

corrected as (

    select * from {{ ref('int_couple_shares_corrected') }}

),

with_shares as (

    select
        couple_counts.model,
        couple_counts.couple_type,
        couple_counts.numerator,
        couple_counts.denominator,
        baselines.expected_share,
        {{ share_with_interval('couple_counts.numerator', 'couple_counts.denominator') }},
        corrected.hand_labeled_n,
        corrected.corrected_share,
        corrected.corrected_share_ci_lower,
        corrected.corrected_share_ci_upper,
        corrected.rectifier_source as correction_source
    from couple_counts
    left join baselines on couple_counts.couple_type = baselines.group_code
    left join corrected
        on couple_counts.model = corrected.model and couple_counts.couple_type = corrected.couple_type

)

select
    model,
    couple_type,
    cast(numerator as double) as numerator,
    cast(denominator as bigint) as denominator,
    cast(observed_share as double) as observed_share,
    cast(expected_share as double) as expected_share,
    {{ representation_ratio_columns('observed_share', 'expected_share', 'share_ci_lower', 'share_ci_upper') }},
    cast('{{ var("baseline_set") }}' as string) as baseline_set,
    {{ corrected_ratio_columns('hand_labeled_n', 'corrected_share', 'corrected_share_ci_lower',
                               'corrected_share_ci_upper', 'expected_share', 'correction_source') }}
from with_shares
