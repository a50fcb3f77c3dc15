{#- JSON pieces behind adapter.dispatch: another engine adds `<adapter>__json_*` beside these. -#}

{% macro json_is_valid(text_expr) -%}
    {{ return(adapter.dispatch('json_is_valid', 'laissez_faire')(text_expr)) }}
{%- endmacro %}
{% macro default__json_is_valid(text_expr) -%}
    coalesce(json_valid({{ text_expr }}), false)
{%- endmacro %}

{#- 'OBJECT', 'ARRAY', 'VARCHAR', 'BIGINT', 'DOUBLE', 'BOOLEAN', 'NULL' for the value at a key (null when absent). -#}
{% macro json_type_at(json_expr, key_expr=none) -%}
    {{ return(adapter.dispatch('json_type_at', 'laissez_faire')(json_expr, key_expr)) }}
{%- endmacro %}
{% macro default__json_type_at(json_expr, key_expr) -%}
    {%- if key_expr is none -%}json_type({{ json_expr }}){%- else -%}json_type({{ json_expr }}, {{ laissez_faire.json_key_path(key_expr) }}){%- endif -%}
{%- endmacro %}

{#- The object's top-level keys, in document order, as a list of strings. -#}
{% macro json_object_keys(json_expr) -%}
    {{ return(adapter.dispatch('json_object_keys', 'laissez_faire')(json_expr)) }}
{%- endmacro %}
{% macro default__json_object_keys(json_expr) -%}
    json_keys({{ json_expr }})
{%- endmacro %}

{#- A JSON path for one top-level key given as a SQL expression (keys may hold spaces or quotes). -#}
{% macro json_key_path(key_expr) -%}
    {{ return(adapter.dispatch('json_key_path', 'laissez_faire')(key_expr)) }}
{%- endmacro %}
{% macro default__json_key_path(key_expr) -%}
    ('$."' || replace({{ key_expr }}, '"', '\"') || '"')
{%- endmacro %}

{#- The scalar at a top-level key as text (null when absent or JSON null). -#}
{% macro json_text_at(json_expr, key_expr) -%}
    {{ return(adapter.dispatch('json_text_at', 'laissez_faire')(json_expr, key_expr)) }}
{%- endmacro %}
{% macro default__json_text_at(json_expr, key_expr) -%}
    json_extract_string({{ json_expr }}, {{ laissez_faire.json_key_path(key_expr) }})
{%- endmacro %}

{#- The elements of the array at a top-level key, each as text (JSON nulls removed). -#}
{% macro json_text_list_at(json_expr, key_expr) -%}
    {{ return(adapter.dispatch('json_text_list_at', 'laissez_faire')(json_expr, key_expr)) }}
{%- endmacro %}
{% macro default__json_text_list_at(json_expr, key_expr) -%}
    list_filter(json_transform(json_extract({{ json_expr }}, {{ laissez_faire.json_key_path(key_expr) }}), '["VARCHAR"]'), element -> element is not null)
{%- endmacro %}

{#- A JSON object (text known to be a valid object with unique keys) as a map key -> JSON value: parsed once,
    then read by key without parsing the whole object again. -#}
{% macro json_object_as_map(json_expr) -%}
    {{ return(adapter.dispatch('json_object_as_map', 'laissez_faire')(json_expr)) }}
{%- endmacro %}
{% macro default__json_object_as_map(json_expr) -%}
    from_json({{ json_expr }}, '"MAP(VARCHAR, JSON)"')
{%- endmacro %}

{% macro map_value(map_expr, key_expr) -%}
    {{ return(adapter.dispatch('map_value', 'laissez_faire')(map_expr, key_expr)) }}
{%- endmacro %}
{% macro default__map_value(map_expr, key_expr) -%}
    {{ map_expr }}[{{ key_expr }}]
{%- endmacro %}

{#- A JSON value's text when it is a string (null otherwise). -#}
{% macro json_value_string(value_expr) -%}
    {{ return(adapter.dispatch('json_value_string', 'laissez_faire')(value_expr)) }}
{%- endmacro %}
{% macro default__json_value_string(value_expr) -%}
    case when json_type({{ value_expr }}) = 'VARCHAR' then json_extract_string({{ value_expr }}, '$') end
{%- endmacro %}

{#- A JSON array's elements as text, JSON nulls removed. -#}
{% macro json_value_text_list(value_expr) -%}
    {{ return(adapter.dispatch('json_value_text_list', 'laissez_faire')(value_expr)) }}
{%- endmacro %}
{% macro default__json_value_text_list(value_expr) -%}
    list_filter(json_transform({{ value_expr }}, '["VARCHAR"]'), element -> element is not null)
{%- endmacro %}

{#- Spark versions, on the VARIANT type (parse once, read by path). Values travel as JSON text, as on DuckDB, so
    json_type_at works on a whole response and on a value read from its map alike. The type names are DuckDB's. -#}
{#- Spark's parse_json reads the first JSON value and ignores what follows ('{...} and {...}' parses), DuckDB's
    json_valid wants the whole text to be one value. Wrapped as '{"v":' || x || '}' the parser must see the end of
    x followed by '}', and exactly one key rules out 'x' = '1, "w": 2'; wrapped as '[' || x || ']' it must see
    ']' there, which rules out 'x' = '1} trailing {'. Both hold only when x is exactly one value. -#}
{% macro spark__json_is_valid(text_expr) -%}
    coalesce(
        try_parse_json({{ text_expr }}) is not null
        and size(json_object_keys('{"v":' || {{ text_expr }} || '}')) = 1
        and try_parse_json('{"v":' || {{ text_expr }} || '}') is not null
        and try_parse_json('[' || {{ text_expr }} || ']') is not null,
        false)
{%- endmacro %}

{% macro spark_variant_type_name(variant_expr) -%}
    case
        when {{ variant_expr }} is null then null
        when schema_of_variant({{ variant_expr }}) like 'OBJECT%' then 'OBJECT'
        when schema_of_variant({{ variant_expr }}) like 'ARRAY%' then 'ARRAY'
        when schema_of_variant({{ variant_expr }}) = 'STRING' then 'VARCHAR'
        when schema_of_variant({{ variant_expr }}) = 'VOID' then 'NULL'
        when schema_of_variant({{ variant_expr }}) = 'BOOLEAN' then 'BOOLEAN'
        when schema_of_variant({{ variant_expr }}) = 'BIGINT' then 'BIGINT'
        else 'DOUBLE'
    end
{%- endmacro %}

{% macro spark__json_type_at(json_expr, key_expr) -%}
    {%- if key_expr is none -%}
        {{ laissez_faire.spark_variant_type_name('try_parse_json(' ~ json_expr ~ ')') }}
    {%- else -%}
        {{ laissez_faire.spark_variant_type_name('try_variant_get(try_parse_json(' ~ json_expr ~ '), ' ~ laissez_faire.json_key_path(key_expr) ~ ', \'variant\')') }}
    {%- endif -%}
{%- endmacro %}

{% macro spark__json_object_keys(json_expr) -%}
    json_object_keys({{ json_expr }})
{%- endmacro %}

{% macro spark__json_key_path(key_expr) -%}
    ('$["' || replace({{ key_expr }}, '"', '\"') || '"]')
{%- endmacro %}

{% macro spark__json_text_at(json_expr, key_expr) -%}
    {{ laissez_faire.spark__json_value_string('to_json(try_variant_get(try_parse_json(' ~ json_expr ~ '), ' ~ laissez_faire.json_key_path(key_expr) ~ ', \'variant\'))') }}
{%- endmacro %}

{% macro spark__json_text_list_at(json_expr, key_expr) -%}
    {{ laissez_faire.spark__json_value_text_list('to_json(try_variant_get(try_parse_json(' ~ json_expr ~ '), ' ~ laissez_faire.json_key_path(key_expr) ~ ', \'variant\'))') }}
{%- endmacro %}

{% macro spark__json_object_as_map(json_expr) -%}
    transform_values(cast(parse_json({{ json_expr }}) as map<string, variant>), (json_key, json_value) -> to_json(json_value))
{%- endmacro %}

{% macro spark__map_value(map_expr, key_expr) -%}
    element_at({{ map_expr }}, {{ key_expr }})
{%- endmacro %}

{% macro spark__json_value_string(value_expr) -%}
    case when schema_of_variant(try_parse_json({{ value_expr }})) = 'STRING' then cast(try_parse_json({{ value_expr }}) as string) end
{%- endmacro %}

{% macro spark__json_value_text_list(value_expr) -%}
    filter(cast(try_parse_json({{ value_expr }}) as array<string>), element -> element is not null)
{%- endmacro %}
