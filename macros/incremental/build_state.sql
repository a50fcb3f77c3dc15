{#- The table of the source build_state (what the last complete `lfh build` built: ingest/lfh/build/state.py), or
    none where there is none: a warehouse `lfh build` never built, a parse, or Spark, whose story-level models are
    full tables every time (story_incremental), so there is nothing to compare against. -#}
{% macro build_state_relation(source_relation) -%}
    {{- return(adapter.dispatch('build_state_relation', 'laissez_faire')(source_relation)) -}}
{%- endmacro %}

{% macro default__build_state_relation(source_relation) -%}
    {%- if not execute -%}{{- return(none) -}}{%- endif -%}
    {{- return(load_relation(source_relation)) -}}
{%- endmacro %}

{% macro spark__build_state_relation(source_relation) -%}
    {{- return(none) -}}
{%- endmacro %}
