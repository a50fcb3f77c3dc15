-- METHOD.md §3-§4.1: every label response, parsed. The role keys come from the request's type-definition block
-- (first name-key = subject, second = object) and fall back to the catalog / story columns. A response that does
-- not parse or lacks a role's keys is kept with a reject_reason; nothing is dropped.
with

-- the request is reduced to its role keys at once: its text (the story included) is the bulk of the table
responses as (
    select
        response_id, story_id, labeler_model, prompt_version, sample_index, response_text,
        {{ request_role_keys('request_text') }} as request_role_keys
    from {{ ref('stg_label_responses') }}
),

stories as (
    select story_id, domain, prompt_condition, catalog_subject_key, catalog_object_key
    from {{ ref('stg_stories') }}
),

-- one labeling run per story: the pinned run when vars name one, else the run loaded last
runs as (
    select
        story_id,
        labeler_model,
        prompt_version,
        row_number() over (
            partition by story_id
            order by
                {% if var('labeling_labeler_model', none) is not none -%}
                (labeler_model = '{{ var("labeling_labeler_model") }}') desc,
                {% endif -%}
                {% if var('labeling_prompt_version', none) is not none -%}
                (prompt_version = '{{ var("labeling_prompt_version") }}') desc,
                {% endif -%}
                max(loaded_at) desc, labeler_model, prompt_version
        ) = 1 as is_selected_run
    from {{ ref('stg_label_responses') }}
    group by story_id, labeler_model, prompt_version
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
            as object_role_text_asked,
        {{ trim_whitespace('responses.response_text') }} as response_trimmed
    from responses
    left join stories
        on responses.story_id = stories.story_id
),

recovered as (
    select
        with_keys.* exclude (object_role_text_asked),
        case when has_object_role then object_role_text_asked end as object_role_text,
        {{ json_is_valid('response_trimmed') }} as is_json,
        -- the span from the first '{' to the last '}': valid JSON only when it is exactly one balanced object
        case
            when {{ json_is_valid('response_trimmed') }} then null
            when strpos(response_trimmed, '{') > 0
                and {{ last_position('response_trimmed', "'}'") }} > strpos(response_trimmed, '{')
                then substr(
                    response_trimmed,
                    strpos(response_trimmed, '{'),
                    {{ last_position('response_trimmed', "'}'") }} - strpos(response_trimmed, '{') + 1
                )
        end as embedded_object_text
    from with_keys
),

parsed as (
    select
        recovered.*,
        not is_json and coalesce({{ json_is_valid('embedded_object_text') }}, false) as is_recovered,
        case
            when is_json then response_trimmed
            when coalesce({{ json_is_valid('embedded_object_text') }}, false) then embedded_object_text
        end as response_json
    from recovered
),

keyed as (
    select
        parsed.*,
        {{ json_type_at('response_json') }} as json_type,
        case when {{ json_type_at('response_json') }} = 'OBJECT' then {{ json_object_keys('response_json') }} end
            as json_keys
    from parsed
),

-- the object read once into a key -> value map (only when its keys are unique: a map cannot hold duplicates)
mapped as (
    select
        keyed.*,
        {{ list_length('json_keys') }} = {{ list_length('list_distinct(json_keys)') }} as has_unique_keys,
        case
            when {{ list_length('json_keys') }} = {{ list_length('list_distinct(json_keys)') }}
                then {{ json_object_as_map('response_json') }}
        end as json_fields
    from keyed
),

matched as (
    select
        mapped.*,
        {{ match_json_key('json_keys', "subject_role_text || ' name'") }} as subject_name_key,
        {{ match_json_key('json_keys', "subject_role_text || ' references'") }} as subject_references_key,
        {{ match_json_key('json_keys', "object_role_text || ' name'") }} as object_name_key,
        {{ match_json_key('json_keys', "object_role_text || ' references'") }} as object_references_key
    from mapped
),

valued as (
    select
        matched.*,
        {{ map_value('json_fields', 'subject_name_key') }} as subject_name_value,
        {{ map_value('json_fields', 'subject_references_key') }} as subject_references_value,
        {{ map_value('json_fields', 'object_name_key') }} as object_name_value,
        {{ map_value('json_fields', 'object_references_key') }} as object_references_value
    from matched
),

typed as (
    select
        valued.*,
        {{ json_type_at('subject_references_value') }} as subject_references_type,
        {{ json_type_at('object_references_value') }} as object_references_type
    from valued
),

judged as (
    select
        typed.*,
        case
            when is_orphan then 'orphan_story'
            when response_trimmed is null or response_trimmed = '' then 'empty_response'
            when response_json is null and strpos(response_trimmed, '{') = 0 then 'not_json'
            when response_json is null then 'unrecoverable_json'
            when json_type <> 'OBJECT' then 'not_a_json_object'
            when not has_unique_keys then 'duplicate_keys'
            when subject_role_text is null then 'no_role_keys'
            when subject_name_key is null or subject_references_key is null then 'missing_subject_keys'
            when has_object_role and (object_name_key is null or object_references_key is null)
                then 'missing_object_keys'
            when coalesce(subject_references_type, 'NULL') not in ('ARRAY', 'NULL') then 'subject_references_not_a_list'
            when has_object_role and coalesce(object_references_type, 'NULL') not in ('ARRAY', 'NULL')
                then 'object_references_not_a_list'
        end as reject_reason
    from typed
)

select
    judged.response_id,
    judged.story_id,
    judged.labeler_model,
    judged.prompt_version,
    judged.sample_index,
    coalesce(runs.is_selected_run, false) as is_selected_run,
    judged.key_source,
    judged.subject_role_text,
    judged.object_role_text,
    judged.has_object_role,
    judged.response_json,
    judged.is_recovered,
    judged.reject_reason is null as is_valid,
    judged.reject_reason,
    case
        when judged.reject_reason is not null then null
        when judged.subject_name_key = judged.subject_role_text || ' name'
            and judged.subject_references_key = judged.subject_role_text || ' references'
            and (not judged.has_object_role or (
                judged.object_name_key = judged.object_role_text || ' name'
                and judged.object_references_key = judged.object_role_text || ' references'))
            then 'exact'
        else 'case_insensitive'
    end as key_match,
    case when judged.reject_reason is null then {{ json_value_string('judged.subject_name_value') }} end
        as subject_name,
    case when judged.reject_reason is null then coalesce(
        case when judged.subject_references_type = 'ARRAY'
            then {{ json_value_text_list('judged.subject_references_value') }} end, []) end as subject_references,
    case when judged.reject_reason is null and judged.has_object_role
        then {{ json_value_string('judged.object_name_value') }} end as object_name,
    case when judged.reject_reason is null and judged.has_object_role then coalesce(
        case when judged.object_references_type = 'ARRAY'
            then {{ json_value_text_list('judged.object_references_value') }} end, []) end as object_references
from judged
left join runs
    on judged.story_id = runs.story_id
    and judged.labeler_model = runs.labeler_model
    and judged.prompt_version = runs.prompt_version
