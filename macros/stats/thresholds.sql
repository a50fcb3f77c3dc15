{#- For the median racialized subordination ratio (docs/METHOD.md §6): the largest whole threshold t such that
    weight > t / 100, compared in double precision exactly as the definition reads, so a character counts in
    N(t) for every t <= this value. floor(100 * weight) can be one off through rounding (0.07 * 100 =
    7.000000000000001), hence the two explicit comparisons. weight = 0 gives -1 (below every threshold). -#}
{% macro highest_threshold_below(weight) -%}
    {%- set w = "cast(" ~ weight ~ " as double)" -%}
    {%- set base = "floor(" ~ w ~ " * 100.0)" -%}
    cast(case
        when {{ w }} > ({{ base }} + 1) / cast(100 as double) then {{ base }} + 1
        when {{ w }} > {{ base }} / cast(100 as double) then {{ base }}
        else {{ base }} - 1
    end as integer)
{%- endmacro %}
