{#- List and string pieces behind adapter.dispatch (DuckDB names by default). -#}

{#- Split on runs of whitespace, dropping empty pieces: '  a  b ' -> ['a', 'b']. -#}
{% macro split_on_whitespace(text_expr) -%}
    {{ return(adapter.dispatch('split_on_whitespace', 'laissez_faire')(text_expr)) }}
{%- endmacro %}
{% macro default__split_on_whitespace(text_expr) -%}
    list_filter(string_split_regex(coalesce({{ text_expr }}, ''), '[\s\p{Z}]+'), piece -> piece <> '')
{%- endmacro %}

{% macro list_contains_all(haystack_expr, needles_expr) -%}
    {{ return(adapter.dispatch('list_contains_all', 'laissez_faire')(haystack_expr, needles_expr)) }}
{%- endmacro %}
{% macro default__list_contains_all(haystack_expr, needles_expr) -%}
    list_has_all({{ haystack_expr }}, {{ needles_expr }})
{%- endmacro %}

{% macro list_contains_any(haystack_expr, needles_expr) -%}
    {{ return(adapter.dispatch('list_contains_any', 'laissez_faire')(haystack_expr, needles_expr)) }}
{%- endmacro %}
{% macro default__list_contains_any(haystack_expr, needles_expr) -%}
    list_has_any({{ haystack_expr }}, {{ needles_expr }})
{%- endmacro %}

{% macro list_contains(list_expr, element_expr) -%}
    {{ return(adapter.dispatch('list_contains', 'laissez_faire')(list_expr, element_expr)) }}
{%- endmacro %}
{% macro default__list_contains(list_expr, element_expr) -%}
    list_contains({{ list_expr }}, {{ element_expr }})
{%- endmacro %}

{#- 1-based element; null past the end. -#}
{% macro list_element(list_expr, position) -%}
    {{ return(adapter.dispatch('list_element', 'laissez_faire')(list_expr, position)) }}
{%- endmacro %}
{% macro default__list_element(list_expr, position) -%}
    list_extract({{ list_expr }}, {{ position }})
{%- endmacro %}

{% macro list_length(list_expr) -%}
    {{ return(adapter.dispatch('list_length', 'laissez_faire')(list_expr)) }}
{%- endmacro %}
{% macro default__list_length(list_expr) -%}
    len({{ list_expr }})
{%- endmacro %}

{#- Apply a one-argument lambda, written as `x -> ...` in DuckDB syntax, to every element. -#}
{% macro list_map(list_expr, lambda_expr) -%}
    {{ return(adapter.dispatch('list_map', 'laissez_faire')(list_expr, lambda_expr)) }}
{%- endmacro %}
{% macro default__list_map(list_expr, lambda_expr) -%}
    list_transform({{ list_expr }}, {{ lambda_expr }})
{%- endmacro %}

{% macro list_keep(list_expr, lambda_expr) -%}
    {{ return(adapter.dispatch('list_keep', 'laissez_faire')(list_expr, lambda_expr)) }}
{%- endmacro %}
{% macro default__list_keep(list_expr, lambda_expr) -%}
    list_filter({{ list_expr }}, {{ lambda_expr }})
{%- endmacro %}

{#- Join a list of strings with a separator. -#}
{% macro list_join(list_expr, separator) -%}
    {{ return(adapter.dispatch('list_join', 'laissez_faire')(list_expr, separator)) }}
{%- endmacro %}
{% macro default__list_join(list_expr, separator) -%}
    array_to_string({{ list_expr }}, {{ separator }})
{%- endmacro %}

{#- Position of the last occurrence of a substring (0 when absent). -#}
{% macro last_position(text_expr, needle) -%}
    {{ return(adapter.dispatch('last_position', 'laissez_faire')(text_expr, needle)) }}
{%- endmacro %}
{% macro default__last_position(text_expr, needle) -%}
    (case when strpos({{ text_expr }}, {{ needle }}) = 0 then 0
          else length({{ text_expr }}) - strpos(reverse({{ text_expr }}), reverse({{ needle }})) - length({{ needle }}) + 2 end)
{%- endmacro %}

{#- True when every element is true (true for an empty list: a vacuous all()). -#}
{% macro list_all_true(list_expr) -%}
    {{ return(adapter.dispatch('list_all_true', 'laissez_faire')(list_expr)) }}
{%- endmacro %}
{% macro default__list_all_true(list_expr) -%}
    coalesce(list_bool_and({{ list_expr }}), true)
{%- endmacro %}

{% macro text_contains(text_expr, needle_expr) -%}
    {{ return(adapter.dispatch('text_contains', 'laissez_faire')(text_expr, needle_expr)) }}
{%- endmacro %}
{% macro default__text_contains(text_expr, needle_expr) -%}
    contains({{ text_expr }}, {{ needle_expr }})
{%- endmacro %}

{% macro text_starts_with(text_expr, prefix_expr) -%}
    {{ return(adapter.dispatch('text_starts_with', 'laissez_faire')(text_expr, prefix_expr)) }}
{%- endmacro %}
{% macro default__text_starts_with(text_expr, prefix_expr) -%}
    starts_with({{ text_expr }}, {{ prefix_expr }})
{%- endmacro %}
