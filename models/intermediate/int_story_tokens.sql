-- METHOD.md §4.2: each story's token set (lowercased, whitespace-split, letters only), computed once per story.
with

stories as (
    select story_id, story_text
    from {{ ref('stg_stories') }}
)

select
    story_id,
    list_sort(list_distinct({{ letter_tokens("story_text") }})) as story_tokens
from stories
