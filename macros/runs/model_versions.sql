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

{#- The stories whose model version the measures use (int_model_versions_ranked.is_selected): a subquery of story
    ids, for `where story_id in (...)` in every model that counts characters or couples for a measure. With one
    version per model it holds every story. -#}
{% macro selected_version_story_ids() -%}
    select assigned.story_id
    from {{ ref('int_story_versions_assigned') }} as assigned
    inner join {{ ref('int_model_versions_ranked') }} as versions
        on
            assigned.model = versions.model
            and assigned.model_version = versions.model_version
    where versions.is_selected
{%- endmacro %}
