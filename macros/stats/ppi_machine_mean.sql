{#- The machine-label term of the PPI estimator (var ppi_machine_mean; docs/CORRECTION.md, "The machine-label
    mean over all units"). docs/METHOD.md §9 takes the mean of f over the N units of a cell WITHOUT a hand label
    (`unlabeled`). The hand-labeled units are a random subsample of the cell's T = N + n units, so the mean of f
    over ALL T units is available too (`all_units`; the survey difference estimator, active inference: Zrnic and
    Candes 2024):

        theta = lam * (mean of f over the T units) + (mean of y - lam f over the n units)
              = lam c * (mean of f over the N units) + (mean of y - lam c f over the n units),   c = N / T
        Var(theta) = lam^2 c^2 Var(f) / N + Var(y - lam c f) / n
                   = (Var(y) - Var(y - lam f)) / T + Var(y - lam f) / n     (the same, in population)

    i.e. plain PPI with lam c in place of lam: with T fixed, a hand label never raises the variance (the first
    line's f-term shrinks as N does, and Var(y)/T + (1/n - 1/T) Var(y - lam f) falls with n). Over strata h, each
    weighted by T_h (stratified PPI, macros/stats/ppi_stratified.sql), the f mean of a cell over all of its units
    is sum_h (T_h / T) mean_{T_h} f and the rectifier sum_h w'_h mean_{n_h}(y - lam f), w'_h = T_h / T_L
    (T_L = the units of the strata with a hand label); a hand-labeled unit of stratum h then enters as
    w'_h / n_h (y - lam c_h f) and an unlabeled one as lam (T_h / T) (N_h / T_h) f / N_h:

        c_h = 1 - n_h T_L / (T_c T_h)       (T_c = the units of the cell whose f mean it is; = T for the group)
        s_h = N_h / T_h                     (the unlabeled f, scaled)

    and, for the unstratified sums (one stratum, or var ppi_stratify false), c = 1 - n / T_c and s = N / T.
    A POOLED rectifier (another cell's f mean, the pool's hand labels) gets c_h only in the strata of the cell it
    corrects (the cell's own hand labels are in both its f mean and the pool): so the pool's sums are emitted per
    target cell (target_key). These scalings are applied to the raw per-stratum sums (f by c or s, f f by c^2 or
    s^2, y f by c); ppi_ratio_select's unchanged formulas then return the estimator above for any lam. With
    `unlabeled` both are 1. -#}

{#- Per stratum of `indicators` (columns as ppi_corrected_shares reads them): group_keys, stratum_keys and the raw
    ppi_ratio_sums() columns, f scaled for var ppi_machine_mean as above. With target_key (a stratum key, e.g.
    'model'), one copy of every stratum per target value of the group and per var all_models_label, in a column
    named target_key placed first: the f mean whose rectifier these are is that target's cell (every stratum for
    the all-models label). `stratified`: c_h, s_h per stratum; else the group's c and s. machine_mean overrides the
    var. -#}
{% macro ppi_machine_mean_strata(indicators, group_keys, stratum_keys, stratified, target_key=none,
                                 machine_mean=none) -%}
    {%- set groups = group_keys | join(', ') -%}
    {%- set machine_mean = machine_mean or var('ppi_machine_mean') -%}
    {%- set all_units = machine_mean == 'all_units' -%}
    {%- if machine_mean not in ['unlabeled', 'all_units'] -%}
        {{ exceptions.raise_compiler_error("var ppi_machine_mean must be 'unlabeled' or 'all_units', got '"
                                           ~ machine_mean ~ "'") }}
    {%- endif -%}
    {%- set strata_keys = stratum_keys if stratum_keys | length > 0 else [] -%}
    {%- set partition = group_keys + (['target'] if target_key else []) -%}
    {%- set sums = ppi_ratio_sums('f_a', 'f_b', 'y_a', 'y_b', 'is_hand_labeled', 'unit_count', 'unit_weight') -%}
    {%- set scaled = {'unlabeled_sum_a': 's', 'unlabeled_sum_b': 's', 'unlabeled_sum_aa': 's2',
                      'unlabeled_sum_bb': 's2', 'unlabeled_sum_ab': 's2', 'labeled_sum_fa': 'c', 'labeled_sum_fb': 'c',
                      'labeled_sum_fafa': 'c2', 'labeled_sum_fbfb': 'c2', 'labeled_sum_fafb': 'c2',
                      'labeled_sum_yafa': 'c', 'labeled_sum_ybfb': 'c', 'labeled_sum_yafb': 'c',
                      'labeled_sum_fayb': 'c'} -%}
    {%- set window = "over (partition by " ~ (partition | join(', ')) ~ ")" -%}
    {%- set units = "cast(unlabeled_n + labeled_n as double)" -%}
    {%- if stratified -%}
        {%- set s_value = "cast(unlabeled_n as double) / " ~ units -%}
        {%- set c_value = "1 - cast(labeled_n as double) * sum(case when labeled_n > 0 then " ~ units
            ~ " else 0 end) " ~ window ~ " / (sum(case when belongs then " ~ units ~ " else 0 end) " ~ window
            ~ " * " ~ units ~ ")" -%}
    {%- else -%}
        {%- set s_value = "sum(cast(unlabeled_n as double)) " ~ window ~ " / sum(" ~ units ~ ") " ~ window -%}
        {%- set c_value = "1 - sum(cast(labeled_n as double)) " ~ window ~ " / sum(case when belongs then " ~ units
            ~ " else 0 end) " ~ window -%}
    {%- endif -%}
    {#- s and c are named columns of a nested select (machine_scale_s, machine_scale_c), read by every scaled sum -#}
    {%- set s = "(case when belongs then " ~ s_value ~ " else cast(1 as double) end)" -%}
    {%- set c = "(case when belongs and labeled_n > 0 then " ~ c_value ~ " else cast(1 as double) end)" -%}
    {%- set factors = {'s': 'machine_scale_s', 's2': 'machine_scale_s * machine_scale_s', 'c': 'machine_scale_c',
                       'c2': 'machine_scale_c * machine_scale_c'} -%}
    select
        {% if target_key %}target as {{ target_key }}, {% endif %}{{ groups }},
        {%- for key in strata_keys %}
        {#- the target is emitted as target_key: a stratum key of the same name gets another (Spark refuses two) -#}
        {{ key }}{% if key == target_key %} as stratum_{{ key }}{% endif %},
        {%- endfor %}
        {%- for column in ppi_ratio_sum_columns() %}
        {%- if column in scaled and all_units %}
        {{ column }} * {{ factors[scaled[column]] }} as {{ column }}{% if not loop.last %},{% endif %}
        {%- else %}
        {{ column }}{% if not loop.last %},{% endif %}
        {%- endif %}
        {%- endfor %}
    from (
    {%- if all_units %}
        select
            *,
            {{ s }} as machine_scale_s,
            {{ c }} as machine_scale_c
        from (
    {%- endif %}
        select
            strata.*,
            {%- if target_key %}
            targets.target,
            (targets.target = '{{ var("all_models_label") }}' or strata.{{ target_key }} = targets.target) as belongs
            {%- else %}
            true as belongs
            {%- endif %}
        from (
            select {{ groups }}{% for key in strata_keys %}, {{ key }}{% endfor %}, {{ sums }}
            from (
                -- every factor of the sums a double once
                select {{ groups }}{% for key in strata_keys %}, {{ key }}{% endfor %}, is_hand_labeled, unit_count,
                    cast(unit_count as double) as unit_weight,
                    {%- for column in ['f_a', 'f_b', 'y_a', 'y_b'] %}
                    cast({{ column }} as double) as {{ column }}{% if not loop.last %},{% endif %}
                    {%- endfor %}
                from {{ indicators }}
            ) as valued
            group by {{ groups }}{% for key in strata_keys %}, {{ key }}{% endfor %}
        ) as strata
        {%- if target_key %}
        inner join (
            select distinct {{ groups }}, {{ target_key }} as target from {{ indicators }}
            union all
            select distinct {{ groups }}, '{{ var("all_models_label") }}' as target from {{ indicators }}
        ) as targets
            on {% for key in group_keys %}strata.{{ key }} = targets.{{ key }}{% if not loop.last %}
            and {% endif %}{% endfor %}
        {%- endif %}
    {%- if all_units %}
        ) as targeted
    ) as scaled
    {%- else %}
    ) as targeted
    {%- endif %}
{%- endmacro %}
