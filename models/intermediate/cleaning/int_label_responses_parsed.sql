{{ config(**story_incremental()) }}
-- METHOD.md §3-§4.1: every label response, parsed. The role keys come from the request's type-definition block
-- (first name-key = subject, second = object) and fall back to the catalog / story columns. A response that does
-- not parse or lacks a role's keys is kept with a reject_reason; nothing is dropped.
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
                max(loaded_at) desc, labeler_model, prompt_version asc
        ) = 1 as is_selected_run
    from {{ changed_only(ref('stg_label_responses')) }}
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
            as object_role_text_asked
    from responses
    left join stories
        on responses.story_id = stories.story_id
),

role_keyed as (
    select
        with_keys.response_id,
        with_keys.story_id,
        with_keys.labeler_model,
        with_keys.prompt_version,
        with_keys.sample_index,
        with_keys.response_text,
        with_keys.is_orphan,
        with_keys.has_object_role,
        with_keys.key_source,
        with_keys.subject_role_text,
        case when with_keys.has_object_role then with_keys.object_role_text_asked end as object_role_text
    from with_keys
),

-- a parse depends only on the response text and the keys asked for: samples and reruns often repeat an answer,
-- so each distinct combination is parsed once and joined back
parse_inputs as (
    select distinct response_text, subject_role_text, object_role_text, has_object_role
    from role_keyed
),

trimmed as (
    select
        parse_inputs.*,
        {{ trim_whitespace('parse_inputs.response_text') }} as response_trimmed
    from parse_inputs
),

recovered as (
    select
        trimmed.*,
        {{ json_is_valid('response_trimmed') }} as is_json,
        -- the span from the first '{' to the last '}': valid JSON only when it is exactly one balanced object
        case
            when {{ json_is_valid('response_trimmed') }} then null
            when
                {{ text_position('trimmed.response_trimmed', "'{'") }} > 0
                and {{ last_position('response_trimmed', "'}'") }}
                > {{ text_position('trimmed.response_trimmed', "'{'") }}
                then substr(
                    trimmed.response_trimmed,
                    {{ text_position('trimmed.response_trimmed', "'{'") }},
                    {{ last_position('response_trimmed', "'}'") }}
                    - {{ text_position('trimmed.response_trimmed', "'{'") }} + 1
                )
        end as embedded_object_text
    from trimmed
),

parsed as (
    select
        recovered.*,
        not recovered.is_json and coalesce({{ json_is_valid('embedded_object_text') }}, false) as is_recovered,
        case
            when recovered.is_json then recovered.response_trimmed
            when coalesce({{ json_is_valid('embedded_object_text') }}, false) then recovered.embedded_object_text
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
        {{ list_length('json_keys') }} = {{ list_length(list_distinct('json_keys')) }} as has_unique_keys,
        case
            when {{ list_length('json_keys') }} = {{ list_length(list_distinct('json_keys')) }}
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
            when typed.response_trimmed is null or typed.response_trimmed = '' then 'empty_response'
            when typed.response_json is null and {{ text_position('typed.response_trimmed', "'{'") }} = 0
                then 'not_json'
            when typed.response_json is null then 'unrecoverable_json'
            when typed.json_type <> 'OBJECT' then 'not_a_json_object'
            when not typed.has_unique_keys then 'duplicate_keys'
            when typed.subject_role_text is null then 'no_role_keys'
            when typed.subject_name_key is null or typed.subject_references_key is null then 'missing_subject_keys'
            when typed.has_object_role and (typed.object_name_key is null or typed.object_references_key is null)
                then 'missing_object_keys'
            when
                coalesce(typed.subject_references_type, 'NULL') not in ('ARRAY', 'NULL')
                then 'subject_references_not_a_list'
            when typed.has_object_role and coalesce(typed.object_references_type, 'NULL') not in ('ARRAY', 'NULL')
                then 'object_references_not_a_list'
        end as parse_reject_reason
    from typed
),

parse_results as (
    select
        judged.response_text,
        judged.subject_role_text,
        judged.object_role_text,
        judged.has_object_role,
        judged.response_json,
        judged.is_recovered,
        judged.parse_reject_reason,
        case
            when judged.parse_reject_reason is not null then null
            when
                judged.subject_name_key = judged.subject_role_text || ' name'
                and judged.subject_references_key = judged.subject_role_text || ' references'
                and (not judged.has_object_role or (
                    judged.object_name_key = judged.object_role_text || ' name'
                    and judged.object_references_key = judged.object_role_text || ' references'
                ))
                then 'exact'
            else 'case_insensitive'
        end as key_match,
        case when judged.parse_reject_reason is null then {{ json_value_string('judged.subject_name_value') }} end
            as subject_name,
        case when judged.parse_reject_reason is null then coalesce(
            case
                when judged.subject_references_type = 'ARRAY'
                    then {{ json_value_text_list('judged.subject_references_value') }}
            end, {{ empty_text_list() }}
        ) end as subject_references,
        case
            when judged.parse_reject_reason is null and judged.has_object_role
                then {{ json_value_string('judged.object_name_value') }}
        end as object_name,
        case when judged.parse_reject_reason is null and judged.has_object_role then coalesce(
            case
                when judged.object_references_type = 'ARRAY'
                    then {{ json_value_text_list('judged.object_references_value') }}
            end, {{ empty_text_list() }}
        ) end as object_references
    from judged
),

-- an orphan response (its story is not loaded) is parsed all the same but rejected first
reasoned as (
    select
        role_keyed.response_id,
        role_keyed.story_id,
        role_keyed.labeler_model,
        role_keyed.prompt_version,
        role_keyed.sample_index,
        role_keyed.is_orphan,
        role_keyed.key_source,
        role_keyed.subject_role_text,
        role_keyed.object_role_text,
        role_keyed.has_object_role,
        parse_results.response_json,
        parse_results.is_recovered,
        case when role_keyed.is_orphan then 'orphan_story' else parse_results.parse_reject_reason end
            as reject_reason,
        parse_results.key_match,
        parse_results.subject_name,
        parse_results.subject_references,
        parse_results.object_name,
        parse_results.object_references
    from role_keyed
    inner join parse_results
        on
            role_keyed.response_text is not distinct from parse_results.response_text
            and role_keyed.subject_role_text is not distinct from parse_results.subject_role_text
            and role_keyed.object_role_text is not distinct from parse_results.object_role_text
            and role_keyed.has_object_role = parse_results.has_object_role
)

select
    reasoned.response_id,
    reasoned.story_id,
    reasoned.labeler_model,
    reasoned.prompt_version,
    reasoned.sample_index,
    coalesce(runs.is_selected_run, false) as is_selected_run,
    reasoned.key_source,
    reasoned.subject_role_text,
    reasoned.object_role_text,
    reasoned.has_object_role,
    reasoned.response_json,
    reasoned.is_recovered,
    reasoned.reject_reason is null as is_valid,
    reasoned.reject_reason,
    case when not reasoned.is_orphan then reasoned.key_match end as key_match,
    case when not reasoned.is_orphan then reasoned.subject_name end as subject_name,
    case when not reasoned.is_orphan then reasoned.subject_references end as subject_references,
    case when not reasoned.is_orphan then reasoned.object_name end as object_name,
    case when not reasoned.is_orphan then reasoned.object_references end as object_references
from reasoned
left join runs
    on
        reasoned.story_id = runs.story_id
        and reasoned.labeler_model = runs.labeler_model
        and reasoned.prompt_version = runs.prompt_version
