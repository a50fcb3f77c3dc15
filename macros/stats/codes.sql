{#- The codes the measures are defined over (docs/CONTRACTS.md, docs/METHOD.md §5–6), kept in one place. -#}

{% macro measure_race_codes() -%}
    {{ return(['aian', 'asian', 'black', 'latine', 'mena', 'nhpi', 'white', 'multiracial']) }}
{%- endmacro %}

{#- Genders that enter the gender denominators (§4.4: unspecified and unsure leave them). -#}
{% macro measure_gender_codes() -%}
    {{ return(['female', 'male', 'nonbinary']) }}
{%- endmacro %}

{#- Genders of the median racialized subordination ratio (§6: Female, Male). -#}
{% macro racialized_gender_codes() -%}
    {{ return(['female', 'male']) }}
{%- endmacro %}

{#- Races that are computed but not reported (§5: "multiracial is computed, not reported"). Their rows stay in
    the marts with their p-values, but they are not members of any Benjamini–Hochberg family (q_value null). -#}
{% macro unreported_race_codes() -%}
    {{ return(var('unreported_races', ['multiracial'])) }}
{%- endmacro %}

{#- A one-column relation of codes, as a union of literal selects (portable; no VALUES-list dialect quirks). -#}
{% macro codes_relation(codes, column_name) -%}
    {%- for code in codes %}
    select cast('{{ code }}' as string) as {{ column_name }}{% if not loop.last %} union all{% endif %}
    {%- endfor %}
{%- endmacro %}

{#- SQL list literal of codes for an in (...) filter. -#}
{% macro sql_in_list(codes) -%}
    ({%- for code in codes -%}'{{ code }}'{%- if not loop.last -%}, {% endif -%}{%- endfor -%})
{%- endmacro %}

{#- The weight column of fct_characters for one race code. -#}
{% macro race_weight_column(race_code) -%}
    weight_{{ race_code }}
{%- endmacro %}

{#- The couple types of docs/METHOD.md §6 (sexual orientation): every unordered pair of two measure genders, written
    first_second with first <= second, as int_couples_typed builds them (female_female, female_male, ...). -#}
{% macro couple_type_codes() -%}
    {%- set types = [] -%}
    {%- for first in measure_gender_codes() -%}
        {%- for second in measure_gender_codes() -%}
            {%- if first <= second -%}{%- do types.append(first ~ '_' ~ second) -%}{%- endif -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ return(types) }}
{%- endmacro %}

{#- A row's p-value as a member of its Benjamini–Hochberg family: the p-value when the row's race is reported (or
    the row has no race: a gender row), else null, so that unreported races (unreported_race_codes) keep their
    p-value but get no q-value. -#}
{% macro reported_race_p_value(p_value, race='race') -%}
    case when {{ race }} is null or {{ race }} not in {{ laissez_faire.sql_in_list(laissez_faire.unreported_race_codes()) }} then {{ p_value }} end
{%- endmacro %}
