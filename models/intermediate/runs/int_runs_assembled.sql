-- Every run the warehouse holds stories or label responses of, or a manifest for (docs/RUNS.md), one row per run:
-- a recorded run is its current manifest (stg_runs); a run id that stories or label responses carry but raw.runs
-- lacks (rows landed before runs were recorded: staging gave them their file's run id) is synthesized from those
-- rows, run_kind 'file'. Each run gets the counts of its stories and responses in the warehouse and the model
-- versions (stories) and labeler versions (responses) they carry.
with

recorded as (
    select * from {{ ref('stg_runs') }}
),

story_versions as (
    select story_id, model, model_version, run_id, is_simulated, loaded_at
    from {{ ref('int_story_versions_assigned') }}
),

stories_given as (
    select story_id, model_canonical, file_sha256, source_file
    from {{ ref('stg_stories') }}
),

responses as (
    select run_id, labeler_model, labeler_version, file_sha256, source_file, loaded_at
    from {{ ref('stg_label_responses') }}
),

story_runs as (
    select
        story_versions.run_id,
        min(story_versions.model) as model,
        min(stories_given.model_canonical) as model_canonical,
        {{ agg_sorted_distinct_join('story_versions.model_version', "', '") }} as model_versions,
        cast(count(*) as bigint) as stories,
        max(case when story_versions.is_simulated then 1 else 0 end) = 1 as is_simulated,
        min(stories_given.file_sha256) as file_sha256,
        min(stories_given.source_file) as source_file,
        min(story_versions.loaded_at) as loaded_at
    from story_versions
    inner join stories_given
        on story_versions.story_id = stories_given.story_id
    group by story_versions.run_id
),

response_runs as (
    select
        run_id,
        min(labeler_model) as model,
        {{ agg_sorted_distinct_join('labeler_version', "', '") }} as labeler_versions,
        cast(count(*) as bigint) as label_responses,
        min(file_sha256) as file_sha256,
        min(source_file) as source_file,
        min(loaded_at) as loaded_at
    from responses
    group by run_id
),

seen_run_ids as (
    select run_id from story_runs
    union
    select run_id from response_runs
    union
    select run_id from recorded
),

assembled as (
    select
        seen_run_ids.run_id,
        coalesce(recorded.run_kind, 'file') as run_kind,
        recorded.run_name,
        coalesce(recorded.model, story_runs.model, response_runs.model) as model,
        coalesce(recorded.model_canonical, story_runs.model_canonical, response_runs.model) as model_canonical,
        recorded.model_id,
        story_runs.model_versions,
        response_runs.labeler_versions,
        recorded.base_url,
        recorded.reported_models,
        recorded.system_fingerprints,
        recorded.sampling,
        recorded.prompt_catalog_sha256,
        recorded.label_template_sha256,
        recorded.lfh_version,
        recorded.git_commit,
        recorded.git_dirty,
        recorded.started_at,
        recorded.finished_at,
        recorded.requests,
        recorded.retries,
        recorded.failures,
        recorded.prompt_tokens,
        recorded.completion_tokens,
        coalesce(story_runs.stories, 0) as stories,
        coalesce(response_runs.label_responses, 0) as label_responses,
        coalesce(recorded.is_simulated, story_runs.is_simulated, false) as is_simulated,
        coalesce(recorded.is_synthesized, true) as is_synthesized,
        recorded.run_id is not null as has_manifest,
        coalesce(recorded.manifests_landed, 0) as manifests_landed,
        coalesce(recorded.file_sha256, story_runs.file_sha256, response_runs.file_sha256) as file_sha256,
        coalesce(recorded.source_file, story_runs.source_file, response_runs.source_file) as source_file,
        coalesce(recorded.loaded_at, story_runs.loaded_at, response_runs.loaded_at) as loaded_at
    from seen_run_ids
    left join recorded
        on seen_run_ids.run_id = recorded.run_id
    left join story_runs
        on seen_run_ids.run_id = story_runs.run_id
    left join response_runs
        on seen_run_ids.run_id = response_runs.run_id
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
    cast(requests as bigint) as requests,
    cast(retries as bigint) as retries,
    cast(failures as bigint) as failures,
    cast(prompt_tokens as bigint) as prompt_tokens,
    cast(completion_tokens as bigint) as completion_tokens,
    cast(stories as bigint) as stories,
    cast(label_responses as bigint) as label_responses,
    is_simulated,
    is_synthesized,
    has_manifest,
    cast(manifests_landed as bigint) as manifests_landed,
    file_sha256,
    source_file,
    loaded_at
from assembled
