{#- Stratified prediction-powered inference (Fisch, Maynez, Hofer, Dhingra, Globerson, Cohen 2024; docs/CORRECTION.md,
    "Strata sampled at different rates"). A cell that spans sampling strata h (the 'All' model cells, the pools over
    models, a couple cell over power-neutral and power-laden Love stories) weights each stratum by its size
    T_h = N_h + n_h, not by its number of hand labels n_h:

        theta = sum_h w_h lam (mean of f over the N_h unlabeled) + sum_h w'_h (mean of y - lam f over the n_h labeled)
        Var(theta) = sum_h w_h^2 lam^2 Var_h(f) / N_h + sum_h w'_h^2 Var_h(y - lam f) / n_h
        w_h = T_h / sum of T,   w'_h = T_h / (sum of T over the strata with a hand label)

    A stratum without a hand label borrows the others' size-weighted error (the pooling assumption); a stratum with
    no unlabeled unit enters the first sum with its hand-labeled f mean and no variance, so that it contributes its
    hand-label mean. Var_h are the stratum's sample (co)variances (divisor n_h - 1, N_h - 1): a stratum holds few
    hand labels once they are spread over strata, and the population divisor would understate its variance (a
    stratum with one hand label adds none: collapse such strata). With every stratum sampled at the same rate,
    w_h = N_h / N = n_h / n and theta is the unstratified estimate exactly (docs/CORRECTION.md).

    The interval step is not repeated here: ppi_stratified_sums() emits per group the columns of ppi_ratio_sums(),
    chosen so that ppi_ratio_select()'s formulas (mean = lam U / N + R / n, covariances from raw moments) return the
    stratified means, variances and covariances for any lam (the design-equivalent sums; N and n stay the real
    counts). Var ppi_stratify = false gives the unstratified sums. -#}

