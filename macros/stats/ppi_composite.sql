{#- The cell/pool composite of the corrected shares (var ppi_cell_pool_rule = 'composite'; docs/CORRECTION.md,
    "Cell and pool: a composite rectifier"). A per-model cell c with units without a hand label combines the PPI
    share from its own hand labels (r_own) and the one from the pool's, every model's in the same cell keys
    (r_pool), as a small-area (Fay-Herriot, empirical-Bayes) composite:

        r = (1 - B) r_own + B r_pool,   B = V_c / (V_c + tau2),   V_c = sigma2 / n_c
        Var r = F + (1 - B) V_c + B^2 (V_P + tau2 sum_k w_k^2)

    Both shares come from ppi_ratio_select() with the same f-term (the cell's), so they differ by the rectifier only
    and the composite is that of the share's linearised rectifier e = ((y_a - lam f_a) - r0 (y_b - lam f_b)) / b0
    (r0, b0: the pooled row's raw share and denominator mean, one point for every model of the pool). Per model k of
    the pool with n_k hand-labeled units (sums s_k, q_k of e and e^2; N = sum n_k; K models; w_k = n_k / N):
        sigma2 = sum_k (q_k - s_k^2 / n_k) / (N - K)                  within-model variance of e, pooled
        SSB = sum_k s_k^2 / n_k - (sum_k s_k)^2 / N,  n0 = N - sum_k n_k^2 / N
        tau2_dl = max(0, (SSB - (K - 1) sigma2) / n0)                 DerSimonian-Laird with V_k = sigma2 / n_k
        tau2 = max(0, (K - 1) (SSB / chi2_{K-1}(alpha) - sigma2) / n0) its upper confidence value (used)
    chi2_nu(alpha) the lower alpha quantile (Wilson-Hilferty; z = var ppi_composite_tau2_z). F = the pooled row's
    variance minus its rectifier part V_P (rectifier_share_variance). (1 - B) V_c is computed as
    sigma2 tau2 / (sigma2 + n_c tau2), which is tau2 at n_c = 0. So: no own hand label -> the pool's share with
    variance F + V_P + tau2 (1 + sum w_k^2); tau2 = 0 -> the pool's; many own -> the cell's own; the variance never
    grows with n_c (all else equal). K < 2: tau2 = 0 (nothing to estimate it from). 'All' cells (their own pool) and
    cells without an unlabeled unit (N = 0: the hand labels' own share) keep their own hand labels. -#}

{#- The share-linearised rectifier sums of a model's hand labels, s (of e) or q (of e^2), at the point (r0, b0). -#}
{% macro ppi_linearised_rectifier_sum(sums, lam, r0, b0, squared=false) -%}
    {%- set s = sums ~ ".labeled_sum_" -%}
    {%- if squared -%}
    ({{ rectifier_cross_sum(s ~ 'yaya', s ~ 'yafa', s ~ 'yafa', s ~ 'fafa', lam) }}
     - 2.0 * {{ r0 }} * {{ rectifier_cross_sum(s ~ 'yayb', s ~ 'yafb', s ~ 'fayb', s ~ 'fafb', lam) }}
     + {{ r0 }} * {{ r0 }} * {{ rectifier_cross_sum(s ~ 'ybyb', s ~ 'ybfb', s ~ 'ybfb', s ~ 'fbfb', lam) }})
    / ({{ b0 }} * {{ b0 }})
    {%- else -%}
    ({{ rectifier_sum(s ~ 'ya', s ~ 'fa', lam) }} - {{ r0 }} * {{ rectifier_sum(s ~ 'yb', s ~ 'fb', lam) }}) / {{ b0 }}
    {%- endif -%}
{%- endmacro %}

{#- The lower alpha quantile of chi-square with nu degrees of freedom, alpha = Phi(-z), by Wilson-Hilferty
    (closed form on every engine): nu (1 - 2 / (9 nu) - z sqrt(2 / (9 nu)))^3, the cube's base kept >= 0.01 (nu = 1
    and a large z would make it negative: the quantile is then tiny and tau2's upper value large). -#}
{% macro chi_square_lower_quantile(nu, z) -%}
    (cast({{ nu }} as double) * power(greatest(cast(0.01 as double),
        1.0 - 2.0 / (9.0 * cast({{ nu }} as double))
        - cast({{ z }} as double) * sqrt(2.0 / (9.0 * cast({{ nu }} as double)))), 3))
{%- endmacro %}

{#- B of the composite, sigma2 / (sigma2 + n tau2) (V_c / (V_c + tau2) with V_c = sigma2 / n): the pool's weight. 1
    where the cell has no own hand label or nothing tells the models apart (sigma2 + n tau2 = 0, or sigma2 unknown). -#}
{% macro ppi_composite_weight(sigma2, tau2, n) -%}
    case
        when cast({{ n }} as double) <= 0 or {{ sigma2 }} is null then cast(1 as double)
        when {{ sigma2 }} + cast({{ n }} as double) * {{ tau2 }} > 0
            then {{ sigma2 }} / ({{ sigma2 }} + cast({{ n }} as double) * {{ tau2 }})
        else cast(1 as double)
    end
{%- endmacro %}

{#- The composite rectifier's variance (MSE) on the share scale, without the f-term:
    (1 - B) V_c + B^2 (V_P + tau2 sum_w2), with (1 - B) V_c = sigma2 tau2 / (sigma2 + n tau2) (tau2 at n = 0).
    weight: a column already holding B (ppi_composite_weight of the same arguments), read instead of inlining it. -#}
{% macro ppi_composite_rectifier_variance(sigma2, tau2, n, pool_variance, sum_w2, weight=none) -%}
    {%- set b = weight if weight is not none else ppi_composite_weight(sigma2, tau2, n) -%}
    (case
        when cast({{ n }} as double) <= 0 or {{ sigma2 }} is null then {{ tau2 }}
        when {{ sigma2 }} + cast({{ n }} as double) * {{ tau2 }} > 0
            then {{ sigma2 }} * {{ tau2 }} / ({{ sigma2 }} + cast({{ n }} as double) * {{ tau2 }})
        else cast(0 as double)
    end
    + {{ b }} * {{ b }}
      * (cast({{ pool_variance }} as double) + {{ tau2 }} * cast({{ sum_w2 }} as double)))
{%- endmacro %}

{#- ppi_corrected_shares' estimates under the composite rule: a query with the columns of ppi_switch_estimates()
    (model, cell_keys, rectifier_source 'cell' | 'composite', lam, unlabeled_n, labeled_n (the pool's for a
    composite row), corrected_share, corrected_share_variance, corrected_share_ci_lower / _upper,
    cell_labeled_sum_ya / _yb) plus pool_weight (B) and between_model_variance (tau2, the upper value used). -#}
{% macro ppi_composite_estimates(indicators, cell_keys, stratum_keys=[]) -%}
    {%- set keys = cell_keys | join(', ') -%}
    {%- set all_label = "'" ~ var('all_models_label') ~ "'" -%}
    {%- set sum_columns = ppi_ratio_sum_columns() -%}
    {%- set pools = ppi_pool_sums(indicators, cell_keys, stratum_keys) -%}
    {#- the cells' own sums, their f scaled for var ppi_machine_mean (macros/stats/ppi_machine_mean.sql) -#}
    {%- set cells = ppi_stratified_sums(indicators, ['model'] + cell_keys, stratum_keys) -%}
    {#- each model's own hand labels for sigma2 and tau2: the per-model cells' sums (unscaled by any f-term choice) -#}
    {%- set model_sums = ppi_stratified_sums(indicators, ['model'] + cell_keys, stratum_keys,
                                             machine_mean='unlabeled') -%}
    {#- Two candidate rectifiers per cell: its own hand labels ('cell': every cell with some; 'All' cells and cells
        without an unlabeled unit use only these) and every model's ('pooled': a per-model cell with unlabeled units).
        One join of pools and cells, crossed with the two sources: the 'All' cell is its own pool (its row of pools,
        which has no row in cells), so the pools are read once and no union is needed. -#}
    {%- set is_all = "pools.model = " ~ all_label -%}
    {%- set candidates -%}
        (
            select
                pools.model,
                {%- for key in cell_keys %}
                pools.{{ key }},
                {%- endfor %}
                sources.rectifier_source,
                {%- for column, own in [('cell_labeled_n', 'labeled_n'), ('cell_labeled_sum_ya', 'labeled_sum_ya'),
                                        ('cell_labeled_sum_yb', 'labeled_sum_yb')] %}
                case when {{ is_all }} then pools.{{ own }} else cells.{{ own }} end as {{ column }},
                {%- endfor %}
                cast(case when sources.rectifier_source = 'cell'
                               and (case when {{ is_all }} then pools.unlabeled_n else cells.unlabeled_n end) = 0 then 0
                          else {{ var('ppi_lambda') }} end as double) as lam,
                {%- for column in sum_columns %}
                {%- if column.startswith('unlabeled') %}
                case when {{ is_all }} then pools.{{ column }} else cells.{{ column }} end as {{ column }},
                {%- else %}
                case when sources.rectifier_source = 'cell' and not ({{ is_all }}) then cells.{{ column }}
                    else pools.{{ column }} end as {{ column }}{% if not loop.last %},{% endif %}
                {%- endif %}
                {%- endfor %}
            from ({{ pools }}) as pools
            left join ({{ cells }}) as cells
                on pools.model = cells.model and {{ ppi_join_on_keys('pools', 'cells', cell_keys) }}
            cross join (
                select cast('cell' as string) as rectifier_source
                union all
                select cast('pooled' as string) as rectifier_source
            ) as sources
            where pools.labeled_n > 0
                and (({{ is_all }} and sources.rectifier_source = 'cell')
                     or (not ({{ is_all }})
                         and ((sources.rectifier_source = 'cell' and cells.labeled_n > 0)
                              or (sources.rectifier_source = 'pooled' and cells.unlabeled_n > 0))))
        ) as candidates
    {%- endset -%}
    {%- set carried = ['lam', 'labeled_n', 'raw_share', 'corrected_share', 'corrected_share_variance',
                       'rectifier_share_variance', 'ppi_mean_b', 'interval_hand_n', 'labeled_sum_ya',
                       'labeled_sum_yb'] -%}
    {#- the pool's moments over its models k (aggregates of the joined rows below) -#}
    {%- set moments = {
        'pool_models': 'cast(count(k_n) as double)',
        'within_model_variance': 'case when sum(k_n) > count(k_n) then sum(k_q - k_s * k_s / k_n)'
                                 ' / cast(sum(k_n) - count(k_n) as double) end',
        'between_model_sum_squares': '(sum(k_s * k_s / k_n) - sum(k_s) * sum(k_s) / sum(k_n))',
        'pool_n_spread': '(sum(k_n) - sum(k_n * k_n) / sum(k_n))'} -%}
    {#- tau2: the upper confidence value of the between-model variance, from those aggregates (named columns) -#}
    {%- set tau2 -%}
        case when pool_models >= 2 and pool_n_spread > 0 and within_model_variance is not null then
            greatest(cast(0 as double), (pool_models - 1)
                * (between_model_sum_squares
                   / {{ chi_square_lower_quantile('pool_models - 1', var('ppi_composite_tau2_z')) }}
                   - within_model_variance) / pool_n_spread)
        else cast(0 as double) end
    {%- endset -%}
    {%- set weight = ppi_composite_weight('within_model_variance', 'between_model_variance',
                                          'coalesce(cell_labeled_n, 0)') -%}
    {#- the estimate and the hand counts its interval rests on: the composite's (the pool's counts) or the cell's
        own; each a named column, so that the interval's formulas read a column name -#}
    select
        model,
        {%- for key in cell_keys %}
        {{ key }},
        {%- endfor %}
        rectifier_source,
        lam,
        unlabeled_n,
        labeled_n,
        cell_labeled_sum_ya,
        cell_labeled_sum_yb,
        pool_weight,
        between_model_variance,
        corrected_share,
        corrected_share_variance,
        {%- for bound in ['lower', 'upper'] %}
        {{ context['ppi_interval_' ~ bound]('chosen_raw_share', 'corrected_share', 'corrected_share_variance',
                                            'chosen_hand_n', 'chosen_hand_subset_n', 'chosen_hand_category_n',
                                            hull='interval_hull_' ~ bound) }}
            as corrected_share_ci_{{ bound }}{% if not loop.last %},{% endif %}
        {%- endfor %}
    from (
    select
        *,
        {{ ppi_interval_hull_lower('chosen_raw_share', 'corrected_share', 'corrected_share_variance',
                                   'chosen_hand_n') }} as interval_hull_lower,
        {{ ppi_interval_hull_upper('chosen_raw_share', 'corrected_share', 'corrected_share_variance',
                                   'chosen_hand_n') }} as interval_hull_upper
    from (
    select
        model,
        {%- for key in cell_keys %}
        {{ key }},
        {%- endfor %}
        case when has_pool = 1 then 'composite' else 'cell' end as rectifier_source,
        case when has_pool = 1 then pool_lam else own_lam end as lam,
        unlabeled_n,
        case when has_pool = 1 then pool_labeled_n else own_labeled_n end as labeled_n,
        cell_labeled_sum_ya,
        cell_labeled_sum_yb,
        case when has_pool = 1 then pool_weight end as pool_weight,
        case when has_pool = 1 then between_model_variance end as between_model_variance,
        {%- for column, composite, own in [
                ('corrected_share', clamp_unit_interval('composite_raw_share'), 'own_corrected_share'),
                ('corrected_share_variance', 'composite_variance', 'own_corrected_share_variance'),
                ('chosen_raw_share', 'composite_raw_share', 'own_raw_share'),
                ('chosen_hand_n', 'pool_interval_hand_n', 'own_interval_hand_n'),
                ('chosen_hand_subset_n', 'pool_labeled_sum_yb', 'own_labeled_sum_yb'),
                ('chosen_hand_category_n', 'pool_labeled_sum_ya', 'own_labeled_sum_ya')] %}
        case when has_pool = 1 then {{ composite }} else {{ own }} end as {{ column }}{% if not loop.last %},{% endif %}
        {%- endfor %}
    from (
        select
            *,
            case when pool_raw_share is not null
                then (1 - pool_weight) * coalesce(own_raw_share, pool_raw_share) + pool_weight * pool_raw_share
            end as composite_raw_share,
            pool_corrected_share_variance - pool_rectifier_share_variance
            + {{ ppi_composite_rectifier_variance('within_model_variance', 'between_model_variance',
                                                  'coalesce(cell_labeled_n, 0)', 'pool_rectifier_share_variance',
                                                  'pool_weight_squares', weight='pool_weight') }} as composite_variance
        from (
        select
            *,
            {{ weight }} as pool_weight
        from (
        select
            *,
            {{ tau2 }} as between_model_variance
        from (
            -- per cell: its own and its pooled estimate side by side, and the pool's models' linearised
            -- rectifiers summed over the models k (joined to the pooled row only)
            select
                model,
                {%- for key in cell_keys %}
                {{ key }},
                {%- endfor %}
                max(cell_labeled_n) as cell_labeled_n,
                max(cell_labeled_sum_ya) as cell_labeled_sum_ya,
                max(cell_labeled_sum_yb) as cell_labeled_sum_yb,
                max(unlabeled_n) as unlabeled_n,
                max(case when rectifier_source = 'pooled' then 1 else 0 end) as has_pool,
                {%- for column in carried %}
                max(case when rectifier_source = 'cell' then {{ column }} end) as own_{{ column }},
                max(case when rectifier_source = 'pooled' then {{ column }} end) as pool_{{ column }},
                {%- endfor %}
                {%- for name, aggregate in moments.items() %}
                {{ aggregate }} as {{ name }},
                {%- endfor %}
                sum(k_n * k_n) / (sum(k_n) * sum(k_n)) as pool_weight_squares
            from (
                select
                    estimates.*,
                    cast(k.labeled_n as double) as k_n,
                    {{ ppi_linearised_rectifier_sum('k', 'estimates.lam', 'estimates.raw_share',
                                                    'estimates.ppi_mean_b') }} as k_s,
                    {{ ppi_linearised_rectifier_sum('k', 'estimates.lam', 'estimates.raw_share',
                                                    'estimates.ppi_mean_b', squared=true) }} as k_q
                from (
                    {{ ppi_ratio_select(candidates, ['model'] + cell_keys + [
                        'rectifier_source', 'cell_labeled_n', 'cell_labeled_sum_ya',
                        'cell_labeled_sum_yb'], interval=false) }}
                ) as estimates
                left join ({{ model_sums }}) as k
                    on {{ ppi_join_on_keys('estimates', 'k', cell_keys) }}
                    and estimates.rectifier_source = 'pooled'
                    and estimates.ppi_mean_b > 0
                    and k.labeled_n > 0
            ) as joined
            group by model, {{ keys }}
        ) as pooled
        ) as tau2
        ) as weighted
    ) as composite
    ) as chosen
    ) as hulls
{%- endmacro %}
