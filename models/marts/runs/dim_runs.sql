-- Every run behind the warehouse's stories and label responses (docs/RUNS.md): generated, labeling, simulated, or
-- synthesized for a file that carried no manifest; one row per run, its current manifest, with the model versions
-- its stories carry, the labeler versions of its responses, and how many of each the warehouse holds.
with

runs as (

    select * from {{ ref('int_runs_assembled') }}

)

select
    run_id,
    run_kind,
    run_name,
    model,
    model_canonical,
    model_id,
    model_versions,
    labeler_versions,
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
    stories,
    label_responses,
    is_simulated,
    is_synthesized,
    has_manifest,
    manifests_landed,
    file_sha256,
    source_file,
    loaded_at
from runs
