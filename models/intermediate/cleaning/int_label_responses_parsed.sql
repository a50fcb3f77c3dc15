{{ config(**story_incremental()) }}
-- docs/METHOD.md §4.1: every label response, parsed against the role keys it was asked for
-- (int_label_responses_keyed), with its story's labeling run (int_labeling_runs_selected). A response that does not
-- parse or lacks a role's keys is kept with a reject_reason; nothing is dropped.
{%- set role_fields = [] %}
{%- for role in ['subject', 'object'] %}{% for field in ['name', 'references'] %}
    {%- do role_fields.append((role ~ '_' ~ field, role ~ "_role_text || ' " ~ field ~ "'")) %}
{%- endfor %}{% endfor %}
with

role_keyed as (
    select
        response_id, story_id, labeler_model, prompt_version, sample_index, response_text, is_orphan,
        has_object_role, key_source, subject_role_text, object_role_text
    from {{ changed_only(ref('int_label_responses_keyed')) }}
),

runs as (
    select story_id, labeler_model, prompt_version, is_selected_run
    from {{ changed_only(ref('int_labeling_runs_selected')) }}
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

-- each role's name and references key as the object spells it (subject_name_key, ..., object_references_key)
matched as (
    select
        mapped.*,
        {%- for column, wanted in role_fields %}
        {{ match_json_key('json_keys', wanted) }} as {{ column }}_key{{ ',' if not loop.last }}
        {%- endfor %}
    from mapped
),

valued as (
    select
        matched.*,
        {%- for column, _wanted in role_fields %}
        {{ map_value('json_fields', column ~ '_key') }} as {{ column }}_value,
        {%- endfor %}
        {{ json_type_at(map_value('json_fields', 'subject_references_key')) }} as subject_references_type,
        {{ json_type_at(map_value('json_fields', 'object_references_key')) }} as object_references_type
    from matched
),

judged as (
    select
        valued.*,
        case
            when valued.response_trimmed is null or valued.response_trimmed = '' then 'empty_response'
            when valued.response_json is null and {{ text_position('valued.response_trimmed', "'{'") }} = 0
                then 'not_json'
            when valued.response_json is null then 'unrecoverable_json'
            when valued.json_type <> 'OBJECT' then 'not_a_json_object'
            when not valued.has_unique_keys then 'duplicate_keys'
            when valued.subject_role_text is null then 'no_role_keys'
            when valued.subject_name_key is null or valued.subject_references_key is null then 'missing_subject_keys'
            when valued.has_object_role and (valued.object_name_key is null or valued.object_references_key is null)
                then 'missing_object_keys'
            when
                coalesce(valued.subject_references_type, 'NULL') not in ('ARRAY', 'NULL')
                then 'subject_references_not_a_list'
            when valued.has_object_role and coalesce(valued.object_references_type, 'NULL') not in ('ARRAY', 'NULL')
                then 'object_references_not_a_list'
        end as parse_reject_reason
    from valued
),

parse_results as (
    select
        response_text,
        subject_role_text,
        object_role_text,
        has_object_role,
        response_json,
        is_recovered,
        parse_reject_reason,
        case
            when parse_reject_reason is not null then null
            when
                subject_name_key = subject_role_text || ' name'
                and subject_references_key = subject_role_text || ' references'
                and (not has_object_role or (
                    object_name_key = object_role_text || ' name'
                    and object_references_key = object_role_text || ' references'
                ))
                then 'exact'
            else 'case_insensitive'
        end as key_match,
        case when parse_reject_reason is null then {{ json_value_string('subject_name_value') }} end as subject_name,
        case when parse_reject_reason is null then
            {{ references_text_list('subject_references_value', 'subject_references_type') }}
        end as subject_references,
        case when parse_reject_reason is null and has_object_role then {{ json_value_string('object_name_value') }} end
            as object_name,
        case when parse_reject_reason is null and has_object_role then
            {{ references_text_list('object_references_value', 'object_references_type') }}
        end as object_references
    from judged
)

-- an orphan response (its story is not loaded) is parsed all the same but rejected first
select
    role_keyed.response_id,
    role_keyed.story_id,
    role_keyed.labeler_model,
    role_keyed.prompt_version,
    role_keyed.sample_index,
    coalesce(runs.is_selected_run, false) as is_selected_run,
    role_keyed.key_source,
    role_keyed.subject_role_text,
    role_keyed.object_role_text,
    role_keyed.has_object_role,
    parse_results.response_json,
    parse_results.is_recovered,
    not role_keyed.is_orphan and parse_results.parse_reject_reason is null as is_valid,
    case when role_keyed.is_orphan then 'orphan_story' else parse_results.parse_reject_reason end as reject_reason,
    case when not role_keyed.is_orphan then parse_results.key_match end as key_match,
    case when not role_keyed.is_orphan then parse_results.subject_name end as subject_name,
    case when not role_keyed.is_orphan then parse_results.subject_references end as subject_references,
    case when not role_keyed.is_orphan then parse_results.object_name end as object_name,
    case when not role_keyed.is_orphan then parse_results.object_references end as object_references
from role_keyed
inner join parse_results
    on
        role_keyed.response_text is not distinct from parse_results.response_text
        and role_keyed.subject_role_text is not distinct from parse_results.subject_role_text
        and role_keyed.object_role_text is not distinct from parse_results.object_role_text
        and role_keyed.has_object_role = parse_results.has_object_role
left join runs
    on
        role_keyed.story_id = runs.story_id
        and role_keyed.labeler_model = runs.labeler_model
        and role_keyed.prompt_version = runs.prompt_version
