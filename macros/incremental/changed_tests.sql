{#-
    Data tests of the incremental layer check only the changed stories in an incremental run (docs/INCREMENTAL.md).

    Every generic data test reads the model it tests through get_where_subquery(); this override adds, for a
    story-level incremental model in an incremental run, `story_id in (select story_id from int_stories_changed)`
    (and keeps the test's own `where:` config). The rows of the other stories were tested by the build that wrote
    them: an incremental run deletes and re-inserts whole stories and never touches another story's rows, and a
    build that failed (a test included) leaves no fingerprint, so the next `lfh build` is a full one. Every data
    test on these models is row-wise (not_null_columns, accepted_values, relationships) or keyed by a column that
    holds the story (story_id; response_id and the grains start from the story), so a duplicate or a dangling row
    of a changed story is still found. A full refresh, a plain table (Spark) or any other model tests every row.
-#}

{% macro default__get_where_subquery(relation) -%}
    {%- set where = config.get('where', '') -%}
    {%- set changes = changed_stories_filter(relation) -%}
    {%- set conditions = [] -%}
    {%- if where -%}{%- do conditions.append('(' ~ where ~ ')') -%}{%- endif -%}
    {%- if changes -%}{%- do conditions.append(changes) -%}{%- endif -%}
    {%- if conditions -%}
        {%- do return('(select * from ' ~ relation ~ ' where ' ~ conditions | join(' and ') ~ ') as dbt_subquery') -%}
    {%- else -%}
        {%- do return(relation) -%}
    {%- endif -%}
{%- endmacro %}


{#- the condition that keeps a tested relation's changed stories, or '' when every row must be tested -#}
{% macro changed_stories_filter(relation) -%}
    {%- if not execute or flags.FULL_REFRESH -%}
        {%- do return('') -%}
    {%- endif -%}
    {%- set tested = model.get('attached_node') if model is mapping else none -%}
    {%- set node = graph.nodes.get(tested) if tested else none -%}
    {%- if node is none or node.config.materialized != 'incremental' -%}
        {%- do return('') -%}
    {%- endif -%}
    {%- for candidate in graph.nodes.values()
        if candidate.resource_type == 'model' and candidate.name == 'int_stories_changed' -%}
        {%- set changes = api.Relation.create(database=candidate.database, schema=candidate.schema,
                                               identifier=candidate.alias) -%}
        {%- do return('story_id in (select story_id from ' ~ changes ~ ')') -%}
    {%- endfor -%}
    {%- do return('') -%}
{%- endmacro %}
