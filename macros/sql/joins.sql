{#- The condition that joins two relations on the same keys: `left.k = right.k` for each of keys, and
    `left.k is not distinct from right.k` for each of nullable_keys (a null race or gender, condition or baseline
    marks a group, so null must match null there). Written once because the group keys of the measures (measure,
    domain, condition, race, gender, model) are joined in many places. -#}
{% macro keys_match(left, right, keys, nullable_keys=[]) -%}
    {%- set conditions = [] -%}
    {%- for key in keys -%}
        {%- do conditions.append(left ~ '.' ~ key ~ ' = ' ~ right ~ '.' ~ key) -%}
    {%- endfor -%}
    {%- for key in nullable_keys -%}
        {%- do conditions.append(left ~ '.' ~ key ~ ' is not distinct from ' ~ right ~ '.' ~ key) -%}
    {%- endfor -%}
    {{ conditions | join('\n        and ') }}
{%- endmacro %}
