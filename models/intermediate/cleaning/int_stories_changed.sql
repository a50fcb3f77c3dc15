-- The stories the incremental layer rebuilds in this run (issue 12): every story on a full build; otherwise those
-- that are new or got rows loaded since the last build (a new labeling run may change which run counts). A story's
-- version is the last load of its story row or any of its label responses; int_stories_built holds the versions
-- built last time. It is read by name, not ref(): it is written at the END of the build, after every model that
-- reads this one, so this table always compares against the previous, completed build.
-- Only stories with a row from a load that build did not see (int_loads_built: load ids, not clock times) can have
-- a new version, so the versions are computed for those stories alone, not for the whole corpus.
{%- set built = adapter.get_relation(database=this.database, schema=this.schema, identifier='int_stories_built') %}
{%- set loads_built = adapter.get_relation(database=this.database, schema=this.schema, identifier='int_loads_built') %}
{%- set incremental = built is not none and not flags.FULL_REFRESH %}
{%- set by_load = incremental and loads_built is not none %}
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
left join {{ built }} as built
    on versions.story_id = built.story_id
where built.story_id is null
    or versions.last_loaded_at is distinct from built.last_loaded_at
{%- endif %}
