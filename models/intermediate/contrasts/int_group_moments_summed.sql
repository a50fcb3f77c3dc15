-- N, D and Q = the sum of squared per-character values behind N, per model x domain x condition x group: the rows
-- of int_groups_counted (which sums Q beside N, from int_character_cells_summed) without the 'All' rows, since a
-- contrast compares models with disjoint characters. Q is what the variance of a fractional share needs
-- (log_share_variance, docs/CONTRASTS.md): for race and race x gender rows the sum of the squared race weights;
-- for gender rows the values are 0/1, so Q = N.

with group_counts as (

    select * from {{ ref('int_groups_counted') }}
    where model <> '{{ var("all_models_label") }}'

)

select
    model,
    domain,
    condition,
    race,
    gender,
    cast(numerator as double) as numerator,
    cast(denominator as bigint) as denominator,
    cast(sum_of_squares as double) as sum_of_squares
from group_counts
