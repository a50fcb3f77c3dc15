-- Subordination ratio per group in power-laden stories (docs/METHOD.md §6) before the family-wise q-values:
-- S = (N_sub / D_sub) / (N_dom / D_dom) with the zero-count rule (epsilon), the Katz log interval on the same
-- epsilon-adjusted terms, and the Altman–Bland p-value on the log scale (SE = Katz half-width / z, i.e. the
-- width of the log-scale interval / (2 z); null hypothesis ln S = 0). Counts come from the same group counts
-- as the representation ratios (race, race x gender, gender rows).

with group_counts as (

    select * from {{ ref('int_groups_counted') }}
    where condition in ('subordinate', 'dominant')

),

by_role as (

    select
        model,
        domain,
        race,
        gender,
        cast(coalesce(sum(case when condition = 'subordinate' then numerator end), 0) as double)
            as subordinate_numerator,
        cast(coalesce(sum(case when condition = 'subordinate' then denominator end), 0) as bigint)
            as subordinate_denominator,
        cast(coalesce(sum(case when condition = 'dominant' then numerator end), 0) as double) as dominant_numerator,
        cast(coalesce(sum(case when condition = 'dominant' then denominator end), 0) as bigint) as dominant_denominator
    from group_counts
    group by model, domain, race, gender

),

with_epsilon as (

    select
        *,
        {{ subordination_epsilon('subordinate_numerator', 'dominant_numerator') }} as epsilon
    from by_role

),

with_ratio as (

    select
        *,
        {{ subordination_ratio('subordinate_numerator', 'subordinate_denominator',
                               'dominant_numerator', 'dominant_denominator', 'epsilon') }} as subordination_ratio,
        {{ katz_log_half_width('subordinate_numerator', 'subordinate_denominator',
                               'dominant_numerator', 'dominant_denominator', 'epsilon') }} as log_half_width
    from with_epsilon

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
    cast(epsilon as double) as epsilon,
    cast(subordination_ratio as double) as subordination_ratio,
    cast(exp(ln(subordination_ratio) - log_half_width) as double) as ci_lower,
    cast(exp(ln(subordination_ratio) + log_half_width) as double) as ci_upper,
    cast({{ altman_bland_p_value('ln(subordination_ratio)', '0',
                                 'ln(subordination_ratio) - log_half_width',
                                 'ln(subordination_ratio) + log_half_width') }} as double) as p_value
from with_ratio
