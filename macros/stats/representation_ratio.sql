{#- Representation ratio (METHOD.md §6): R = p / p*, and its bounds = the share's Wilson bounds / p*. Null when
    p* is 0. Emits the three columns representation_ratio, ci_lower, ci_upper. -#}
{% macro representation_ratio_columns(observed_share, expected_share, share_lower, share_upper) -%}
    cast({{ observed_share }} / nullif({{ expected_share }}, 0) as double) as representation_ratio,
    cast({{ share_lower }} / nullif({{ expected_share }}, 0) as double) as ci_lower,
    cast({{ share_upper }} / nullif({{ expected_share }}, 0) as double) as ci_upper
{%- endmacro %}
