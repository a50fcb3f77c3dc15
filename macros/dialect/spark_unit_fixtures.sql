{#- dbt unit-test fixtures on Spark. dbt writes a YAML list value (`subject_references: ['she']`) into the SQL as
    Python's repr, which Spark cannot parse, and escapes an apostrophe as \' , which Spark keeps as a backslash
    under spark.sql.parser.escapedStringLiterals. This override of dbt-spark's safe_cast (used only by fixtures)
    writes a list as array(...) and a text holding an apostrophe without escapes (spark_text_literal), so the fixtures stay
    readable YAML on both engines. -#}
{% macro spark__safe_cast(field, type) -%}
    {%- if field is not string and field is iterable and field is not mapping -%}
        {%- set elements = [] -%}
        {%- for element in field -%}
            {%- do elements.append('null' if element is none else (element if element is number else laissez_faire.spark_text_literal(element | string))) -%}
        {%- endfor -%}
        cast(array({{ elements | join(', ') }}) as {{ type }})
    {%- elif field is string and field.startswith("'") and field.endswith("'") and "\\'" in field -%}
        cast({{ laissez_faire.spark_text_literal(field[1:-1].replace("\\'", "'")) }} as {{ type }})
    {%- else -%}
        {%- set field_clean = field.strip('"').strip("'") if (cast_from_string_unsupported_for(type) and field is string) else field -%}
        cast({{ field_clean }} as {{ type }})
    {%- endif -%}
{%- endmacro %}

{#- A text as a Spark literal that needs no escape: single-quoted, or, when it holds an apostrophe, concat() of
    its apostrophe-free pieces and "'" (a backslash is literal under escapedStringLiterals). -#}
{% macro spark_text_literal(text) -%}
    {%- if "'" not in text -%}'{{ text }}'
    {%- else -%}concat({% for piece in text.split("'") %}'{{ piece }}'{{ ", \"'\", " if not loop.last }}{% endfor %})
    {%- endif -%}
{%- endmacro %}
