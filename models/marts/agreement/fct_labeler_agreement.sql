-- How the cleaned labels agree with hand labels (the study's Table S8 view), per model, domain and role, with
-- 'All' / 'all' rows aggregating each of them: gender accuracy, per-class precision and recall, exact name match.
with

pairs as (
    select model, domain, role, inferred_gender, hand_gender, gender_agrees, name_agrees
    from {{ ref('int_hand_labels_paired') }}
),

observations as (
    select model, domain, role, 'gender_accuracy' as metric, 'all' as class, gender_agrees as hit
    from pairs
    union all
    select model, domain, role, 'gender_precision' as metric, inferred_gender as class, gender_agrees as hit
    from pairs
    union all
    select model, domain, role, 'gender_recall' as metric, hand_gender as class, gender_agrees as hit
    from pairs
    union all
    select model, domain, role, 'name_exact_match' as metric, 'all' as class, name_agrees as hit
    from pairs
),

aggregated as (
    select
        case when grouping(model) = 1 then '{{ var("all_models_label") }}' else model end as model,
        case when grouping(domain) = 1 then 'all' else domain end as domain,
        case when grouping(role) = 1 then 'all' else role end as role,
        metric,
        class,
        count(*) as n,
        avg(case when hit then cast(1 as double) else cast(0 as double) end) as value
    from observations
    group by metric, class, cube(model, domain, role)
)

select
    cast(model as string) as model,
    cast(domain as string) as domain,
    cast(role as string) as role,
    cast(metric as string) as metric,
    cast(class as string) as class,
    cast(n as bigint) as n,
    cast(value as double) as value
from aggregated
