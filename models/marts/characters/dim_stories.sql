{{ config(**story_incremental()) }}
-- One row per story: where it sits in the design, and what its labeling returned (docs/METHOD.md §1, §4.1).
with

stories as (
    select
        story_id, model, domain, prompt_condition, prompt_id, placement, query, story_text, is_empty_text,
        prompt_prefix_stripped, source_file, is_simulated
    from {{ changed_only(ref('int_stories_placed')) }}
),

labeling as (
    select
        story_id, labeler_model, prompt_version, samples_received, valid_responses, rejected_responses,
        recovered_responses, reject_reasons, key_source, is_labeled, labeling_failure
    from {{ changed_only(ref('int_stories_labeled')) }}
)

select
    cast(stories.story_id as string) as story_id,
    cast(stories.model as string) as model,
    cast(stories.domain as string) as domain,
    cast(stories.prompt_condition as string) as prompt_condition,
    cast(stories.prompt_id as string) as prompt_id,
    cast(stories.query as string) as query,
    cast(stories.story_text as string) as story_text,
    cast(stories.source_file as string) as source_file,
    cast(labeling.labeler_model as string) as labeler_model,
    cast(labeling.samples_received as integer) as samples_received,
    cast(labeling.valid_responses as integer) as valid_responses,
    cast(labeling.rejected_responses as integer) as rejected_responses,
    cast(labeling.is_labeled as boolean) as is_labeled,
    cast(labeling.labeling_failure as boolean) as labeling_failure,
    cast(labeling.prompt_version as string) as prompt_version,
    cast(labeling.recovered_responses as integer) as recovered_responses,
    cast(labeling.reject_reasons as string) as reject_reasons,
    cast(labeling.key_source as string) as key_source,
    cast(stories.placement as string) as placement,
    cast(stories.is_empty_text as boolean) as is_empty_text,
    cast(stories.prompt_prefix_stripped as boolean) as prompt_prefix_stripped,
    cast(stories.is_simulated as boolean) as is_simulated
from stories
inner join labeling
    on stories.story_id = labeling.story_id
