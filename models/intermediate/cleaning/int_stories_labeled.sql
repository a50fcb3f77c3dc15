{{ config(**story_incremental()) }}
-- One row per story: what its labeling run returned (docs/METHOD.md §4.1). samples_received is the vote denominator
-- of §4.3 (responses received, valid or not); a story with responses but none valid is a labeling failure.
with

stories as (
    select story_id
    from {{ changed_only(ref('int_stories_placed')) }}
),

responses as (
    select
        story_id, labeler_model, prompt_version, sample_index, is_valid, is_recovered, reject_reason,
        key_source, subject_role_text, object_role_text
    from {{ changed_only(ref('int_label_responses_parsed')) }}
    where is_selected_run
),

per_story as (
    select
        story_id,
        min(labeler_model) as labeler_model,
        min(prompt_version) as prompt_version,
        cast(count(*) as integer) as samples_received,
        cast(count(*) filter (where is_valid) as integer) as valid_responses,
        cast(count(*) filter (where not is_valid) as integer) as rejected_responses,
        cast(count(*) filter (where is_valid and is_recovered) as integer) as recovered_responses,
        -- the role keys of the earliest sample (a run asks every sample the same request)
        min_by(key_source, sample_index) as key_source,
        min_by(subject_role_text, sample_index) as subject_role_text,
        min_by(object_role_text, sample_index) as object_role_text,
        {{ agg_sorted_distinct_join('reject_reason', "', '") }} as reject_reasons
    from responses
    group by story_id
)

select
    stories.story_id,
    per_story.labeler_model,
    per_story.prompt_version,
    coalesce(per_story.samples_received, 0) as samples_received,
    coalesce(per_story.valid_responses, 0) as valid_responses,
    coalesce(per_story.rejected_responses, 0) as rejected_responses,
    coalesce(per_story.recovered_responses, 0) as recovered_responses,
    per_story.key_source,
    per_story.subject_role_text,
    per_story.object_role_text,
    per_story.reject_reasons,
    coalesce(per_story.valid_responses, 0) > 0 as is_labeled,
    coalesce(per_story.samples_received, 0) > 0 and coalesce(per_story.valid_responses, 0) = 0 as labeling_failure
from stories
left join per_story
    on stories.story_id = per_story.story_id
