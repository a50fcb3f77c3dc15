-- One row per label response, typed; parsing happens in intermediate/int_label_responses_parsed. The run and the
-- reported labeler version are null in warehouses landed before these columns existed.
with

source_responses as (
    select
        {{ raw_row_locator() }} as row_locator,
        response_id, story_id, labeler_model, prompt_version, sample_index, request_text, response_text,
        responded_at, prompt_tokens, completion_tokens, source_file, source_row, file_sha256, loaded_at, load_id,
        {{ source_column_or_null('raw', 'label_responses', 'run_id', 'string') }} as run_id_given,
        {{ source_column_or_null('raw', 'label_responses', 'labeler_version', 'string') }} as labeler_version_reported,
        {{ source_column_or_null('raw', 'label_responses', 'system_fingerprint', 'string') }} as system_fingerprint
    from {{ source('raw', 'label_responses') }}
)

select
    response_id,
    story_id,
    labeler_model,
    prompt_version,
    cast(sample_index as integer) as sample_index,
    request_text,
    response_text,
    responded_at,
    cast(prompt_tokens as integer) as prompt_tokens,
    cast(completion_tokens as integer) as completion_tokens,
    source_file,
    source_row,
    file_sha256,
    loaded_at,
    load_id,
    row_locator,
    -- the labeling run (a response landed without one: its file's synthesized run, docs/RUNS.md) and the labeler
    -- version: the model string the labeling endpoint reported, else the labeler's configured name
    coalesce(run_id_given, 'file:' || file_sha256 || ':' || labeler_model) as run_id,
    run_id_given is null as run_id_synthesized,
    labeler_version_reported,
    coalesce(labeler_version_reported, labeler_model) as labeler_version,
    system_fingerprint
from source_responses
