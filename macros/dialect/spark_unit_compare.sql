{#- dbt unit tests on Spark compare doubles to 13 significant digits. dbt compares a unit test's actual and expected
    rows exactly, and the expected values are written as DuckDB computes them; Spark's exp, ln and pow (Java's
    StrictMath) can differ from DuckDB's (the C library's) in the last digit, so an exact double would fail on one
    engine or the other with no error in the formula. The Spark unit tests' comparison (Spark only) formats
    every double column of both sides (cast to double: a fixture may give a decimal) with '%.12e' before the
    comparison; integers, text and lists stay exact, and DuckDB keeps dbt's exact comparison. It takes the place
    of dbt's get_unit_test_sql in the project's Spark unit-test materialization (spark_unit_test.sql), which passes
    the column types it has just read, so no statement runs here. -#}
{% macro spark_unit_test_sql(main_sql, expected_fixture_sql, expected_column_names, column_types) -%}
    {%- set doubles = [] -%}
    {%- for name, data_type in column_types.items() if data_type in ['double', 'float'] -%}
        {%- do doubles.append(name | lower) -%}
    {%- endfor -%}
    {%- set compared = [] -%}
    {%- for quoted in expected_column_names -%}
        {%- if quoted.strip('`').lower() in doubles -%}
            {%- do compared.append("format_string('%.12e', cast(" ~ quoted ~ " as double)) as " ~ quoted) -%}
        {%- else -%}
            {%- do compared.append(quoted) -%}
        {%- endif -%}
    {%- endfor %}
with dbt_internal_unit_test_actual as (
    select {{ compared | join(', ') }}, 'actual' as `actual_or_expected`
    from ({{ main_sql }}) as _dbt_internal_unit_test_actual
),

dbt_internal_unit_test_expected as (
    select {{ compared | join(', ') }}, 'expected' as `actual_or_expected`
    from ({{ expected_fixture_sql }}) as _dbt_internal_unit_test_expected
)

select * from dbt_internal_unit_test_actual
union all
select * from dbt_internal_unit_test_expected
{%- endmacro %}
