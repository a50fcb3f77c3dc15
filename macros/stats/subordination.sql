{#- The subordination ratio's zero-count rule (docs/METHOD.md §6):
    N_sub = N_dom = 0             -> S = 1, and the Katz interval uses epsilon = 1;
    N_sub < 1 or N_dom < 1        -> epsilon = min(1, max(N_sub, N_dom)) is added to all four terms;
    otherwise                     -> epsilon = 0.
    Null when either denominator is 0: with no characters in one of the roles there is nothing to compare. -#}

{% macro subordination_epsilon(n_sub, n_dom) -%}
    case
        when cast({{ n_sub }} as double) = 0 and cast({{ n_dom }} as double) = 0 then cast(1 as double)
        when cast({{ n_sub }} as double) < 1 or cast({{ n_dom }} as double) < 1
            then least(cast(1 as double), greatest(cast({{ n_sub }} as double), cast({{ n_dom }} as double)))
        else cast(0 as double)
    end
{%- endmacro %}

{% macro subordination_ratio(n_sub, d_sub, n_dom, d_dom, epsilon) -%}
    case
        when cast({{ d_sub }} as double) = 0 or cast({{ d_dom }} as double) = 0 then cast(null as double)
        when cast({{ n_sub }} as double) = 0 and cast({{ n_dom }} as double) = 0 then cast(1 as double)
        else ((cast({{ n_sub }} as double) + {{ epsilon }}) / (cast({{ d_sub }} as double) + {{ epsilon }}))
           / ((cast({{ n_dom }} as double) + {{ epsilon }}) / (cast({{ d_dom }} as double) + {{ epsilon }}))
    end
{%- endmacro %}

{#- Katz log interval half-width: z * sqrt(1/N_sub - 1/D_sub + 1/N_dom - 1/D_dom) on the epsilon-adjusted terms. -#}
{% macro katz_log_half_width(n_sub, d_sub, n_dom, d_dom, epsilon, z=none) -%}
    {%- set zz = "cast(" ~ (z if z is not none else var('wilson_z')) ~ " as double)" -%}
    case
        when cast({{ d_sub }} as double) = 0 or cast({{ d_dom }} as double) = 0 then cast(null as double)
        else {{ zz }} * sqrt(
            1.0 / (cast({{ n_sub }} as double) + {{ epsilon }}) - 1.0 / (cast({{ d_sub }} as double) + {{ epsilon }})
          + 1.0 / (cast({{ n_dom }} as double) + {{ epsilon }}) - 1.0 / (cast({{ d_dom }} as double) + {{ epsilon }}))
    end
{%- endmacro %}
