{#- Fails on every row whose sample is finite and non-empty (`where_sample`, a SQL condition on the row, e.g.
    `denominator > 0`) but whose interval [column, upper] is missing or has no width (upper <= lower). An interval
    of width 0 from a finite sample claims a certainty no sample gives (docs/CORRECTION.md, "The
    interval"): a share of 0 in 40 characters is not a proof of absence. Applied to the lower bound column, with
    the upper bound's column as `upper`. -#}
{% test interval_has_width(model, column_name, upper, where_sample) %}
select
    {{ column_name }} as interval_lower,
    {{ upper }} as interval_upper
from {{ model }}
where ({{ where_sample }})
    and ({{ column_name }} is null or {{ upper }} is null or {{ upper }} <= {{ column_name }})
{% endtest %}
