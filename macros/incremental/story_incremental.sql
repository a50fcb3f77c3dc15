{#-
    The incremental layer (docs/INCREMENTAL.md): every story- and character-level model is rebuilt only for the
    stories that changed since the last build (new stories, or new label responses for a story: the run that counts may change).
    int_stories_changed lists those stories; each such model starts with

        {{ config(**story_incremental()) }}

    and reads its story-level inputs through {{ changed_only(ref('...')) }}. This macro is the ONE place the incremental
    strategy is chosen (an adapter without DELETE, e.g. Spark on plain parquet, changes only this file): before
    inserting, the rows of every changed story are deleted, so a story whose rows vanish (a re-labeled story that
    lost a character's name) leaves nothing stale, then the changed stories' new rows are appended.
    A change that alters rows of unchanged stories (a var, a seed, the lexicon, the models' SQL) needs a full
    rebuild: `lfh build` detects it (ingest/lfh/build/fingerprint.py) and passes --full-refresh.
-#}

{% macro story_incremental() -%}
    {{- return(adapter.dispatch('story_incremental', 'laissez_faire')()) -}}
{%- endmacro %}

{% macro default__story_incremental() -%}
    {{- return({
        "materialized": "incremental",
        "incremental_strategy": "append",
        "unique_key": "story_id",
        "on_schema_change": "append_new_columns",
        "pre_hook": "{{ delete_changed_stories() }}",
    }) -}}
{%- endmacro %}

{#- Spark on plain Parquet has no DELETE (docs/SCALE_OUT.md): every story-level model is a full table there, so
    is_incremental() is false, changed_only() reads whole relations and no delete runs. Correct by construction. -#}
{% macro spark__story_incremental() -%}
    {{- return({"materialized": "table"}) -}}
{%- endmacro %}


{% macro delete_changed_stories() -%}
    {%- if is_incremental() -%}
        delete from {{ this }} where story_id in (select story_id from {{ ref('int_stories_changed') }})
    {%- else -%}
        select 1
    {%- endif -%}
{%- endmacro %}


{#- a story-level relation, reduced to the changed stories' rows in an incremental run: from {{ changed_only(ref('x')) }} -#}
{% macro changed_only(relation, alias=none) -%}
    {#- ref() while parsing records the dependency (build order); called at run time only in an incremental run, so a
        unit test of the model (never incremental) needs no fixture for it -#}
    {%- set incremental = this is not none and is_incremental() -%}  {#- a unit test has no `this` -#}
    {%- if not execute or incremental -%}{%- set changes = ref('int_stories_changed') -%}{%- endif -%}
    {%- set name = alias or relation.identifier -%}
    {%- if incremental -%}
        {%- set locator = row_locator_of(relation) -%}
        {%- if locator -%}
        (select * from {{ relation }} where {{ locator }} in (
            select {{ locator }} from {{ relation }} where story_id in (select story_id from {{ changes }})
        )) as {{ name }}
        {%- else -%}
        (select * from {{ relation }} where story_id in (select story_id from {{ changes }})) as {{ name }}
        {%- endif -%}
    {%- else -%}
        {{ relation }}{% if alias %} as {{ alias }}{% endif %}
    {%- endif -%}
{%- endmacro %}


{#- Why changed_only() goes through a row locator: `where story_id in (changed stories)` is a join, and DuckDB reads
    every column of every row before the join keeps 1% of them (5.2 s for the label responses of 50,100 new stories
    among 5M, which carry 1 KB of request text each). Finding the changed rows' locators first reads the story_id
    column alone, and DuckDB then fetches only those rows (0.4 s): the same rows. The locator is DuckDB's rowid for
    a table (the incremental models), and for the staging views over raw tables the row_locator column they carry
    (raw_row_locator()). None where there is none (Spark, raw tables as Parquet views): the plain filter. -#}
{% macro row_locator_of(relation) -%}
    {{- return(adapter.dispatch('row_locator_of', 'laissez_faire')(relation)) -}}
{%- endmacro %}

{% macro default__row_locator_of(relation) -%}
    {{- return(none) -}}
{%- endmacro %}

{% macro duckdb__row_locator_of(relation) -%}
    {%- for node in graph.nodes.values()
        if node.resource_type == 'model' and node.alias == relation.identifier and node.schema == relation.schema -%}
        {%- if node.config.materialized in ('table', 'incremental') -%}{{ return('rowid') }}{%- endif -%}
        {%- if node.config.materialized == 'view' and 'row_locator' in node.columns
               and raw_tables_have_rowid() -%}{{ return('row_locator') }}{%- endif -%}
    {%- endfor -%}
    {{ return(none) }}
{%- endmacro %}


{#- The row_locator column of the staging views over the raw story tables: DuckDB's rowid of the raw table when raw
    is a DuckDB table; null where raw is a view over Parquet files (var raw_parquet_dir) or on Spark, which have no
    rowid. Read only by changed_only(). -#}
{% macro raw_row_locator() -%}
    {%- if raw_tables_have_rowid() -%}rowid{%- else -%}cast(null as bigint){%- endif -%}
{%- endmacro %}

{% macro raw_tables_have_rowid() -%}
    {{- return(adapter.dispatch('raw_tables_have_rowid', 'laissez_faire')()) -}}
{%- endmacro %}

{% macro default__raw_tables_have_rowid() -%}
    {{- return(false) -}}
{%- endmacro %}

{% macro duckdb__raw_tables_have_rowid() -%}
    {{- return(not var('raw_parquet_dir', none)) -}}
{%- endmacro %}
