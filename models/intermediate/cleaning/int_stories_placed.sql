{{ config(**story_incremental()) }}  {#- a table (read by six models), built only for changed stories -#}
-- One row per story: model aliases resolved, the prompt placed in the catalog (docs/METHOD.md §1), the answer cleaned.
with

source_stories as (
    select
        story_id, model, model_canonical, query, subject, object, role_category, story_text,
        generated_at, occurrence, source_kind, prompt_id as prompt_id_given, prompt_tokens, completion_tokens,
        is_simulated,
        source_file, source_row, file_sha256, loaded_at, load_id
    from {{ changed_only(ref('stg_stories')) }}
),

model_aliases as (
    select lower(trim(alias)) as alias_key, model
    from {{ ref('model_aliases') }}
),

prompt_catalog as (
    select
        prompt_id, domain, prompt_condition, relation, subject_key, object_key,
        {{ normalize_whitespace('query') }} as query_normalized
    from {{ ref('prompt_catalog') }}
),

-- a story that names its prompt (a generator's prompt_id) is placed by it when its query text is not in the catalog
prompt_catalog_by_id as (
    select prompt_id, domain, prompt_condition, relation, subject_key, object_key
    from {{ ref('prompt_catalog') }}
),

role_category_domains as (
    select lower(trim(role_category)) as role_category_key, domain
    from {{ ref('role_category_domains') }}
),

normalized as (
    select
        source_stories.*,
        {{ normalize_whitespace('source_stories.query') }} as query_normalized,
        nullif(trim(source_stories.object), '') as object_given,
        {{ strip_prompt_prefix('source_stories.story_text', 'source_stories.query') }} as story_text_clean
    from source_stories
),

placed as (
    select
        normalized.story_id,
        normalized.model as model_given,
        coalesce(model_aliases.model, normalized.model_canonical, trim(normalized.model)) as model,
        normalized.query,
        normalized.query_normalized,
        coalesce(prompt_catalog.prompt_id, prompt_catalog_by_id.prompt_id) as prompt_id,
        -- a query outside the catalog (e.g. the audit workbook's earlier prompt set) is placed from its own columns
        coalesce(prompt_catalog.domain, prompt_catalog_by_id.domain, role_category_domains.domain) as domain,
        coalesce(
            prompt_catalog.prompt_condition,
            prompt_catalog_by_id.prompt_condition,
            case when normalized.object_given is not null then 'power_laden' else 'power_neutral' end
        ) as prompt_condition,
        case
            when prompt_catalog.prompt_id is not null then 'catalog'
            when prompt_catalog_by_id.prompt_id is not null then 'catalog_prompt_id'
            else 'story_columns'
        end as placement,
        normalized.subject,
        normalized.object_given as object,
        normalized.role_category,
        coalesce(prompt_catalog.relation, prompt_catalog_by_id.relation) as relation,
        -- fallback role keys (docs/METHOD.md §3) when the labeling request is not stored with a response
        coalesce(prompt_catalog.subject_key, prompt_catalog_by_id.subject_key, nullif(trim(normalized.subject), ''))
            as catalog_subject_key,
        coalesce(prompt_catalog.object_key, prompt_catalog_by_id.object_key, normalized.object_given)
            as catalog_object_key,
        normalized.story_text_clean as story_text,
        coalesce(normalized.story_text_clean <> normalized.story_text, false) as prompt_prefix_stripped,
        coalesce({{ trim_whitespace('normalized.story_text_clean') }}, '') = '' as is_empty_text,
        normalized.generated_at,
        normalized.prompt_tokens,
        normalized.completion_tokens,
        normalized.occurrence,
        normalized.source_kind,
        normalized.is_simulated,
        normalized.source_file,
        normalized.source_row,
        normalized.file_sha256,
        normalized.loaded_at,
        normalized.load_id
    from normalized
    left join model_aliases
        on lower(trim(normalized.model)) = model_aliases.alias_key
    left join prompt_catalog
        on normalized.query_normalized = prompt_catalog.query_normalized
    left join prompt_catalog_by_id
        on normalized.prompt_id_given = prompt_catalog_by_id.prompt_id
    left join role_category_domains
        on lower(trim(normalized.role_category)) = role_category_domains.role_category_key
)

select
    story_id, model_given, model, query, query_normalized, prompt_id, domain, prompt_condition, placement,
    subject, object, role_category, relation, catalog_subject_key, catalog_object_key,
    story_text, prompt_prefix_stripped, is_empty_text,
    generated_at, prompt_tokens, completion_tokens, occurrence, source_kind, is_simulated, source_file, source_row,
    file_sha256, loaded_at, load_id
from placed
