-- Omission (docs/METHOD.md §6): representation ratios with Wilson intervals, Altman–Bland p-values and
-- Benjamini–Hochberg q-values. BH family = every row of this mart for one model (and the one baseline_set of
-- the build) whose race is reported: gender rows, race rows and race x gender rows of all domains and
-- conditions together; rows of unreported races (multiracial) keep their p-value and get a null q-value.

with representation as (

    select * from {{ ref('int_representation_ratios_computed') }}

),

with_q_values as (

    {{ reported_race_q_values('representation', 'p_value', ['model', 'baseline_set']) }}

)

select
    model,
    domain,
    condition,
    race,
    gender,
    numerator,
    denominator,
    observed_share,
    expected_share,
    representation_ratio,
    ci_lower,
    ci_upper,
    share_ci_lower,
    share_ci_upper,
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
