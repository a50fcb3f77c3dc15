{{ config(**story_incremental()) }}
-- docs/METHOD.md §4.2: each story's token set (lowercased, whitespace-split, letters only), computed once per story
-- and kept as one string, ' tok1 tok2 ... ', so "is this token in the story" is a substring search for ' tok '
-- (the same answer as set membership, since tokens hold no spaces) instead of a list built and searched per story.
with

stories as (
    select story_id, story_text
    from {{ changed_only(ref('int_stories_placed')) }}
)

select
    story_id,
    {{ padded_token_text('story_text') }} as story_token_text
from stories
