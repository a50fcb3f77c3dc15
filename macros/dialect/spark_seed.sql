{#- dbt-spark's seed loader (session method) puts values into the INSERT unescaped, so a value with an apostrophe
    ("the study's ...") breaks the statement. This override writes each value as a literal that needs no escape
    (a backslash needs none either, since the
    profile sets spark.sql.parser.escapedStringLiterals; spark_text_literal in spark_unit_fixtures.sql). -#}
{% macro spark__load_csv_rows(model, agate_table) %}
  {%- set column_override = model['config'].get('column_types', {}) -%}
  {%- set statements = [] -%}
  {%- for chunk in agate_table.rows | batch(get_batch_size()) -%}
    {%- set sql -%}
      insert into {{ this.render() }} values
      {% for row in chunk -%}
        ({%- for col_name in agate_table.column_names -%}
          {%- set type = column_override.get(col_name, adapter.convert_type(agate_table, loop.index0)) -%}
          {%- set value = row[loop.index0] -%}
          cast({{ laissez_faire.spark_seed_literal(value) }} as {{ type }})
          {%- if not loop.last %},{% endif -%}
        {%- endfor -%})
        {%- if not loop.last %},{% endif %}
      {% endfor %}
    {%- endset -%}
    {%- do adapter.add_query(sql, abridge_sql_log=True) -%}
    {%- if loop.index0 == 0 -%}{%- do statements.append(sql) -%}{%- endif -%}
  {%- endfor -%}
  {{ return(statements[0] if statements else '') }}
{% endmacro %}

{% macro spark_seed_literal(value) -%}
  {%- if value is none -%}null
  {%- elif value is sameas true -%}true
  {%- elif value is sameas false -%}false
  {%- elif value is number -%}{{ value }}
  {%- else -%}{{ laissez_faire.spark_text_literal(value | string) }}
  {%- endif -%}
{%- endmacro %}
