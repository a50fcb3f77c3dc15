{#- Which name a character's race weights come from (docs/RACE_NAMES.md), the one place of the rule: the first
    name when the first-name lexicon has it (docs/METHOD.md §5, the study: a matched first name always wins, the
    surname is then not combined with it); else, when name_source is 'first_then_surname', the surname when the
    surname table has it; else none (left out of race counts). Returns 'first_name' | 'surname' | null. -#}
{% macro race_source_expression(first_matched, surname_matched, name_source) -%}
    {%- if name_source not in race_name_sources() -%}
        {{ exceptions.raise_compiler_error("race_name_source must be one of " ~ race_name_sources()
                                           ~ ", not " ~ name_source) }}
    {%- endif -%}
    case
        when {{ first_matched }} then 'first_name'
        {%- if name_source == 'first_then_surname' %}
        when {{ surname_matched }} then 'surname'
        {%- endif %}
    end
{%- endmacro %}

{#- The weight of one race for a character, given the race source chosen above: the first name's, the
    surname's, or 0 (a character without race carries no weight). -#}
{% macro race_weight_from_source(race_source, first_name_weight, surname_weight) -%}
    cast(case {{ race_source }}
        when 'first_name' then coalesce({{ first_name_weight }}, 0.0)
        when 'surname' then coalesce({{ surname_weight }}, 0.0)
        else 0.0
    end as double)
{%- endmacro %}

{#- The values var race_name_source takes (configs/build_vars.toml checks them too). -#}
{% macro race_name_sources() -%}
    {{ return(['first_name', 'first_then_surname']) }}
{%- endmacro %}
