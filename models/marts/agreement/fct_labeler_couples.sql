-- Couple types of romantic Love stories (docs/METHOD.md §6, sexual orientation) by hand labels and by the inferred
-- genders, over the same stories: those whose two characters both have a hand label (int_couples_typed). A side's
-- couple counts when both its genders are female, male or nonbinary (as in int_couples_counted); its share is over
-- the couples that count on that side. Per model and 'All', one row per couple type (0 for absent types).
with

typed as (
    select model, hand_couple_type, inferred_couple_type
    from {{ ref('int_couples_typed') }}
    where hand_labeled_characters = 2
),

couple_types as (
    {{ codes_relation(couple_type_codes(), 'couple_type') }}
),

models as (
    select distinct model from typed
    union all
    select '{{ var("all_models_label") }}' as model
),

counted as (
    select
        models.model,
        couple_types.couple_type,
        count(*) filter (where typed.hand_couple_type = couple_types.couple_type) as hand_couples,
        count(*) filter (where typed.inferred_couple_type = couple_types.couple_type) as inferred_couples
    from models
    cross join couple_types
    left join typed
        on models.model = typed.model or models.model = '{{ var("all_models_label") }}'
    group by models.model, couple_types.couple_type
),

totals as (
    select
        model,
        couple_type,
        hand_couples,
        inferred_couples,
        sum(hand_couples) over (partition by model) as hand_total,
        sum(inferred_couples) over (partition by model) as inferred_total
    from counted
)

select
    cast(model as string) as model,
    cast(couple_type as string) as couple_type,
    cast(hand_couples as bigint) as hand_couples,
    cast(hand_total as bigint) as hand_total,
    cast({{ class_share('hand_couples', 'hand_total') }} as double) as hand_share,
    cast(inferred_couples as bigint) as inferred_couples,
    cast(inferred_total as bigint) as inferred_total,
    cast({{ class_share('inferred_couples', 'inferred_total') }} as double) as inferred_share,
    cast('{{ var("gender_rule") }}' as string) as gender_rule
from totals
