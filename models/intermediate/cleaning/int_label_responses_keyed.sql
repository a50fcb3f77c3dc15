{{ config(**story_incremental()) }}
-- docs/METHOD.md §3-§4.1: every label response with the role keys it was asked for. The keys come from the request's
-- type-definition block (first name-key = subject, second = object) and fall back to the catalog / story columns;
-- a response whose story is not loaded is kept and flagged (is_orphan). int_label_responses_parsed parses them.
with

-- the request is reduced to its role keys at once: its text (the story included) is the bulk of the table. Requests
-- share few heads (the text up to the type-definition block's '}'), so the keys are read once per distinct head and
-- from the whole request only when its head does not hold them (see request_head in macros/text). The table is
-- scanned twice rather than held in a shared CTE: holding the request texts costs more than reading them again
distinct_heads as (
    select distinct {{ request_head('request_text') }} as request_head
    from {{ changed_only(ref('stg_label_responses')) }}
),

head_keys as (
    select request_head, {{ request_role_keys('request_head') }} as head_role_keys
    from distinct_heads
),

responses as (
    select
        requests.response_id, requests.story_id, requests.labeler_model, requests.prompt_version,
        requests.sample_index, requests.response_text,
        case
            when {{ request_head_has_keys('head_keys.request_head', 'head_keys.head_role_keys') }}
                then head_keys.head_role_keys
            else {{ request_role_keys('requests.request_text') }}
        end as request_role_keys
    from {{ changed_only(ref('stg_label_responses'), 'requests') }}
    left join head_keys
        on {{ request_head('requests.request_text') }} = head_keys.request_head
),

stories as (
    select story_id, domain, prompt_condition, catalog_subject_key, catalog_object_key
    from {{ changed_only(ref('int_stories_placed')) }}
),

with_keys as (
    select
        responses.response_id,
        responses.story_id,
        responses.labeler_model,
        responses.prompt_version,
        responses.sample_index,
        responses.response_text,
        stories.story_id is null as is_orphan,
        coalesce(stories.prompt_condition = 'power_laden' or stories.domain = 'love', false) as has_object_role,
        case
            when {{ list_length('responses.request_role_keys') }} >= 1 then 'request'
            else 'catalog'
        end as key_source,
        coalesce({{ list_element('responses.request_role_keys', 1) }}, stories.catalog_subject_key)
            as subject_role_text,
        coalesce({{ list_element('responses.request_role_keys', 2) }}, stories.catalog_object_key)
            as object_role_text_asked
    from responses
    left join stories
        on responses.story_id = stories.story_id
)

select
    response_id,
    story_id,
    labeler_model,
    prompt_version,
    sample_index,
    response_text,
    is_orphan,
    has_object_role,
    key_source,
    subject_role_text,
    case when has_object_role then object_role_text_asked end as object_role_text
from with_keys
