{{ config(**story_incremental()) }}
-- docs/METHOD.md §4.1-§4.3: per story, role and reference string, the count summed over the valid responses (every
-- mention counts, as a Counter updated with each response's list would), whether every token of it is in the
-- story (§4.2), and whether it passes the vote: count >= samples received x vote_threshold (§4.3).
with

responses as (
    select story_id, subject_references, object_references
    from {{ changed_only(ref('int_label_responses_parsed')) }}
    where is_selected_run and is_valid
),

story_roles as (
    select story_id, role, samples
    from {{ changed_only(ref('int_story_roles_assigned')) }}
),

story_tokens as (
    select story_id, story_token_text
    from {{ changed_only(ref('int_stories_tokenized')) }}
),

mentions as (
    select story_id, 'subject' as role, {{ unnest_list('subject_references') }} as reference
    from responses
    union all
    select story_id, 'object' as role, {{ unnest_list('object_references') }} as reference
    from responses
    where object_references is not null
),

counted as (
    select story_id, role, reference, cast(count(*) as integer) as reference_count
    from mentions
    where trim(reference) <> ''
    group by story_id, role, reference
),

-- the same reference strings recur across stories ('he', 'she'): normalise each distinct string once
reference_tokens as (
    select reference, {{ letter_tokens('reference') }} as tokens
    from (select distinct reference from counted) as distinct_references
),

-- the story test once per row (is_counted reuses it)
tested as (
    select
        counted.story_id,
        counted.role,
        counted.reference,
        counted.reference_count,
        story_roles.samples,
        coalesce({{ tokens_in_story('reference_tokens.tokens', 'story_tokens.story_token_text') }}, false)
            as in_story
    from counted
    inner join story_roles
        on
            counted.story_id = story_roles.story_id
            and counted.role = story_roles.role
    inner join reference_tokens
        on counted.reference = reference_tokens.reference
    left join story_tokens
        on counted.story_id = story_tokens.story_id
)

select
    story_id,
    role,
    reference,
    reference_count,
    samples,
    in_story,
    in_story and reference_count >= samples * {{ var('vote_threshold') }} as is_counted
from tested
