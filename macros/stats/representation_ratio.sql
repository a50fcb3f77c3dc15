{#- Representation ratio (docs/METHOD.md §6): R = p / p*, and its bounds = the share's Wilson bounds / p*. Null when
    p* is 0. With its test: the Altman–Bland p-value of p against p* from the share's Wilson bounds. Emits the
    four columns representation_ratio, ci_lower, ci_upper, p_value (every representation measure tests the same
    way, so the four are written once). -#}
{% macro representation_ratio_columns(observed_share, expected_share, share_lower, share_upper) -%}
    cast({{ observed_share }} / nullif({{ expected_share }}, 0) as double) as representation_ratio,
    cast({{ share_lower }} / nullif({{ expected_share }}, 0) as double) as ci_lower,
    cast({{ share_upper }} / nullif({{ expected_share }}, 0) as double) as ci_upper,
    cast({{ laissez_faire.altman_bland_p_value(observed_share, expected_share, share_lower, share_upper) }} as double)
        as p_value
{%- endmacro %}

{#- The corrected columns of the representation marts (docs/METHOD.md §9, docs/CORRECTION.md): the hand-label count
    and the corrected share with its interval as given, and the corrected ratio = corrected share / p* with bounds
    = share bounds / p* (the same mapping as above; p* is a fixed constant, so the ratio interval keeps the
    share interval's coverage). Emits hand_labeled_n, corrected_share, corrected_share_ci_lower,
    corrected_share_ci_upper, corrected_ratio, corrected_ci_lower, corrected_ci_upper, correction_source. -#}
{% macro corrected_ratio_columns(hand_labeled_n, corrected_share, share_lower, share_upper, expected_share,
                                 correction_source) -%}
    cast({{ hand_labeled_n }} as bigint) as hand_labeled_n,
    cast({{ corrected_share }} as double) as corrected_share,
    cast({{ share_lower }} as double) as corrected_share_ci_lower,
    cast({{ share_upper }} as double) as corrected_share_ci_upper,
    cast({{ corrected_share }} / nullif({{ expected_share }}, 0) as double) as corrected_ratio,
    cast({{ share_lower }} / nullif({{ expected_share }}, 0) as double) as corrected_ci_lower,
    cast({{ share_upper }} / nullif({{ expected_share }}, 0) as double) as corrected_ci_upper,
    cast({{ correction_source }} as string) as correction_source
{%- endmacro %}
