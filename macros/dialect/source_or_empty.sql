{#- Select the named columns of a source table; a column the table lacks comes back as a typed null, and a
    table that does not exist yet (e.g. no `lfh lexicon` run, no hand labels) gives zero typed rows, so the
    project builds on whatever has been loaded. `columns` is a list of (name, type) pairs. -#}
{% macro source_or_empty(source_name, table_name, columns) -%}
    {{ return(adapter.dispatch('source_or_empty', 'laissez_faire')(source_name, table_name, columns)) }}
{%- endmacro %}

{% macro default__source_or_empty(source_name, table_name, columns) -%}
    {%- set source_relation = source(source_name, table_name) -%}
    {%- set existing = none -%}
    {%- if execute -%}
        {%- set existing = adapter.get_relation(database=source_relation.database, schema=source_relation.schema,
                                                identifier=source_relation.identifier) -%}
    {%- endif -%}
    {%- if existing is not none -%}
        {%- set present = adapter.get_columns_in_relation(existing) | map(attribute='name') | map('lower') | list -%}
        select
        {%- for column_name, column_type in columns %}
            {% if column_name | lower in present -%}
                cast({{ adapter.quote(column_name) }} as {{ column_type }})
            {%- else -%}
                cast(null as {{ column_type }})
            {%- endif %} as {{ column_name }}{{ "," if not loop.last }}
        {%- endfor %}
        from {{ source_relation }}
    {%- else -%}
        select
        {%- for column_name, column_type in columns %}
            cast(null as {{ column_type }}) as {{ column_name }}{{ "," if not loop.last }}
        {%- endfor %}
        where false /* {{ source_relation }} not loaded yet */
    {%- endif -%}
{%- endmacro %}

{#- One column of a source table as `column_type`, or a typed null when the table lacks it (a warehouse landed
    before the column existed): for models that read a source directly (e.g. with its row locator) yet need a
    column that older raw tables do not have. -#}
{% macro source_column_or_null(source_name, table_name, column_name, column_type) -%}
    {%- set source_relation = source(source_name, table_name) -%}
    {%- set present = [] -%}
    {%- if execute -%}
        {%- set existing = adapter.get_relation(database=source_relation.database, schema=source_relation.schema,
                                                identifier=source_relation.identifier) -%}
        {%- if existing is not none -%}
            {%- set present = adapter.get_columns_in_relation(existing) | map(attribute='name') | map('lower') | list -%}
        {%- endif -%}
    {%- endif -%}
    {%- if column_name | lower in present -%}
        cast({{ adapter.quote(column_name) }} as {{ column_type }})
    {%- else -%}
        cast(null as {{ column_type }})
    {%- endif -%}
{%- endmacro %}
