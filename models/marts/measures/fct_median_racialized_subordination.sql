-- Median racialized subordination ratio (docs/METHOD.md §6): for each model, gender (female, male), race and
-- domain, the subordination ratio S(t) of the characters whose first name has p_r > t / 100, with the
-- epsilon zero-count rule, over every threshold t (var racialized_threshold_min .. _max) where
-- N_sub(t) + N_dom(t) > 0, summarised by its median (lfh_median: with an even number of thresholds, the mean
-- of the two middle values). thresholds_used counts those t; the median is null when there are none or when
-- a denominator is 0.

with threshold_counts as (

    select * from {{ ref('int_racialized_thresholds_counted') }}

),

ratios_by_threshold as (

    select
        *,
        {{ subordination_ratio('subordinate_numerator', 'subordinate_denominator',
                               'dominant_numerator', 'dominant_denominator',
                               subordination_epsilon('subordinate_numerator', 'dominant_numerator')) }}
            as subordination_ratio
    from threshold_counts

)

select
    model,
    gender,
    race,
    domain,
    cast(
        {{ lfh_median('case when subordinate_numerator + dominant_numerator > 0 then subordination_ratio end') }}
        as double
    ) as median_subordination_ratio,
    cast(sum(case when subordinate_numerator + dominant_numerator > 0 then 1 else 0 end) as integer)
        as thresholds_used,
    cast(max(subordinate_denominator) as bigint) as subordinate_denominator,
    cast(max(dominant_denominator) as bigint) as dominant_denominator
from ratios_by_threshold
group by model, gender, race, domain
