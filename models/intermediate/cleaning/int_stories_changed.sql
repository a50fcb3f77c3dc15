-- The stories the incremental layer rebuilds in this run (issue 12): every story on a full build; otherwise those
-- that are new or got rows loaded since the last build (a new labeling run may change which run counts). A story's
-- version is the last load of its story row or any of its label responses; int_stories_built holds the versions
-- built last time. It is read by name, not ref(): it is written at the END of the build, after every model that
-- reads this one, so this table always compares against the previous, completed build.
{%- set built = adapter.get_relation(database=this.database, schema=this.schema, identifier='int_stories_built') %}
with

story_loads as (
    select story_id, loaded_at
    from {{ source('raw', 'stories') }}
),

response_loads as (
    select story_id, loaded_at
    from {{ source('raw', 'label_responses') }}
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
{%- if built is not none and not flags.FULL_REFRESH %}
left join {{ built }} as built
    on versions.story_id = built.story_id
where built.story_id is null
    or versions.last_loaded_at is distinct from built.last_loaded_at
{%- endif %}
