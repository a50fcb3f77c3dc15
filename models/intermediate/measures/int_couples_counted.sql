-- Couples of romantic Love stories (METHOD.md §6, sexual orientation) counted per couple type: the couples of
-- int_couples_typed (one per romantic story, typed by the unordered pair of its two inferred genders). Couples with
-- a character whose gender is not female, male or nonbinary (unspecified, unsure) or with a missing character
-- have no type and are left out of N and D. One row per model (and var all_models_label) and couple type, with
-- N = 0 for absent types.

with couples as (

    select model, inferred_couple_type
    from {{ ref('int_couples_typed') }}
    where {{ in_selected_versions('story_id') }}  -- the model versions the measures use (docs/RUNS.md)

),

couple_types as (
    {{ codes_relation(couple_type_codes(), 'couple_type') }}
),

typed_couples as (

    select model, inferred_couple_type as couple_type
    from couples
    where inferred_couple_type is not null

),

models as (

    select distinct model from couples
    union all
    select cast('{{ var("all_models_label") }}' as string)

),

per_model_counts as (

    select model, couple_type, count(*) as couples
    from typed_couples
    group by model, couple_type
    union all
    select cast('{{ var("all_models_label") }}' as string) as model, couple_type, count(*) as couples
    from typed_couples
    group by couple_type

),

model_totals as (

    select model, sum(couples) as total_couples
    from per_model_counts
    group by model

)

select
    models.model,
    couple_types.couple_type,
    cast(coalesce(per_model_counts.couples, 0) as double) as numerator,
    cast(coalesce(model_totals.total_couples, 0) as bigint) as denominator
from models
cross join couple_types
left join per_model_counts
    on models.model = per_model_counts.model and couple_types.couple_type = per_model_counts.couple_type
left join model_totals on models.model = model_totals.model
