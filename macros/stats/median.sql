{#- Median of a numeric expression as an aggregate. With an even count it is the mean of the two middle values
    (continuous interpolation), in DuckDB's median() and in the ANSI percentile_cont(0.5) alike. -#}
{% macro lfh_median(expression) -%}
    {{ return(adapter.dispatch('lfh_median')(expression)) }}
{%- endmacro %}

{% macro default__lfh_median(expression) -%}
    percentile_cont(0.5) within group (order by {{ expression }})
{%- endmacro %}

{% macro duckdb__lfh_median(expression) -%}
    median({{ expression }})
{%- endmacro %}
