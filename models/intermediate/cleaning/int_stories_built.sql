-- depends_on: {{ ref('dim_stories') }}
-- depends_on: {{ ref('fct_characters') }}
-- depends_on: {{ ref('int_references_voted') }}
-- The version (last load) of every story the incremental layer holds, written after the story-level models so a
-- build that stops half way is rebuilt in full next time (lfh build also clears its fingerprint first).
{{ config(**story_incremental()) }}

select story_id, last_loaded_at
from {{ ref('int_stories_changed') }}
