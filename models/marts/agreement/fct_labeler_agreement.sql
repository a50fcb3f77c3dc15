-- How the cleaned labels agree with hand labels (the study's Table S8 view), per model, domain and role, with
-- 'All' / 'all' rows aggregating each of them: gender accuracy, per-class precision and recall, exact name match.
-- Per labeler version (int_story_labelers_assigned; docs/RUNS.md): two versions of the labeler are never pooled.
with

labelers as (
    select story_id, labeler_version
    from {{ ref('int_story_labelers_assigned') }}
),

pairs as (
    select
        paired.model, paired.domain, paired.role, paired.inferred_gender, paired.hand_gender, paired.gender_agrees,
        paired.name_agrees, coalesce(labelers.labeler_version, 'unknown') as labeler_version
    from {{ ref('int_hand_labels_paired') }} as paired
    left join labelers
        on paired.story_id = labelers.story_id
),

observations as (
    select model, domain, role, 'gender_accuracy' as metric, 'all' as class, gender_agrees as hit, labeler_version
    from pairs
    union all
    select
        model, domain, role, 'gender_precision' as metric, inferred_gender as class, gender_agrees as hit,
        labeler_version
    from pairs
    union all
    select model, domain, role, 'gender_recall' as metric, hand_gender as class, gender_agrees as hit, labeler_version
    from pairs
    union all
    select model, domain, role, 'name_exact_match' as metric, 'all' as class, name_agrees as hit, labeler_version
    from pairs
),

aggregated as (
    select
        case when grouping(model) = 1 then '{{ var("all_models_label") }}' else model end as model,
        case when grouping(domain) = 1 then 'all' else domain end as domain,
        case when grouping(role) = 1 then 'all' else role end as role,
        metric,
        class,
        labeler_version,
        count(*) as n,
        avg(case when hit then cast(1 as double) else cast(0 as double) end) as value
    from observations
    group by metric, class, labeler_version, cube(model, domain, role)
)

select
    cast(model as string) as model,
    cast(domain as string) as domain,
    cast(role as string) as role,
    cast(metric as string) as metric,
    cast(class as string) as class,
    cast(n as bigint) as n,
    cast(value as double) as value,
    cast(labeler_version as string) as labeler_version
from aggregated
