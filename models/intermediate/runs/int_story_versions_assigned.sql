-- Each story's run and model version (docs/RUNS.md): the version is the model string the endpoint reported for the
-- response, else the configured model id, else the model name (int_stories_placed.model, aliases resolved), so a
-- warehouse whose files report nothing has exactly one version per model and every measure stays as it was.
with

stories as (
    select story_id, model, loaded_at
    from {{ ref('int_stories_placed') }}
),

given as (
    select story_id, run_id, run_id_synthesized, model_id, model_version_reported, system_fingerprint, is_simulated
    from {{ ref('stg_stories') }}
)

select
    stories.story_id,
    stories.model,
    coalesce(given.model_version_reported, given.model_id, stories.model) as model_version,
    given.run_id,
    given.run_id_synthesized,
    given.model_id,
    given.model_version_reported,
    given.system_fingerprint,
    given.is_simulated,
    stories.loaded_at
from stories
inner join given
    on stories.story_id = given.story_id
