-- METHOD.md §4.4: the gender of each character from the indicator words among its counted references:
-- exactly one indicator set hit -> that gender; none -> unspecified; more than one -> unsure.
with

story_roles as (
    select story_id, role
    from {{ ref('int_story_roles_assigned') }}
),

counted_references as (
    select story_id, role, reference
    from {{ ref('int_references_voted') }}
    where is_counted
),

indicator_words as (
    select distinct lower(trim(indicator_word)) as indicator_word, gender
    from {{ ref('gender_indicator_words') }}
),

reference_tokens as (
    select story_id, role, {{ unnest_list(indicator_tokens('reference')) }} as token
    from counted_references
),

hits as (
    select
        reference_tokens.story_id,
        reference_tokens.role,
        count(distinct indicator_words.gender) as gender_sets_hit,
        min(indicator_words.gender) as gender_hit
    from reference_tokens
    inner join indicator_words
        on reference_tokens.token = indicator_words.indicator_word
    group by reference_tokens.story_id, reference_tokens.role
)

select
    story_roles.story_id,
    story_roles.role,
    coalesce(hits.gender_sets_hit, 0) as gender_sets_hit,
    case
        when coalesce(hits.gender_sets_hit, 0) = 0 then 'unspecified'
        when hits.gender_sets_hit = 1 then hits.gender_hit
        else 'unsure'
    end as gender
from story_roles
left join hits
    on story_roles.story_id = hits.story_id
    and story_roles.role = hits.role
