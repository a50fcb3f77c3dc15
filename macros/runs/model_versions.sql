{#- Which versions of a model its measures use (docs/RUNS.md), from var model_version_selected (a mapping model ->
    a version name, or 'pooled' for every version together): 'latest' for the latest version of a model the var
    does not name, 'chosen' for the version the var names, 'pooled' for every version of a model the var pools,
    'not used' otherwise. A SQL expression over the model, its version and whether the version is the latest. -#}
{% macro model_version_selection(model_expr, version_expr, is_latest_expr) -%}
    {%- set chosen = var('model_version_selected', {}) or {} -%}
    case
    {%- for model_name, version_name in chosen.items() %}
        when {{ model_expr }} = '{{ model_name | replace("'", "''") }}' then
            {%- if version_name == 'pooled' %} 'pooled'
            {%- else %} case when {{ version_expr }} = '{{ version_name | replace("'", "''") }}' then 'chosen' else 'not used' end
            {%- endif %}
    {%- endfor %}
        when {{ is_latest_expr }} then 'latest'
        else 'not used'
    end
{%- endmacro %}

{#- True for a story whose model version the measures use: not among the stories of int_story_versions_set_aside
    (versions var model_version_selected leaves out). For `where` in every model that counts characters or couples
    for a measure; with one version per model nothing is set aside. Written as `not exists` over the set-aside
    stories, so a unit test gives that input as no rows, and a null story id (a unit-test fixture) is kept on both
    engines (Spark's `null not in (empty subquery)` drops the row). The set-aside id is renamed so that an
    unqualified `story_id_expr` can only mean the outer row's story. -#}
{% macro in_selected_versions(story_id_expr) -%}
    not exists (
        select 1
        from (select story_id as set_aside_story_id from {{ ref('int_story_versions_set_aside') }}) as set_aside
        where set_aside.set_aside_story_id = {{ story_id_expr }}
    )
{%- endmacro %}
