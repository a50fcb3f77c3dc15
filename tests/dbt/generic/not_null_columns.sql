{#- Fails once for each listed column that holds a null, giving how many of its rows do: the not_null test of every
    listed column in one scan of the model. One test node per model instead of one per column: dbt's own work for
    a test node (compiling, running and recording it) costs about 40-50 ms of CPU whatever the rows, and with a
    not_null node per column a build of 300 stories spent about half its CPU on data-test nodes (docs/SCALE.md). -#}
{% test not_null_columns(model, columns) %}
with null_counts as (
    select
    {%- for column in columns %}
        sum(case when {{ column }} is null then 1 else 0 end) as nulls_{{ loop.index }}{{ "," if not loop.last }}
    {%- endfor %}
    from {{ model }}
)

{% for column in columns -%}
select
    '{{ column }}' as column_name,
    nulls_{{ loop.index }} as null_rows
from null_counts
where nulls_{{ loop.index }} > 0
{% if not loop.last %}union all
{% endif -%}
{%- endfor %}
{% endtest %}
