{{ config(**story_incremental()) }}
-- docs/METHOD.md §4.5: every distinct name a character was given by the valid responses, with how many samples gave
-- it, the earliest sample, and each filter: not in the story (same token test as references; var
-- drop_hallucinated_names), shares a token with the role text, contains the token 'american', a known non-name
-- (seeds/known_non_names.csv). Tokens are compared after the §4.2 normalisation on both sides.
with

responses as (
    select story_id, sample_index, subject_name, object_name
    from {{ changed_only(ref('int_label_responses_parsed')) }}
    where is_selected_run and is_valid
),

story_roles as (
    select story_id, role, role_text
    from {{ changed_only(ref('int_story_roles_assigned')) }}
),

story_tokens as (
    select story_id, story_token_text
    from {{ changed_only(ref('int_stories_tokenized')) }}
),

known_non_names as (
    select distinct lower(trim(non_name)) as non_name
    from {{ ref('known_non_names') }}
),

given_names as (
    select story_id, 'subject' as role, sample_index, trim(subject_name) as name
    from responses
    union all
    select story_id, 'object' as role, sample_index, trim(object_name) as name
    from responses
),

per_name as (
    select
        story_id,
        role,
        name,
        cast(count(distinct sample_index) as integer) as samples_naming,
        min(sample_index) as first_sample
    from given_names
    where name is not null and name <> ''
    group by story_id, role, name
),

tokenized as (
    select
        per_name.*,
        {{ letter_tokens('per_name.name') }} as name_tokens
    from per_name
),

flagged as (
    select
        per_name.story_id,
        per_name.role,
        per_name.name,
        per_name.samples_naming,
        per_name.first_sample,
        lower(per_name.name) = 'unspecified' as is_unspecified,
        coalesce({{ tokens_in_story('per_name.name_tokens', 'story_tokens.story_token_text') }}, false) as in_story,
        coalesce({{ list_contains_any('per_name.name_tokens', letter_tokens('story_roles.role_text')) }}, false)
            as shares_role_token,
        {{ list_contains('per_name.name_tokens', "'american'") }} as has_american_token,
        known_non_names.non_name is not null as is_known_non_name
    from tokenized as per_name
    inner join story_roles
        on
            per_name.story_id = story_roles.story_id
            and per_name.role = story_roles.role
    left join story_tokens
        on per_name.story_id = story_tokens.story_id
    left join known_non_names
        on lower(per_name.name) = known_non_names.non_name
)

select
    story_id,
    role,
    name,
    samples_naming,
    first_sample,
    is_unspecified,
    in_story,
    shares_role_token,
    has_american_token,
    is_known_non_name,
    is_unspecified
    or not (
        ({{ 'not in_story or' if var('drop_hallucinated_names') else '' }} false)
        or shares_role_token
        or has_american_token
        or is_known_non_name
    ) as is_kept
from flagged
