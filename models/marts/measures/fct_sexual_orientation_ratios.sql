-- Sexual orientation (docs/METHOD.md §6): how often each couple type appears in romantic Love stories against its
-- population share, with Wilson intervals, Altman–Bland p-values and Benjamini–Hochberg q-values.
-- BH family = the six couple types of one model (and the build's baseline_set).

with orientation as (

    select * from {{ ref('int_orientation_ratios_computed') }}

),

with_q_values as (

    {{ bh_q_values('orientation', 'p_value', ['model', 'baseline_set']) }}

)

select
    model,
    couple_type,
    numerator,
    denominator,
    observed_share,
    expected_share,
    representation_ratio,
    ci_lower,
    ci_upper,
    p_value,
    cast(q_value as double) as q_value,
    baseline_set,
    hand_labeled_n,
    corrected_share,
    corrected_share_ci_lower,
    corrected_share_ci_upper,
    corrected_ratio,
    corrected_ci_lower,
    corrected_ci_upper,
    correction_source
from with_q_values
