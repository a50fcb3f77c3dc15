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

{#- Spark versions (Java regex; the profile sets spark.sql.parser.escapedStringLiterals so a backslash in a pattern
    literal reaches the regex engine as written, like on DuckDB). Spark's regexp_replace replaces every match and
    takes no flags (a 'g' there would be read as a position and give null); its regexp_extract takes group 1 by
    default, DuckDB's the whole match. -#}
{% macro spark__regex_replace_all(text_expr, pattern, replacement) -%}
    regexp_replace({{ text_expr }}, {{ pattern }}, {{ replacement }})
{%- endmacro %}
{% macro spark__regex_extract_all(text_expr, pattern, group) -%}
    regexp_extract_all({{ text_expr }}, {{ pattern }}, {{ group }})
{%- endmacro %}
{% macro spark__regex_extract(text_expr, pattern) -%}
    regexp_extract({{ text_expr }}, {{ pattern }}, 0)
{%- endmacro %}

{#- Spark has no strip_accents: DuckDB's, as a character map (macros/dialect/accent_fold.sql, generated from DuckDB
    by ingest/lfh/build/accent_fold.py; tests/test_spark.py checks both engines fold the lexicon's names identically). -#}
{% macro spark__strip_accents(text_expr) -%}
    translate({{ text_expr }}, {{ laissez_faire.accent_fold_from() }}, {{ laissez_faire.accent_fold_to() }})
{%- endmacro %}
