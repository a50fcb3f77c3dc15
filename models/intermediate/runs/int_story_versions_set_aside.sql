-- The stories whose model version the measures do not use (int_model_versions_ranked.is_selected false: an older
-- version of a model, unless var model_version_selected names it or pools the model). Empty while every model has
-- one version. Macro in_selected_versions() leaves these stories out of every count-based measure.
with

story_versions as (
    select story_id, model, model_version
    from {{ ref('int_story_versions_assigned') }}
),

versions as (
    select model, model_version, is_selected
    from {{ ref('int_model_versions_ranked') }}
)

select
    story_versions.story_id,
    story_versions.model,
    story_versions.model_version
from story_versions
inner join versions
    on
        story_versions.model = versions.model
        and story_versions.model_version = versions.model_version
where not versions.is_selected
