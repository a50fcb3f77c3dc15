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

-- the tests that depend on the name alone run once per distinct name, the role text's tokens once per distinct
-- role text; only the story test (in_story) and the role test join them per row
distinct_names as (
    select distinct name
    from per_name
),

name_tokens as (
    select
        distinct_names.name,
        {{ letter_tokens('distinct_names.name') }} as name_tokens,
        known_non_names.non_name is not null as is_known_non_name
    from distinct_names
    left join known_non_names
        on lower(distinct_names.name) = known_non_names.non_name
),

role_texts as (
    select distinct role_text
    from story_roles
),

role_tokens as (
    select
        role_text,
        {{ letter_tokens('role_text') }} as role_tokens
    from role_texts
),

flagged as (
    select
        per_name.story_id,
        per_name.role,
        per_name.name,
        per_name.samples_naming,
        per_name.first_sample,
        lower(per_name.name) = 'unspecified' as is_unspecified,
        coalesce({{ tokens_in_story('name_tokens.name_tokens', 'story_tokens.story_token_text') }}, false)
            as in_story,
        coalesce({{ list_contains_any('name_tokens.name_tokens', 'role_tokens.role_tokens') }}, false)
            as shares_role_token,
        {{ list_contains('name_tokens.name_tokens', "'american'") }} as has_american_token,
        name_tokens.is_known_non_name
    from per_name
    inner join name_tokens
        on per_name.name = name_tokens.name
    inner join story_roles
        on
            per_name.story_id = story_roles.story_id
            and per_name.role = story_roles.role
    left join role_tokens
        on story_roles.role_text = role_tokens.role_text
    left join story_tokens
        on per_name.story_id = story_tokens.story_id
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
