-- One row per model and version (docs/RUNS.md), ordered in time and marked with the version the measures use.
-- A version's time is the latest of its runs' times (a recorded run: its finished_at, else started_at; a run
-- without a manifest in raw.runs: when its stories were loaded). version_number 1 is the oldest; ties are broken by
-- the version's name. is_selected: under var model_version_selected a model may name the version its measures use
-- or 'pooled' (every version together); otherwise its latest version. With one version per model every version is
-- selected, so the measures marts are those of all stories.
with

story_versions as (
    select story_id, model, model_version, run_id, loaded_at
    from {{ ref('int_story_versions_assigned') }}
),

runs as (
    select run_id, coalesce(finished_at, started_at) as run_at
    from {{ ref('stg_runs') }}
),

per_run as (
    select
        story_versions.model,
        story_versions.model_version,
        story_versions.run_id,
        cast(count(*) as bigint) as stories,
        coalesce(max(runs.run_at), max(story_versions.loaded_at)) as run_at
    from story_versions
    left join runs
        on story_versions.run_id = runs.run_id
    group by story_versions.model, story_versions.model_version, story_versions.run_id
),

per_version as (
    select
        model,
        model_version,
        cast(sum(stories) as bigint) as stories,
        cast(count(*) as bigint) as runs,
        min(run_at) as first_run_at,
        max(run_at) as version_at
    from per_run
    group by model, model_version
),

ranked as (
    select
        *,
        cast(row_number() over (partition by model order by version_at, model_version) as integer)
            as version_number,
        cast(count(*) over (partition by model) as integer) as versions_of_model
    from per_version
)

select
    model,
    model_version,
    version_number,
    versions_of_model,
    version_number = versions_of_model as is_latest,
    {{ model_version_selection('model', 'model_version', 'version_number = versions_of_model') }} as selection,
    {{ model_version_selection('model', 'model_version', 'version_number = versions_of_model') }} <> 'not used'
        as is_selected,
    stories,
    runs,
    first_run_at,
    version_at
from ranked
