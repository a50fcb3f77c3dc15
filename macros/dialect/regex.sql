{#- Regular expressions behind adapter.dispatch (RE2 syntax on DuckDB). -#}

{% macro regex_replace_all(text_expr, pattern, replacement) -%}
    {{ return(adapter.dispatch('regex_replace_all', 'laissez_faire')(text_expr, pattern, replacement)) }}
{%- endmacro %}
{% macro default__regex_replace_all(text_expr, pattern, replacement) -%}
    regexp_replace({{ text_expr }}, {{ pattern }}, {{ replacement }}, 'g')
{%- endmacro %}

{#- Every match of a capture group, in order. -#}
{% macro regex_extract_all(text_expr, pattern, group=1) -%}
    {{ return(adapter.dispatch('regex_extract_all', 'laissez_faire')(text_expr, pattern, group)) }}
{%- endmacro %}
{% macro default__regex_extract_all(text_expr, pattern, group) -%}
    regexp_extract_all({{ text_expr }}, {{ pattern }}, {{ group }})
{%- endmacro %}

{% macro strip_accents(text_expr) -%}
    {{ return(adapter.dispatch('strip_accents', 'laissez_faire')(text_expr)) }}
{%- endmacro %}
{% macro default__strip_accents(text_expr) -%}
    strip_accents({{ text_expr }})
{%- endmacro %}

{#- The first match of the whole pattern ('' when none). -#}
{% macro regex_extract(text_expr, pattern) -%}
    {{ return(adapter.dispatch('regex_extract', 'laissez_faire')(text_expr, pattern)) }}
{%- endmacro %}
{% macro default__regex_extract(text_expr, pattern) -%}
    regexp_extract({{ text_expr }}, {{ pattern }})
{%- endmacro %}
