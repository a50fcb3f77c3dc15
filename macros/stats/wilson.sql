{#- Wilson score interval for a share N / D (docs/METHOD.md §6). N may be fractional (race counts are sums of
    p_r(x)). Null when D = 0. Clamped to [0, 1] so that N = 0 gives exactly 0 and N = D exactly 1 despite
    rounding in the difference of two nearly equal terms. z defaults to var('wilson_z'). -#}

{% macro wilson_center_and_half_width(numerator, denominator, z) -%}
    {%- set n = "cast(" ~ numerator ~ " as double)" -%}
    {%- set d = "cast(" ~ denominator ~ " as double)" -%}
    {%- set zz = "cast(" ~ z ~ " as double)" -%}
    {%- set center = "((" ~ n ~ " / " ~ d ~ ") + " ~ zz ~ " * " ~ zz ~ " / (2.0 * " ~ d ~ "))" -%}
    {%- set half = zz ~ " * sqrt((" ~ n ~ " / " ~ d ~ ") * (1.0 - " ~ n ~ " / " ~ d ~ ") / " ~ d
        ~ " + " ~ zz ~ " * " ~ zz ~ " / (4.0 * " ~ d ~ " * " ~ d ~ "))" -%}
    {%- set scale = "(1.0 + " ~ zz ~ " * " ~ zz ~ " / " ~ d ~ ")" -%}
    {{ return({'center': center, 'half': half, 'scale': scale, 'denominator': d}) }}
{%- endmacro %}

{% macro wilson_lower(numerator, denominator, z=none) -%}
    {%- set parts = wilson_center_and_half_width(numerator, denominator, z if z is not none else var('wilson_z')) -%}
    case when {{ parts.denominator }} > 0
        then greatest(cast(0 as double), ({{ parts.center }} - {{ parts.half }}) / {{ parts.scale }})
    end
{%- endmacro %}

{% macro wilson_upper(numerator, denominator, z=none) -%}
    {%- set parts = wilson_center_and_half_width(numerator, denominator, z if z is not none else var('wilson_z')) -%}
    case when {{ parts.denominator }} > 0
        then least(cast(1 as double), ({{ parts.center }} + {{ parts.half }}) / {{ parts.scale }})
    end
{%- endmacro %}

{#- The observed share N / D with its Wilson bounds, as the three columns every share-based measure reports:
    {prefix}observed_share (null when D = 0), {prefix}share_ci_lower, {prefix}share_ci_upper. -#}
{% macro share_with_interval(numerator, denominator, prefix='') -%}
    case when {{ denominator }} > 0 then cast({{ numerator }} as double) / cast({{ denominator }} as double) end
        as {{ prefix }}observed_share,
    {{ wilson_lower(numerator, denominator) }} as {{ prefix }}share_ci_lower,
    {{ wilson_upper(numerator, denominator) }} as {{ prefix }}share_ci_upper
{%- endmacro %}
