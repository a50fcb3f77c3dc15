{#- Fails on every row whose interval is inverted (lower above upper) or, with min_value / max_value, leaves
    [min_value, max_value] (a share's interval must stay within [0, 1], a ratio's above 0). Out-of-range vars
    (e.g. ppi_lambda = 2) once gave corrected intervals with lower 1.839 > upper 1.0 while every other test passed.
    A row whose bounds are both null (no interval: too few stories) passes; a tolerance of 1e-9 absorbs rounding.
    Written for this project because dbt packages (dbt_utils) cannot be installed here. -#}
{% test valid_interval(model, lower, upper, min_value=none, max_value=none) %}
select
    {{ lower }} as interval_lower,
    {{ upper }} as interval_upper
from {{ model }}
where
    {{ lower }} > {{ upper }} + 1e-9
    {%- if min_value is not none %}
        or {{ lower }} < {{ min_value }} - 1e-9
        or {{ upper }} < {{ min_value }} - 1e-9
    {%- endif %}
    {%- if max_value is not none %}
        or {{ lower }} > {{ max_value }} + 1e-9
        or {{ upper }} > {{ max_value }} + 1e-9
    {%- endif %}
{% endtest %}
