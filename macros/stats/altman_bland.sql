{#- P-value from a 95% confidence interval (Altman & Bland 2011; docs/METHOD.md §6):
    SE = (U - L) / (2 z), z_stat = |estimate - null_value| / SE, p = exp(-0.717 z_stat - 0.416 z_stat^2).
    The two coefficients belong to the published approximation, not to this project. Null when the interval
    has no width (no data). For a ratio on the log scale pass ln(estimate), 0 and the log-scale bounds. -#}
{% macro altman_bland_p_value(estimate, null_value, lower, upper, z=none) -%}
    {%- set zz = "cast(" ~ (z if z is not none else var('wilson_z')) ~ " as double)" -%}
    {%- set standard_error = "((cast(" ~ upper ~ " as double) - cast(" ~ lower ~ " as double)) / (2.0 * " ~ zz ~ "))" -%}
    {%- set z_stat = "(abs(cast(" ~ estimate ~ " as double) - cast(" ~ null_value ~ " as double)) / " ~ standard_error ~ ")" -%}
    case when {{ standard_error }} > 0
        then exp(-0.717 * {{ z_stat }} - 0.416 * {{ z_stat }} * {{ z_stat }})
    end
{%- endmacro %}
