-- Couples of romantic Love stories (METHOD.md §6, sexual orientation): every story of a prompt whose relation
-- is 'romantic partner' (both conditions: the two partners of a power-neutral story, or the dominant and the
-- subordinate partner of a power-laden one) gives the unordered pair of its two characters' genders. Pairs
-- with a character whose gender is not female, male or nonbinary (unspecified, unsure) or with a missing
-- character are left out of N and D. The relation comes from seeds/prompt_catalog.csv through prompt_id;
-- for a story whose query is not in the catalog, from the role text the labeler was asked about.
-- One row per model (and var all_models_label) and couple type, with N = 0 for absent types.

with characters as (

    select story_id, role, model, domain, prompt_id, role_text, gender
    from {{ ref('int_characters_joined') }}
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
        min(gender) as first_gender,
        max(gender) as second_gender
    from romantic_characters
    group by story_id
    having
        count(*) = 2
        and sum(case when gender in {{ sql_in_list(measure_gender_codes()) }} then 1 else 0 end) = 2

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

typed_couples as (

    select model, first_gender || '_' || second_gender as couple_type
    from couples

),

models as (

    select distinct model from romantic_characters
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
