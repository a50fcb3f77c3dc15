{# Custom schemas are used as given (staging, intermediate, marts, reference), not prefixed with the target schema:
   users and BI tools query marts.fct_... directly. #}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {%- if custom_schema_name is none -%}{{ target.schema }}{%- else -%}{{ custom_schema_name | trim }}{%- endif -%}
{%- endmacro %}
