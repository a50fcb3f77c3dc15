{#- dbt's unit-test materialization for Spark, the same steps with the column types read by analysis alone. dbt's
    default (global_project/.../tests/unit.sql) creates a temporary view of the tested SQL to learn its column types,
    describes it, then drops it, and the double comparison (spark_unit_test_sql) described it once more: four
    statements per unit test before the one that checks the rows. Here one statement, spark.sql() of the empty subquery
    (`select * from (...) where false limit 0`) through dbt's own get_column_schema_from_query, gives the same names
    and types from Spark's analyzer: nothing is created, executed or dropped. Everything else is dbt's default:
    the expected rows cast to those types, the comparison statement 'main', and dbt comparing its rows. -#}
{%- materialization unit, adapter='spark' -%}

  {% set relations = [] %}
  {% set sql_header = config.get('sql_header') if flags.REQUIRE_SQL_HEADER_IN_TEST_CONFIGS else none %}

  {% set expected_rows = config.get('expected_rows') %}
  {% set expected_sql = config.get('expected_sql') %}
  {%- set columns_in_query = get_column_schema_from_query(sql, sql_header) -%}
  {% set tested_expected_column_names = expected_rows[0].keys() if (expected_rows | length ) > 0 else columns_in_query | map(attribute='name') | list %}

  {%- set column_name_to_data_types = {} -%}
  {%- set column_name_to_quoted = {} -%}
  {%- for column in columns_in_query -%}
  {%-   do column_name_to_data_types.update({column.name|lower: column.data_type}) -%}
  {%-   do column_name_to_quoted.update({column.name|lower: column.quoted}) -%}
  {%- endfor -%}

  {%- set expected_column_names_quoted = [] -%}
  {%- for column_name in tested_expected_column_names -%}
  {%-   do expected_column_names_quoted.append(column_name_to_quoted[column_name|lower]) -%}
  {%- endfor -%}

  {% if not expected_sql %}
  {%   set expected_sql = get_expected_sql(expected_rows, column_name_to_data_types, column_name_to_quoted) %}
  {% endif %}
  {% set unit_test_sql = laissez_faire.spark_unit_test_sql(sql, expected_sql, expected_column_names_quoted, column_name_to_data_types) %}

  {% call statement('main', fetch_result=True) -%}

    {% if sql_header %}{{ sql_header }}{% endif %}
    {{ unit_test_sql }}

  {%- endcall %}

  {{ return({'relations': relations}) }}

{%- endmaterialization -%}
