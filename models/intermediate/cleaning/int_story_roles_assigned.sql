{{ config(**story_incremental()) }}
-- docs/METHOD.md §2: the characters a labeled story yields, one row per role, with the character's condition.
-- Power-neutral Learning/Labor: subject only (baseline); power-neutral Love: both partners baseline;
-- power-laden: subject dominant, object subordinate. Stories that could not be placed in a domain have no roles.
with

stories as (
    select story_id, model, domain, prompt_condition, prompt_id
    from {{ changed_only(ref('int_stories_placed')) }}
    where domain is not null
),

labeling as (
    select story_id, samples_received, subject_role_text, object_role_text
    from {{ changed_only(ref('int_stories_labeled')) }}
    where is_labeled
),

roles as (
    select 'subject' as role
    union all
    select 'object' as role
)

select
    stories.story_id,
    roles.role,
    stories.model,
    stories.domain,
    stories.prompt_condition,
    case
        when stories.prompt_condition = 'power_neutral' then 'baseline'
        when roles.role = 'subject' then 'dominant'
        else 'subordinate'
    end as condition,
    stories.prompt_id,
    case when roles.role = 'subject' then labeling.subject_role_text else labeling.object_role_text end as role_text,
    labeling.samples_received as samples
from stories
inner join labeling
    on stories.story_id = labeling.story_id
cross join roles
where
    roles.role = 'subject'
    or stories.prompt_condition = 'power_laden'
    or stories.domain = 'love'
