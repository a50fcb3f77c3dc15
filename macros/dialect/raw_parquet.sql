{#- The raw layer as landed Parquet files (`lfh ingest --parquet-dir DIR`, `lfh lexicon --parquet-dir DIR`): one folder
    per raw table, DIR/<table>/*.parquet. Run as the on-run-start hook: when the var `raw_parquet_dir` names DIR,
    every table folder listed in `raw_parquet_tables` (`lfh build` lists the folders it finds) becomes
    raw.<table> over those files, so the sources read them on either engine. Without the var the hook does
    nothing (DuckDB's raw tables are then the ones `lfh ingest` wrote into the warehouse). -#}
{% macro register_raw_parquet() -%}
    {%- set directory = var('raw_parquet_dir', none) -%}
    {%- if directory and execute -%}
        {%- set tables = var('raw_parquet_tables', []) -%}
        {%- set schema = source('raw', 'stories').schema -%}
        {{ return(adapter.dispatch('register_raw_parquet', 'laissez_faire')(directory, schema, tables)) }}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}

{% macro default__register_raw_parquet(directory, schema, tables) -%}
    {%- do run_query('create schema if not exists ' ~ schema) -%}
    {%- for table in tables -%}
        {#- a view, so files landed after the build are read by the next build without a refresh -#}
        {%- do run_query("create or replace view " ~ schema ~ "." ~ table ~ " as select * from read_parquet('"
                         ~ directory ~ "/" ~ table ~ "/*.parquet', union_by_name = true)") -%}
    {%- endfor -%}
    {{ return('') }}
{%- endmacro %}

{% macro spark__register_raw_parquet(directory, schema, tables) -%}
    {%- do run_query('create schema if not exists ' ~ schema) -%}
    {%- for table in tables -%}
        {#- an external table: dropping it never deletes the landed files; re-created each run so new files and
            new columns (schema merged across the files) are seen -#}
        {%- do run_query('drop table if exists ' ~ schema ~ '.' ~ table) -%}
        {%- do run_query("create table " ~ schema ~ "." ~ table ~ " using parquet options (mergeSchema 'true') location '"
                         ~ directory ~ "/" ~ table ~ "'") -%}
    {%- endfor -%}
    {{ return('') }}
{%- endmacro %}
