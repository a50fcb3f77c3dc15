-- One row per raw story as landed (raw.stories), columns named and typed for the project; the model aliases, the
-- catalog placement and the cleaned answer are intermediate/cleaning/int_stories_placed.
with

source_stories as (
    select
        {{ raw_row_locator() }} as row_locator,
        story_id, model, model_canonical, query, subject, object, role_category, story_text, generated_at,
        occurrence, source_kind, prompt_id, prompt_tokens, completion_tokens, is_simulated, source_file, source_row,
        file_sha256, loaded_at, load_id
    from {{ source('raw', 'stories') }}
)

select
    story_id,
    model,
    model_canonical,
    query,
    subject,
    object,
    role_category,
    story_text,
    generated_at,
    occurrence,
    source_kind,
    prompt_id,
    prompt_tokens,
    completion_tokens,
    coalesce(is_simulated, false) as is_simulated,
    source_file,
    source_row,
    file_sha256,
    loaded_at,
    load_id,
    row_locator
from source_stories
