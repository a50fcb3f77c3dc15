{#- Benjamini–Hochberg q-values as window functions over a family (docs/METHOD.md §6). Two steps, because a window
    function cannot nest another: first bh_rank_columns() in one CTE (rank by ascending p, family size m = count
    of non-null p), then bh_q_value() in the next: q_i = min over j >= i of p_(j) * m / j, capped at 1.
    Rows with a null p get a null q and do not count in m. Tied p-values get the same q whatever their order. -#}

{% macro bh_rank_columns(p_column, partition_by) -%}
    row_number() over (partition by {{ partition_by | join(', ') }}
                       order by case when {{ p_column }} is null then 1 else 0 end, {{ p_column }}) as bh_rank,
    count({{ p_column }}) over (partition by {{ partition_by | join(', ') }}) as bh_family_size
{%- endmacro %}

{% macro bh_q_value(p_column, partition_by, rank_column='bh_rank', size_column='bh_family_size') -%}
    case when {{ p_column }} is not null then
        least(cast(1 as double), min(cast({{ p_column }} as double) * {{ size_column }} / {{ rank_column }})
            over (partition by {{ partition_by | join(', ') }} order by {{ rank_column }} desc
                  rows between unbounded preceding and current row))
    end
{%- endmacro %}

{#- Both steps at once: every column of `relation` plus q_column, the BH q-value of p_column within each family
    (partition_by), as one query (a nested select for the rank, so the caller needs one CTE, not two). The helper
    columns bh_rank and bh_family_size come along; a mart's explicit final select leaves them out. -#}
{% macro bh_q_values(relation, p_column, partition_by, q_column='q_value') -%}
    select
        ranked.*,
        {{ bh_q_value(p_column, partition_by) }} as {{ q_column }}
    from (
        select
            *,
            {{ bh_rank_columns(p_column, partition_by) }}
        from {{ relation }}
    ) as ranked
{%- endmacro %}

{#- bh_q_values() over the family members of docs/METHOD.md §5–6: rows whose race is reported (or that have no race);
    rows of unreported races keep their p-value and get a null q (reported_race_p_value). The column
    family_p_value (the member's p-value) comes along, like bh_rank. -#}
{% macro reported_race_q_values(relation, p_column, partition_by, q_column='q_value') -%}
    {%- set members = '(select *, ' ~ laissez_faire.reported_race_p_value(p_column) ~ ' as family_p_value from '
                      ~ relation ~ ') as family_members' -%}
    {{ laissez_faire.bh_q_values(members, 'family_p_value', partition_by, q_column) }}
{%- endmacro %}
