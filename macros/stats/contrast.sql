{#- Contrasts between two models (docs/CONTRASTS.md): the ratio of two independent estimates on the log scale.
    The two models' characters are disjoint samples, so the variances of their log estimates add.

    Variance of the log of a share p = N / D when N is a sum of per-character values x_i in [0, 1] over D
    characters (a race weight p_r(first name), or a 0/1 indicator) and Q = sum of x_i^2: the plug-in variance of
    the mean is (Q / D - p^2) / D, and by the delta method Var(ln p) = that / p^2 = Q / N^2 - 1 / D.
    For whole counts (x in {0, 1}, Q = N) it is 1 / N - 1 / D, the Katz term of katz_log_half_width(): the same
    estimator, here written for fractional counts. Since x^2 <= x, Q <= N and the binomial variance p (1 - p) / D
    (the Wilson and Katz intervals of the per-model marts) is an upper bound of it: those intervals are
    conservative for race, this one is asymptotically exact. Null when N <= 0 or D <= 0; never below 0 (by
    Cauchy-Schwarz Q >= N^2 / D, so only rounding can make it negative). -#}
{% macro log_share_variance(sum_of_squares, numerator, denominator) -%}
    {%- set q = "cast(" ~ sum_of_squares ~ " as double)" -%}
    {%- set n = "cast(" ~ numerator ~ " as double)" -%}
    {%- set d = "cast(" ~ denominator ~ " as double)" -%}
    case when {{ n }} > 0 and {{ d }} > 0
        then greatest(cast(0 as double), {{ q }} / ({{ n }} * {{ n }}) - 1.0 / {{ d }})
    end
{%- endmacro %}

{#- The columns of one contrast from its log ratio L and the variance V of L (the two models' log variances
    added): {prefix}ratio = exp(L), {prefix}ci_lower / {prefix}ci_upper = exp(L -/+ z sqrt(V)), and
    {prefix}p_value, the Altman–Bland p-value of L against 0 from that interval (altman_bland_p_value(), as the
    subordination ratios' p-value; null when V = 0). All null when L or V is null. -#}
{% macro log_contrast_columns(log_ratio, log_variance, prefix='', z=none) -%}
    {%- set zz = "cast(" ~ (z if z is not none else var('wilson_z')) ~ " as double)" -%}
    {%- set half = "(" ~ zz ~ " * sqrt(greatest(cast(0 as double), cast(" ~ log_variance ~ " as double))))" -%}
    {%- set l = "cast(" ~ log_ratio ~ " as double)" -%}
    cast(exp({{ l }}) as double) as {{ prefix }}ratio,
    cast(exp({{ l }} - {{ half }}) as double) as {{ prefix }}ci_lower,
    cast(exp({{ l }} + {{ half }}) as double) as {{ prefix }}ci_upper,
    cast({{ altman_bland_p_value(l, '0', l ~ ' - ' ~ half, l ~ ' + ' ~ half, z) }} as double) as {{ prefix }}p_value
{%- endmacro %}

{#- Variance of ln(a / b) for two independent estimates a, b > 0 with variances Var a, Var b (two models'
    corrected shares): Var(a / b) by delta_ratio_variance() with no covariance, divided by (a / b)^2, i.e.
    Var a / a^2 + Var b / b^2. Null unless both estimates are > 0. -#}
{% macro independent_log_ratio_variance(estimate_a, estimate_b, variance_a, variance_b) -%}
    {%- set a = "cast(" ~ estimate_a ~ " as double)" -%}
    {%- set b = "cast(" ~ estimate_b ~ " as double)" -%}
    case when {{ a }} > 0 and {{ b }} > 0 then
        {{ delta_ratio_variance(a, b, variance_a, variance_b, '0') }} / (({{ a }} / {{ b }}) * ({{ a }} / {{ b }}))
    end
{%- endmacro %}

{#- The log ratio of two independent shares a = N_a / D_a and b = N_b / D_b with the zero-count rule of METHOD.md §6
    on the pair (epsilon, subordination_epsilon() of N_a and N_b, added to N and D of both): ln of
    subordination_ratio() of the four terms. Read by fct_model_contrasts (two models) and fct_model_drift (two
    versions of one model). -#}
{% macro share_pair_log_ratio(n_a, d_a, n_b, d_b, epsilon) -%}
    ln({{ subordination_ratio(n_a, d_a, n_b, d_b, epsilon) }})
{%- endmacro %}

{#- Var(ln(a / b)) of share_pair_log_ratio(): the two shares' log_share_variance() added (disjoint characters), each on
    its epsilon-adjusted N, D and Q. Null unless both denominators are > 0. -#}
{% macro share_pair_log_variance(q_a, n_a, d_a, q_b, n_b, d_b, epsilon) -%}
    case when cast({{ d_a }} as double) > 0 and cast({{ d_b }} as double) > 0 then
        {{ log_share_variance(q_a ~ ' + ' ~ epsilon, n_a ~ ' + ' ~ epsilon, d_a ~ ' + ' ~ epsilon) }}
        + {{ log_share_variance(q_b ~ ' + ' ~ epsilon, n_b ~ ' + ' ~ epsilon, d_b ~ ' + ' ~ epsilon) }}
    end
{%- endmacro %}

{#- Var(ln S) of one subordination ratio S = (N_sub / D_sub) / (N_dom / D_dom) with its epsilon: the log_share_variance()
    of its subordinate and of its dominant share added (disjoint characters). The variance of a contrast of two
    independent S is the sum of theirs. -#}
{% macro subordination_log_variance(q_sub, n_sub, d_sub, q_dom, n_dom, d_dom, epsilon) -%}
    {{ log_share_variance(q_sub ~ ' + ' ~ epsilon, n_sub ~ ' + ' ~ epsilon, d_sub ~ ' + ' ~ epsilon) }}
    + {{ log_share_variance(q_dom ~ ' + ' ~ epsilon, n_dom ~ ' + ' ~ epsilon, d_dom ~ ' + ' ~ epsilon) }}
{%- endmacro %}
