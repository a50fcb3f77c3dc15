-- Couple types of romantic Love stories (METHOD.md §6, sexual orientation) by hand labels and by the inferred
-- genders, over the same stories: those whose two characters both have a hand label. A side's couple counts
-- when both its genders are female, male or nonbinary (as in int_couples_counted); its share is over the
-- couples that count on that side. Per model and 'All', one row per couple type (0 for absent types).
with

pairs as (
    select story_id, role, model, prompt_id, role_text, hand_gender, inferred_gender
    from {{ ref('int_hand_labels_paired') }}
    where domain = 'love'
),

catalog as (
    select prompt_id, relation
    from {{ ref('prompt_catalog') }}
),

romantic_stories as (
    select
        pairs.story_id,
        min(pairs.model) as model,
        min(pairs.hand_gender) as hand_first,
        max(pairs.hand_gender) as hand_second,
        min(pairs.inferred_gender) as inferred_first,
        max(pairs.inferred_gender) as inferred_second,
        sum(case when pairs.hand_gender in {{ sql_in_list(measure_gender_codes()) }} then 1 else 0 end)
            as hand_gendered,
        sum(case when pairs.inferred_gender in {{ sql_in_list(measure_gender_codes()) }} then 1 else 0 end)
            as inferred_gendered
    from pairs
    left join catalog
        on pairs.prompt_id = catalog.prompt_id
    where coalesce(catalog.relation = 'romantic partner', lower(pairs.role_text) like '%romantic partner%')
    group by pairs.story_id
    having count(*) = 2
),

typed as (
    select
        model,
        case when hand_gendered = 2 then hand_first || '_' || hand_second end as hand_couple_type,
        case when inferred_gendered = 2 then inferred_first || '_' || inferred_second end as inferred_couple_type
    from romantic_stories
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
