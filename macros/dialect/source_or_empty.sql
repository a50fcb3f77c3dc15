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
