{#- Per-class agreement of a classifier with reference labels (docs/METHOD.md §9: the labeler's error, per class).
    precision = true positives / predicted as the class; recall = true positives / reference class; both null
    when their denominator is 0 (undefined, not 0). -#}
{% macro class_share(numerator_expr, denominator_expr) -%}
    case when {{ denominator_expr }} > 0 then cast({{ numerator_expr }} as double) / {{ denominator_expr }} end
{%- endmacro %}

{#- F1, the harmonic mean of precision and recall: 2PR / (P + R); 0 when both are 0; null when either is
    undefined (no prediction of the class, or no reference member of it). -#}
{% macro f1_score(precision_expr, recall_expr) -%}
    case
        when {{ precision_expr }} is null or {{ recall_expr }} is null then null
        when {{ precision_expr }} + {{ recall_expr }} = 0 then 0.0
        else 2.0 * {{ precision_expr }} * {{ recall_expr }} / ({{ precision_expr }} + {{ recall_expr }})
    end
{%- endmacro %}

{#- Macro-F1, an aggregate: the mean F1 over the classes that occur (in the reference or the predictions), an F1
    left undefined by an absent side counting 0 (scikit-learn's f1_score(average='macro', zero_division=0) over
    the labels present). order_expr fixes the order of the floating-point sum, so a rebuild gives the same bits. -#}
{% macro macro_f1(f1_expr, reference_count_expr, predicted_count_expr, order_expr) -%}
    {{ macro_average(f1_expr, reference_count_expr, predicted_count_expr, order_expr) }}
{%- endmacro %}

{#- Macro average of a per-class score (precision, recall, F1), an aggregate: the mean over the classes that occur
    (in the reference or the predictions), an undefined score counting 0, summed in order_expr's order. -#}
{% macro macro_average(score_expr, reference_count_expr, predicted_count_expr, order_expr) -%}
    {{ avg_in_order('coalesce(' ~ score_expr ~ ', 0.0)', order_expr,
                    reference_count_expr ~ ' > 0 or ' ~ predicted_count_expr ~ ' > 0') }}
{%- endmacro %}
