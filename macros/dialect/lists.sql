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

{#- Spark versions. Spark's size(null) is -1 (legacy sizeOfNull): array_size keeps DuckDB's null. -#}
{% macro spark__split_on_whitespace(text_expr) -%}
    filter(split(coalesce({{ text_expr }}, ''), '[\s\p{Z}]+'), piece -> piece <> '')
{%- endmacro %}
{% macro spark__list_contains_all(haystack_expr, needles_expr) -%}
    (size(array_except(filter({{ needles_expr }}, needle -> needle is not null), {{ haystack_expr }})) = 0)
{%- endmacro %}
{% macro spark__list_contains_any(haystack_expr, needles_expr) -%}
    (size(array_intersect(filter({{ haystack_expr }}, element -> element is not null), {{ needles_expr }})) > 0)
{%- endmacro %}
{% macro spark__list_contains(list_expr, element_expr) -%}
    array_contains({{ list_expr }}, {{ element_expr }})
{%- endmacro %}
{% macro spark__list_element(list_expr, position) -%}
    element_at({{ list_expr }}, {{ position }})
{%- endmacro %}
{% macro spark__list_length(list_expr) -%}
    array_size({{ list_expr }})
{%- endmacro %}
{% macro spark__list_map(list_expr, lambda_expr) -%}
    transform({{ list_expr }}, {{ lambda_expr }})
{%- endmacro %}
{% macro spark__list_keep(list_expr, lambda_expr) -%}
    filter({{ list_expr }}, {{ lambda_expr }})
{%- endmacro %}
{% macro spark__list_join(list_expr, separator) -%}
    array_join({{ list_expr }}, {{ separator }})
{%- endmacro %}
{% macro spark__last_position(text_expr, needle) -%}
    (case when instr({{ text_expr }}, {{ needle }}) = 0 then 0
          else length({{ text_expr }}) - instr(reverse({{ text_expr }}), reverse({{ needle }})) - length({{ needle }}) + 2 end)
{%- endmacro %}
{% macro spark__list_all_true(list_expr) -%}
    coalesce(forall({{ list_expr }}, element -> coalesce(element, true)), true)
{%- endmacro %}
{% macro spark__text_contains(text_expr, needle_expr) -%}
    contains({{ text_expr }}, {{ needle_expr }})
{%- endmacro %}
{% macro spark__text_starts_with(text_expr, prefix_expr) -%}
    startswith({{ text_expr }}, {{ prefix_expr }})
{%- endmacro %}

{#- 1-based position of the first occurrence of a substring (0 when absent). -#}
{% macro text_position(text_expr, needle_expr) -%}
    {{ return(adapter.dispatch('text_position', 'laissez_faire')(text_expr, needle_expr)) }}
{%- endmacro %}
{% macro default__text_position(text_expr, needle_expr) -%}
    strpos({{ text_expr }}, {{ needle_expr }})
{%- endmacro %}
{% macro spark__text_position(text_expr, needle_expr) -%}
    instr({{ text_expr }}, {{ needle_expr }})
{%- endmacro %}

{#- The distinct elements of a list, nulls removed (DuckDB's list_distinct drops nulls; Spark's array_distinct keeps one). -#}
{% macro list_distinct(list_expr) -%}
    {{ return(adapter.dispatch('list_distinct', 'laissez_faire')(list_expr)) }}
{%- endmacro %}
{% macro default__list_distinct(list_expr) -%}
    list_distinct({{ list_expr }})
{%- endmacro %}
{% macro spark__list_distinct(list_expr) -%}
    array_distinct(filter({{ list_expr }}, element -> element is not null))
{%- endmacro %}

{#- The type of a list of strings (casts, source_or_empty column types). -#}
{% macro type_text_list() -%}
    {{ return(adapter.dispatch('type_text_list', 'laissez_faire')()) }}
{%- endmacro %}
{% macro default__type_text_list() -%}
    varchar[]
{%- endmacro %}
{% macro spark__type_text_list() -%}
    array<string>
{%- endmacro %}

{#- An empty list of strings. -#}
{% macro empty_text_list() -%}
    {{ return(adapter.dispatch('empty_text_list', 'laissez_faire')()) }}
{%- endmacro %}
{% macro default__empty_text_list() -%}
    cast([] as varchar[])
{%- endmacro %}
{% macro spark__empty_text_list() -%}
    cast(array() as array<string>)
{%- endmacro %}

{#- One row per element of a list, as a select-list item: `select id, {{ unnest_list('tokens') }} as token from t`.
    A null or empty list gives no rows on both engines. -#}
{% macro unnest_list(list_expr) -%}
    {{ return(adapter.dispatch('unnest_list', 'laissez_faire')(list_expr)) }}
{%- endmacro %}
{% macro default__unnest_list(list_expr) -%}
    unnest({{ list_expr }})
{%- endmacro %}
{% macro spark__unnest_list(list_expr) -%}
    explode({{ list_expr }})
{%- endmacro %}

{#- Aggregate: the distinct non-null values, sorted, joined with a separator (null when there are none). -#}
{% macro agg_sorted_distinct_join(expr, separator) -%}
    {{ return(adapter.dispatch('agg_sorted_distinct_join', 'laissez_faire')(expr, separator)) }}
{%- endmacro %}
{#- DuckDB: the distinct values gathered by hashing and each group's short list sorted, rather than an ordered
    string_agg, for which DuckDB sorts the rows of every group: about a third of the time on story-level groups. -#}
{% macro default__agg_sorted_distinct_join(expr, separator) -%}
    case when count({{ expr }}) > 0
        then array_to_string(list_sort(list(distinct {{ expr }}) filter (where {{ expr }} is not null)), {{ separator }})
    end
{%- endmacro %}
{% macro spark__agg_sorted_distinct_join(expr, separator) -%}
    case when count({{ expr }}) > 0 then array_join(array_sort(collect_set({{ expr }})), {{ separator }}) end
{%- endmacro %}

{#- Aggregate: the mean of the non-null values of the rows meeting a condition, summed in the order of order_expr
    (a fixed order of the floating-point sum gives the same bits on every rebuild and engine); null when none.
    DuckDB has ordered aggregates; Spark has none, so its version sums the sorted list of (order, value) pairs. -#}
{% macro avg_in_order(value_expr, order_expr, condition_expr='true') -%}
    {{ return(adapter.dispatch('avg_in_order', 'laissez_faire')(value_expr, order_expr, condition_expr)) }}
{%- endmacro %}
{% macro default__avg_in_order(value_expr, order_expr, condition_expr) -%}
    avg(cast({{ value_expr }} as double) order by {{ order_expr }}) filter (where {{ condition_expr }})
{%- endmacro %}
{% macro spark__avg_in_order(value_expr, order_expr, condition_expr) -%}
    aggregate(
        array_sort(collect_list(case when ({{ condition_expr }}) and ({{ value_expr }}) is not null
            then named_struct('k', {{ order_expr }}, 'v', cast({{ value_expr }} as double)) end)),
        named_struct('total', cast(0 as double), 'n', 0),
        (acc, item) -> named_struct('total', acc.total + item.v, 'n', acc.n + 1),
        acc -> case when acc.n > 0 then acc.total / acc.n end
    )
{%- endmacro %}

{#- sha256 of a text as lowercase hex. -#}
{% macro sha256_hex(text_expr) -%}
    {{ return(adapter.dispatch('sha256_hex', 'laissez_faire')(text_expr)) }}
{%- endmacro %}
{% macro default__sha256_hex(text_expr) -%}
    sha256({{ text_expr }})
{%- endmacro %}
{% macro spark__sha256_hex(text_expr) -%}
    sha2({{ text_expr }}, 256)
{%- endmacro %}

{#- Trim the given characters (a SQL string expression) from both ends, or only the left. DuckDB's trim(x, chars)
    and Spark's trim(chars, x) take their arguments in opposite orders: the standard form works on Spark. -#}
{% macro trim_characters(text_expr, characters_expr, side='both') -%}
    {{ return(adapter.dispatch('trim_characters', 'laissez_faire')(text_expr, characters_expr, side)) }}
{%- endmacro %}
{% macro default__trim_characters(text_expr, characters_expr, side) -%}
    {%- if side == 'left' -%}ltrim({{ text_expr }}, {{ characters_expr }}){%- else -%}trim({{ text_expr }}, {{ characters_expr }}){%- endif -%}
{%- endmacro %}
{% macro spark__trim_characters(text_expr, characters_expr, side) -%}
    trim({{ 'leading' if side == 'left' else 'both' }} {{ characters_expr }} from {{ text_expr }})
{%- endmacro %}

{#- Split a text on every match of a regular expression (a SQL string literal); empty pieces are kept. -#}
{% macro split_regex(text_expr, pattern) -%}
    {{ return(adapter.dispatch('split_regex', 'laissez_faire')(text_expr, pattern)) }}
{%- endmacro %}
{% macro default__split_regex(text_expr, pattern) -%}
    string_split_regex({{ text_expr }}, {{ pattern }})
{%- endmacro %}
{% macro spark__split_regex(text_expr, pattern) -%}
    split({{ text_expr }}, {{ pattern }})
{%- endmacro %}

{#- Aggregate: the values as a list (for a list of non-null values; Spark's collect_list drops nulls). -#}
{% macro agg_list(expr) -%}
    {{ return(adapter.dispatch('agg_list', 'laissez_faire')(expr)) }}
{%- endmacro %}
{% macro default__agg_list(expr) -%}
    list({{ expr }})
{%- endmacro %}
{% macro spark__agg_list(expr) -%}
    collect_list({{ expr }})
{%- endmacro %}
