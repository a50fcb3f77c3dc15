-- Per-class precision, recall and F1 of the inferred gender against hand labels (docs/METHOD.md §9), per model,
-- domain and role ('All' / 'all' aggregate), from the confusion matrix fct_labeler_confusion, plus one
-- class 'macro' row: mean precision, recall and F1 over the four reported classes (female, male, nonbinary,
-- unspecified) that occur. 'unsure' is never a hand class, so it is scored only as a wrong prediction.
{%- set scored_classes = ['female', 'male', 'nonbinary', 'unspecified'] %}
with

confusion as (
    select model, domain, role, hand_gender, inferred_gender, characters
    from {{ ref('fct_labeler_confusion') }}
),

classes as (
    {{ codes_relation(scored_classes, 'class') }}
),

counts as (
    select
        confusion.model,
        confusion.domain,
        confusion.role,
        classes.class,
        sum(case when confusion.hand_gender = classes.class and confusion.inferred_gender = classes.class
            then confusion.characters else 0 end) as true_positives,
        sum(case when confusion.inferred_gender = classes.class then confusion.characters else 0 end) as predicted,
        sum(case when confusion.hand_gender = classes.class then confusion.characters else 0 end) as hand_labeled,
        sum(confusion.characters) as characters
    from confusion
    cross join classes
    group by confusion.model, confusion.domain, confusion.role, classes.class
),

per_class as (
    select
        model,
        domain,
        role,
        class,
        true_positives,
        predicted,
        hand_labeled,
        characters,
        {{ class_share('true_positives', 'predicted') }} as class_precision,
        {{ class_share('true_positives', 'hand_labeled') }} as class_recall
    from counts
),

scored as (
    select
        *,
        {{ f1_score('class_precision', 'class_recall') }} as f1
    from per_class
),

macro as (
    select
        model,
        domain,
        role,
        'macro' as class,
        cast(null as bigint) as true_positives,
        cast(null as bigint) as predicted,
        cast(null as bigint) as hand_labeled,
        max(characters) as characters,
        {{ macro_average('class_precision', 'hand_labeled', 'predicted', 'class') }} as class_precision,
        {{ macro_average('class_recall', 'hand_labeled', 'predicted', 'class') }} as class_recall,
        {{ macro_f1('f1', 'hand_labeled', 'predicted', 'class') }} as f1
    from scored
    group by model, domain, role
)

select
    cast(model as string) as model,
    cast(domain as string) as domain,
    cast(role as string) as role,
    cast(class as string) as class,
    cast(characters as bigint) as characters,
    cast(true_positives as bigint) as true_positives,
    cast(predicted as bigint) as predicted,
    cast(hand_labeled as bigint) as hand_labeled,
    cast(class_precision as double) as class_precision,
    cast(class_recall as double) as class_recall,
    cast(f1 as double) as f1,
    cast('{{ var("gender_rule") }}' as string) as gender_rule
from (
    select
        model, domain, role, class, characters, true_positives, predicted, hand_labeled, class_precision,
        class_recall, f1
    from scored
    union all
    select
        model, domain, role, class, characters, true_positives, predicted, hand_labeled, class_precision,
        class_recall, f1
    from macro
) as class_rows
