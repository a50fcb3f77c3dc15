-- The stories the incremental layer rebuilds in this run (docs/INCREMENTAL.md): every story on a full build;
-- otherwise those that are new or got rows loaded since the last complete build (a new labeling run may change
-- which run counts).
-- A story's version is the last load of its story row or any of its label responses. What the last complete build
-- held is not a model: `lfh build` writes it (meta.stories_built, meta.loads_built) with the fingerprint after the
-- build succeeded (ingest/lfh/build/state.py), and this model reads it as the source build_state. A build run
-- outside `lfh build` leaves it unchanged, so the next one rebuilds a superset of the changed stories: still exact.
-- Only stories with a row from a load that build did not see (loads_built: load ids, not clock times) can have
-- a new version, so the versions are computed for those stories alone, not for the whole corpus.
-- Reads raw.stories and raw.label_responses directly (allowed in tests/test_layers.py): the versions are the raw
-- rows' load times, before staging's parsing.
{%- set stories_built = source('build_state', 'stories_built') %}  {#- unconditional: records the lineage #}
{%- set loads_built = source('build_state', 'loads_built') %}
{%- set built = build_state_relation(stories_built) %}
{%- set incremental = built is not none and not flags.FULL_REFRESH %}
{%- set by_load = incremental and build_state_relation(loads_built) is not none %}
with

{% if by_load -%}
loads as (
    select distinct load_id from {{ source('raw', 'stories') }}
    union
    select distinct load_id from {{ source('raw', 'label_responses') }}
),

new_loads as (
    select loads.load_id
    from loads
    left join {{ loads_built }} as seen
        on loads.load_id = seen.load_id
    where seen.load_id is null
),

touched as (
    select story_id from {{ source('raw', 'stories') }}
    where load_id in (select new_loads.load_id from new_loads)
    union
    select story_id from {{ source('raw', 'label_responses') }}
    where load_id in (select new_loads.load_id from new_loads)
),

{% endif -%}
story_loads as (
    select story_id, loaded_at
    from {{ source('raw', 'stories') }}
    {%- if by_load %}
    where story_id in (select touched.story_id from touched)
    {%- endif %}
),

response_loads as (
    select story_id, loaded_at
    from {{ source('raw', 'label_responses') }}
    {%- if by_load %}
    where story_id in (select touched.story_id from touched)
    {%- endif %}
),

versions as (
    select story_id, max(loaded_at) as last_loaded_at
    from (
        select story_id, loaded_at from story_loads
        union all
        select story_id, loaded_at from response_loads
    ) as loads
    group by story_id
)

select versions.story_id, versions.last_loaded_at
from versions
{%- if incremental %}
left join {{ stories_built }} as built
    on versions.story_id = built.story_id
where built.story_id is null
    or versions.last_loaded_at is distinct from built.last_loaded_at
{%- endif %}
