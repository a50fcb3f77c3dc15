{#- The relation the correction models read their units from: int_correction_units_counted, or the relation var
    correction_units_relation names (same columns). The checks that hide hand labels (bench/correction_check.py)
    compile the models with that var and give them a masked copy of int_correction_units_counted under that name;
    a build leaves it unset. -#}
{% macro correction_units() -%}
    {%- set counted = ref('int_correction_units_counted') -%}
    {{- var('correction_units_relation', none) or counted -}}
{%- endmacro %}
