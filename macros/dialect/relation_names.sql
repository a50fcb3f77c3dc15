{#- How the project's SQL names a relation. DuckDB names a file's catalog after the file ("lfh" for lfh.duckdb) and
    keeps a view's SQL as written: a view naming "lfh"."raw"."stories" stops reading once the file is copied, moved or
    renamed (its catalog is then "experiment", or any other name). So on DuckDB every ref() and source() renders
    schema.name only, which DuckDB binds inside the view's own catalog, whatever the file is called; other engines
    keep dbt's full name. docs/SERVING.md ("Copying a warehouse") says what this guarantees. -#}
{% macro ref() -%}
    {{ return(relation_in_sql(builtins.ref(*varargs, **kwargs))) }}
{%- endmacro %}

{% macro source() -%}
    {{ return(relation_in_sql(builtins.source(*varargs, **kwargs))) }}
{%- endmacro %}

{% macro relation_in_sql(relation) -%}
    {{ return(adapter.dispatch('relation_in_sql', 'laissez_faire')(relation)) }}
{%- endmacro %}

{% macro default__relation_in_sql(relation) -%}
    {{ return(relation) }}
{%- endmacro %}

{% macro duckdb__relation_in_sql(relation) -%}
    {{ return(relation.include(database=false)) }}
{%- endmacro %}
