-- Gender shares corrected from hand labels by prediction-powered inference (METHOD.md §9, docs/CORRECTION.md).
-- Unit: the character. Cell: model x domain x condition (and the same over every model, var all_models_label),
-- as in int_groups_counted. For gender g the share is the ratio of two means over the cell's characters:
--   a: 1{gender = g}                            b: 1{gender in female, male, nonbinary}
-- f from the inferred gender, y from the hand gender. The rectifier comes from the cell's own hand labels when
-- it has var ppi_cell_min_hand_labeled of them, else from the cell summed over models (ppi_cell_or_pool_columns).
-- No row where no character of the cell's domain x condition has a hand label; null estimates below
-- var ppi_min_hand_labeled.
with

units as (
    select model, domain, condition, inferred_gender, hand_gender, is_hand_labeled
    from {{ ref('int_characters_hand_paired') }}
),

genders as (
    {{ codes_relation(measure_gender_codes(), 'gender') }}
),

indicators as (
    select
        units.model,
        units.domain,
        units.condition,
        genders.gender,
        units.is_hand_labeled,
        case when units.inferred_gender = genders.gender then 1.0 else 0.0 end as f_a,
        case when units.inferred_gender in {{ sql_in_list(measure_gender_codes()) }} then 1.0 else 0.0 end as f_b,
        case when units.hand_gender = genders.gender then 1.0 else 0.0 end as y_a,
        case when units.hand_gender in {{ sql_in_list(measure_gender_codes()) }} then 1.0 else 0.0 end as y_b
    from units
    cross join genders
),

per_model as (
    select
        model, domain, condition, gender,
        {{ ppi_ratio_sums('f_a', 'f_b', 'y_a', 'y_b', 'is_hand_labeled') }}
    from indicators
    group by model, domain, condition, gender
),

all_models as (
    select
        cast('{{ var("all_models_label") }}' as string) as model, domain, condition, gender,
        {{ ppi_ratio_sums('f_a', 'f_b', 'y_a', 'y_b', 'is_hand_labeled') }}
    from indicators
    group by domain, condition, gender
),

cells as (
    select * from per_model
    union all
    select * from all_models
),

chosen as (
    select
        cells.model,
        cells.domain,
        cells.condition,
        cells.gender,
        {{ ppi_cell_or_pool_columns('cells', 'pools') }}
    from cells
    left join all_models as pools
        on cells.domain = pools.domain
        and cells.condition = pools.condition
        and cells.gender = pools.gender
    where pools.labeled_n > 0
),

estimates as (
    {{ ppi_ratio_select('chosen', ['model', 'domain', 'condition', 'gender', 'rectifier_source']) }}
)

select
    model,
    domain,
    condition,
    gender,
    rectifier_source,
    cast(lam as double) as lam,
    cast(unlabeled_n as bigint) as unlabeled_n,
    cast(labeled_n as bigint) as hand_labeled_n,
    {%- for column in ['corrected_share', 'corrected_share_ci_lower', 'corrected_share_ci_upper'] %}
    cast(case when labeled_n >= {{ var('ppi_min_hand_labeled') }} then {{ column }} end as double) as {{ column }},
    {%- endfor %}
    cast(case when labeled_n >= {{ var('ppi_min_hand_labeled') }} then corrected_share_variance end as double)
        as corrected_share_variance
from estimates
