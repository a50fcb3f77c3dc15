-- Couple-type shares of romantic Love stories corrected from hand labels by prediction-powered inference
-- (METHOD.md §9, docs/CORRECTION.md). Unit: the couple = one romantic story with its two characters, picked as in
-- int_couples_counted. For couple type t the share is the ratio of two means over the model's couples:
--   a: 1{the pair of genders is t}              b: 1{both genders in female, male, nonbinary}
-- f from the inferred genders, y from the hand genders. A couple counts as hand-labeled only when both of its
-- characters carry a hand label. The rectifier comes from the model's own hand-labeled couples when it has
-- var ppi_cell_min_hand_labeled of them, else from every model's (ppi_cell_or_pool_columns).
with

characters as (
    select story_id, model, prompt_id, role_text, inferred_gender, hand_gender, is_hand_labeled
    from {{ ref('int_characters_hand_paired') }}
    where domain = 'love'
),

catalog as (
    select prompt_id, relation from {{ ref('prompt_catalog') }}
),

romantic_characters as (
    select characters.*
    from characters
    left join catalog on characters.prompt_id = catalog.prompt_id
    where coalesce(catalog.relation = 'romantic partner', lower(characters.role_text) like '%romantic partner%')
),

couples as (
    select
        story_id,
        min(model) as model,
        min(inferred_gender) as inferred_first,
        max(inferred_gender) as inferred_second,
        sum(case when inferred_gender in {{ sql_in_list(measure_gender_codes()) }} then 1 else 0 end) = 2
            as inferred_typed,
        min(hand_gender) as hand_first,
        max(hand_gender) as hand_second,
        sum(case when hand_gender in {{ sql_in_list(measure_gender_codes()) }} then 1 else 0 end) = 2 as hand_typed,
        sum(case when is_hand_labeled then 1 else 0 end) = 2 as is_hand_labeled
    from romantic_characters
    group by story_id
    having count(*) = 2
),

couple_types as (
    {%- set types = [] -%}
    {%- for first in measure_gender_codes() -%}
        {%- for second in measure_gender_codes() -%}
            {%- if first <= second -%}{%- do types.append(first ~ '_' ~ second) -%}{%- endif -%}
        {%- endfor -%}
    {%- endfor %}
    {{ codes_relation(types, 'couple_type') }}
),

indicators as (
    select
        couples.model,
        couple_types.couple_type,
        couples.is_hand_labeled,
        case when couples.inferred_typed and couples.inferred_first || '_' || couples.inferred_second
            = couple_types.couple_type then 1.0 else 0.0 end as f_a,
        case when couples.inferred_typed then 1.0 else 0.0 end as f_b,
        case when couples.hand_typed and couples.hand_first || '_' || couples.hand_second
            = couple_types.couple_type then 1.0 else 0.0 end as y_a,
        case when couples.hand_typed then 1.0 else 0.0 end as y_b
    from couples
    cross join couple_types
),

per_model as (
    select
        model, couple_type,
        {{ ppi_ratio_sums('f_a', 'f_b', 'y_a', 'y_b', 'is_hand_labeled') }}
    from indicators
    group by model, couple_type
),

all_models as (
    select
        cast('{{ var("all_models_label") }}' as string) as model, couple_type,
        {{ ppi_ratio_sums('f_a', 'f_b', 'y_a', 'y_b', 'is_hand_labeled') }}
    from indicators
    group by couple_type
),

cells as (
    select * from per_model
    union all
    select * from all_models
),

chosen as (
    select
        cells.model,
        cells.couple_type,
        {{ ppi_cell_or_pool_columns('cells', 'pools') }}
    from cells
    left join all_models as pools on cells.couple_type = pools.couple_type
    where pools.labeled_n > 0
),

estimates as (
    {{ ppi_ratio_select('chosen', ['model', 'couple_type', 'rectifier_source']) }}
)

select
    model,
    couple_type,
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
