-- One row per raw story as landed (raw.stories), columns named and typed for the project; the model aliases, the
-- catalog placement and the cleaned answer are intermediate/cleaning/int_stories_placed; the run and what the
-- endpoint reported (null in warehouses landed before these columns existed) are read by intermediate/runs.
with

source_stories as (
    select
        {{ raw_row_locator() }} as row_locator,
        story_id, model, model_canonical, query, subject, object, role_category, story_text, generated_at,
        occurrence, source_kind, prompt_id, prompt_tokens, completion_tokens, is_simulated, source_file, source_row,
        file_sha256, loaded_at, load_id,
        {{ source_column_or_null('raw', 'stories', 'run_id', 'string') }} as run_id_given,
        {{ source_column_or_null('raw', 'stories', 'model_id', 'string') }} as model_id,
        {{ source_column_or_null('raw', 'stories', 'model_version', 'string') }} as model_version_reported,
        {{ source_column_or_null('raw', 'stories', 'system_fingerprint', 'string') }} as system_fingerprint
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
    row_locator,
    -- the run that produced the story; a row landed without one (before runs were recorded) belongs to its
    -- file's synthesized run, the id `lfh ingest` gives such a run (docs/RUNS.md)
    coalesce(run_id_given, 'file:' || file_sha256 || ':' || model_canonical) as run_id,
    run_id_given is null as run_id_synthesized,
    model_id,
    model_version_reported,
    system_fingerprint
from source_stories
