-- depends_on: {{ ref('int_stories_built') }}
-- The loads (load_id of raw.stories and raw.label_responses) whose rows the incremental layer holds, written last,
-- after int_stories_built: the next build's int_stories_changed looks for changed stories among the rows of the
-- other loads only. A build that stops before this leaves no fingerprint, so the next one is full.
select load_id from {{ source('raw', 'stories') }}
union
select load_id from {{ source('raw', 'label_responses') }}
