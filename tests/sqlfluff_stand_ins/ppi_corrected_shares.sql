{#- Lint-only stand-in (tests/sqlfluff_changed.py, never built): sqlfluff lints the correction models with this in
    place of macros/stats/ppi.sql's ppi_corrected_shares, whose ~100 KB expansion is one templated region of the
    model, where sqlfluff reports no style violation (ignore_templated_areas) yet parsing and linting it cost about
    100 s of CPU per model. What the model's own text can be judged by is kept: the query starts with `select`, as
    the real one does, and reads the relation passed as `indicators` (the model's CTE), as the real one does. The
    real expansion is still parsed, from dbt's compiled SQL (parse errors are reported there today). -#}
{% macro ppi_corrected_shares(indicators, cell_keys, stratum_keys=[]) -%}
    select
        model,
        {%- for key in cell_keys %}
        {{ key }},
        {%- endfor %}
        count(*) as stand_in_rows
    from {{ indicators }}
    group by model{% for key in cell_keys %}, {{ key }}{% endfor %}
{%- endmacro %}
