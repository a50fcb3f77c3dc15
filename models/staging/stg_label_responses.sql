-- One row per label response, typed; parsing happens in intermediate/int_label_responses_parsed.
with

source_responses as (
    select
        {{ raw_row_locator() }} as row_locator,
        response_id, story_id, labeler_model, prompt_version, sample_index, request_text, response_text,
        responded_at, prompt_tokens, completion_tokens, source_file, source_row, file_sha256, loaded_at, load_id
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
    row_locator
from source_responses
