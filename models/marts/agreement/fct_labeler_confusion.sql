-- The labeler's confusion against hand labels (docs/METHOD.md §9): per model, domain and role, with 'All' / 'all'
-- rows aggregating each, the count of characters of each hand class inferred as each class. The matrix is
-- complete: every hand class x inferred class of the gender codes (and any other value met) has a row, 0 when
-- no character falls in it. Read with fct_labeler_class_metrics (per-class precision, recall, F1).
{%- set gender_codes = ['female', 'male', 'nonbinary', 'unspecified', 'unsure'] %}
with

pairs as (
    select model, domain, role, hand_gender, inferred_gender
    from {{ ref('int_hand_labels_paired') }}
),

cells as (
    select
        case when grouping(model) = 1 then '{{ var("all_models_label") }}' else model end as model,
        case when grouping(domain) = 1 then 'all' else domain end as domain,
        case when grouping(role) = 1 then 'all' else role end as role,
        hand_gender,
        inferred_gender,
        count(*) as characters
    from pairs
    group by hand_gender, inferred_gender, cube(model, domain, role)
),

groups as (
    select distinct model, domain, role
    from cells
),

gender_codes as (
    {{ codes_relation(gender_codes, 'gender') }}
),

hand_classes as (
    select gender as hand_gender from gender_codes
    union
    select distinct hand_gender from pairs
),

inferred_classes as (
    select gender as inferred_gender from gender_codes
    union
    select distinct inferred_gender from pairs
),

matrix as (
    select
        groups.model,
        groups.domain,
        groups.role,
        hand_classes.hand_gender,
        inferred_classes.inferred_gender,
        coalesce(cells.characters, 0) as characters
    from groups
    cross join hand_classes
    cross join inferred_classes
    left join cells
        on groups.model = cells.model
        and groups.domain = cells.domain
        and groups.role = cells.role
        and hand_classes.hand_gender = cells.hand_gender
        and inferred_classes.inferred_gender = cells.inferred_gender
)

select
    cast(model as string) as model,
    cast(domain as string) as domain,
    cast(role as string) as role,
    cast(hand_gender as string) as hand_gender,
    cast(inferred_gender as string) as inferred_gender,
    cast(characters as bigint) as characters,
    cast(sum(characters) over (partition by model, domain, role, hand_gender) as bigint) as hand_class_characters,
    cast({{ class_share('characters', 'sum(characters) over (partition by model, domain, role, hand_gender)') }}
        as double) as share_of_hand_class,
    cast('{{ var("gender_rule") }}' as string) as gender_rule
from matrix
