-- The current manifest of every recorded run (raw.runs, docs/RUNS.md): raw.runs is append-only and a resumed run
-- lands its updated manifest as a new row with the same run_id, so the current row is the one loaded last (ties:
-- the later finished_at, then the later source row). A warehouse without raw.runs (landed before runs were
-- recorded) gives no rows: its runs are synthesized from the stories and responses (intermediate/runs).
with

source_runs as (
    {{ source_or_empty('raw', 'runs', [
        ('run_id', 'string'), ('run_kind', 'string'), ('run_name', 'string'), ('model', 'string'),
        ('model_canonical', 'string'), ('model_id', 'string'), ('base_url', 'string'),
        ('reported_models', 'string'), ('system_fingerprints', 'string'), ('sampling', 'string'),
        ('prompt_catalog_sha256', 'string'), ('label_template_sha256', 'string'), ('lfh_version', 'string'),
        ('git_commit', 'string'), ('git_dirty', 'boolean'), ('started_at', 'timestamp'),
        ('finished_at', 'timestamp'), ('requests', 'bigint'), ('retries', 'bigint'), ('failures', 'bigint'),
        ('prompt_tokens', 'bigint'), ('completion_tokens', 'bigint'), ('is_simulated', 'boolean'),
        ('is_synthesized', 'boolean'), ('manifest_json', 'string'), ('source_file', 'string'),
        ('source_row', 'integer'), ('file_sha256', 'string'), ('loaded_at', 'timestamp'), ('load_id', 'string')]) }}
),

ranked as (
    select
        *,
        row_number() over (
            partition by run_id order by loaded_at desc, finished_at desc nulls last, source_row desc
        ) as manifest_rank,
        count(*) over (partition by run_id) as manifests_landed
    from source_runs
)

select
    run_id,
    run_kind,
    run_name,
    model,
    model_canonical,
    model_id,
    base_url,
    reported_models,
    system_fingerprints,
    sampling,
    prompt_catalog_sha256,
    label_template_sha256,
    lfh_version,
    git_commit,
    git_dirty,
    started_at,
    finished_at,
    requests,
    retries,
    failures,
    prompt_tokens,
    completion_tokens,
    coalesce(is_simulated, false) as is_simulated,
    coalesce(is_synthesized, false) as is_synthesized,
    manifest_json,
    cast(manifests_landed as bigint) as manifests_landed,
    source_file,
    source_row,
    file_sha256,
    loaded_at,
    load_id
from ranked
where manifest_rank = 1
