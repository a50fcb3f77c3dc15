-- Subordination (docs/METHOD.md §6): how much more likely a group is among subordinated than among dominant
-- characters of power-laden stories, with the epsilon zero-count rule, Katz log intervals, Altman–Bland
-- p-values and Benjamini–Hochberg q-values. BH family = every row of this mart for one model whose race is
-- reported (race, race x gender and gender rows of all domains together); unreported races (multiracial)
-- keep their p-value and get a null q-value.

with subordination as (

    select * from {{ ref('int_subordination_ratios_computed') }}

),

with_q_values as (

    {{ reported_race_q_values('subordination', 'p_value', ['model']) }}

)

select
    model,
    domain,
    race,
    gender,
    subordinate_numerator,
    subordinate_denominator,
    dominant_numerator,
    dominant_denominator,
    epsilon,
    subordination_ratio,
    ci_lower,
    ci_upper,
    p_value,
    cast(q_value as double) as q_value
from with_q_values