{#- (name, first factor, second factor) of the labeled cross sums of ppi_ratio_sums(). -#}
{% macro ppi_labeled_products() -%}
    {{ return([('fafa', 'fa', 'fa'), ('fbfb', 'fb', 'fb'), ('fafb', 'fa', 'fb'), ('yaya', 'ya', 'ya'),
               ('ybyb', 'yb', 'yb'), ('yayb', 'ya', 'yb'), ('yafa', 'ya', 'fa'), ('ybfb', 'yb', 'fb'),
               ('yafb', 'ya', 'fb'), ('fayb', 'fa', 'yb')]) }}
{%- endmacro %}

{#- The columns of ppi_ratio_sums(), in order. -#}
{% macro ppi_ratio_sum_columns() -%}
    {%- set columns = ['unlabeled_n', 'unlabeled_sum_a', 'unlabeled_sum_b', 'unlabeled_sum_aa', 'unlabeled_sum_bb',
                       'unlabeled_sum_ab', 'labeled_n', 'labeled_sum_fa', 'labeled_sum_fb', 'labeled_sum_ya',
                       'labeled_sum_yb'] -%}
    {%- for name, first, second in ppi_labeled_products() -%}
        {%- do columns.append('labeled_sum_' ~ name) -%}
    {%- endfor -%}
    {{ return(columns) }}
{%- endmacro %}

{#- A query with group_keys and the ppi_ratio_sums() columns of each group of `indicators` (columns as
    ppi_corrected_shares reads them), the group being made of the strata stratum_keys: the design-equivalent sums of
    the stratified estimator above. Without stratum_keys, or with var ppi_stratify false, the plain sums. The f of
    every stratum is first scaled for var ppi_machine_mean (macros/stats/ppi_machine_mean.sql; `unlabeled`: not at
    all). With target_key (a stratum key, 'model'): one row per group and target value (and the all-models label),
    the target in a first column named target_key: the sums of a pooled rectifier for that target's cell.
    machine_mean overrides the var (e.g. 'unlabeled': the plain rectifier moments of each model, for the spread of
    the labeler's error between models). -#}
{% macro ppi_stratified_sums(indicators, group_keys, stratum_keys, target_key=none, machine_mean=none) -%}
    {%- set stratified = stratum_keys | length > 0 and var('ppi_stratify') -%}
    {%- set outputs = ([target_key] if target_key else []) + group_keys -%}
    {%- set groups = outputs | join(', ') -%}
    {%- set machine_mean = machine_mean or var('ppi_machine_mean') -%}
    {%- set strata = ppi_machine_mean_strata(indicators, group_keys,
                                             stratum_keys if stratified else ([target_key] if target_key else []),
                                             stratified, target_key, machine_mean) -%}
    {%- if not stratified %}
    select
        {{ groups }},
        {%- for column in ppi_ratio_sum_columns() %}
        cast(sum({{ column }}) as {{ 'bigint' if column in ['unlabeled_n', 'labeled_n'] else 'double' }})
            as {{ column }}{% if not loop.last %},{% endif %}
        {%- endfor %}
    from ({{ strata }}) as strata
    group by {{ groups }}
    {%- else -%}
    {%- set means = [('u_a', 'unlabeled_sum_a', 'labeled_sum_fa'), ('u_b', 'unlabeled_sum_b', 'labeled_sum_fb')] %}
    select
        {{ groups }},
        cast(sum(unlabeled_n) as bigint) as unlabeled_n,
        cast(sum(unlabeled_n) * sum(w_u * u_a) as double) as unlabeled_sum_a,
        cast(sum(unlabeled_n) * sum(w_u * u_b) as double) as unlabeled_sum_b,
        {%- for name, first, second in [('aa', 'a', 'a'), ('bb', 'b', 'b'), ('ab', 'a', 'b')] %}
        cast(sum(unlabeled_n) * (sum(unlabeled_n) * sum(w_u * w_u * cu_{{ name }})
                                 + sum(w_u * u_{{ first }}) * sum(w_u * u_{{ second }})) as double)
            as unlabeled_sum_{{ name }},
        {%- endfor %}
        cast(sum(labeled_n) as bigint) as labeled_n,
        {%- for name in ['fa', 'fb', 'ya', 'yb'] %}
        cast(sum(labeled_n) * sum(w_l * l_{{ name }}) as double) as labeled_sum_{{ name }},
        {%- endfor %}
        {%- for name, first, second in ppi_labeled_products() %}
        cast(sum(labeled_n) * (sum(labeled_n) * sum(w_l * w_l * cl_{{ name }})
                               + sum(w_l * l_{{ first }}) * sum(w_l * l_{{ second }})) as double)
            as labeled_sum_{{ name }}{% if not loop.last %},{% endif %}
        {%- endfor %}
    from (
        select
            {{ groups }},
            unlabeled_n,
            labeled_n,
            -- the stratum's share of the group, and of the group's strata that have a hand label
            cast(unlabeled_n + labeled_n as double)
                / sum(cast(unlabeled_n + labeled_n as double)) over (partition by {{ groups }}) as w_u,
            coalesce(case when labeled_n > 0 then cast(unlabeled_n + labeled_n as double)
                / nullif(sum(case when labeled_n > 0 then cast(unlabeled_n + labeled_n as double) else 0 end)
                    over (partition by {{ groups }}), 0) end, 0) as w_l,
            {%- for name, unlabeled_sum, labeled_sum in means %}
            case
                when unlabeled_n > 0 then {{ unlabeled_sum }} / cast(unlabeled_n as double)
                {#- a stratum without unlabeled units: its f mean is the hand-labeled units' (under all_units their
                    f already enters the rectifier scaled by c_h, and the f mean over the N_h = 0 units is 0) #}
                {%- if machine_mean == 'unlabeled' %}
                when labeled_n > 0 then {{ labeled_sum }} / cast(labeled_n as double)
                {%- endif %}
                else 0
            end as {{ name }},
            {%- endfor %}
            {%- for name, first, second in [('aa', 'a', 'a'), ('bb', 'b', 'b'), ('ab', 'a', 'b')] %}
            case when unlabeled_n > 1 then
                {{ covariance_from_sums('unlabeled_sum_' ~ name, 'unlabeled_sum_' ~ first, 'unlabeled_sum_' ~ second,
                                        'unlabeled_n') }} / cast(unlabeled_n - 1 as double)
            else 0 end as cu_{{ name }},
            {%- endfor %}
            {%- for name in ['fa', 'fb', 'ya', 'yb'] %}
            case when labeled_n > 0 then labeled_sum_{{ name }} / cast(labeled_n as double) else 0 end as l_{{ name }},
            {%- endfor %}
            {%- for name, first, second in ppi_labeled_products() %}
            case when labeled_n > 1 then
                {{ covariance_from_sums('labeled_sum_' ~ name, 'labeled_sum_' ~ first, 'labeled_sum_' ~ second,
                                        'labeled_n') }} / cast(labeled_n - 1 as double)
            else 0 end as cl_{{ name }}{% if not loop.last %},{% endif %}
            {%- endfor %}
        from ({{ strata }}) as strata
    ) as weighted
    group by {{ groups }}
    {%- endif %}
{%- endmacro %}
