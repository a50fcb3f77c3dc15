{#- Prediction-powered inference (Angelopoulos, Bates, Fannjiang, Jordan, Zrnic, Science 2023; docs/METHOD.md §9;
    docs/CORRECTION.md). For one indicator (or any number) y that people label and the machine predicts as f:

        theta = lam * (mean of f over the N units without a hand label) + (mean of y - lam f over the n units with one)
        Var(theta) = lam^2 Var(f) / N + Var(y - lam f) / n

    lam = 1 is plain PPI; lam = 0 the classical estimate from hand labels alone (ppi_py's `lam`). With N = 0 the
    first term is absent: the caller passes lam = 0 and y as the rectifier (every unit of the cell is hand-labeled).
    Variances and covariances are population moments (divisor n, numpy's default ddof = 0, as ppi_py does).
    A share among a subset is the ratio of two such means, a / b; its variance by the delta method is
        Var(a / b) = (Var a - 2 r Cov(a, b) + r^2 Var b) / b^2,   r = a / b,
    and Cov(a, b) = lam^2 Cov(f_a, f_b) / N + Cov(y_a - lam f_a, y_b - lam f_b) / n (the two terms are
    independent samples). Every macro takes SQL expressions (column names or literals) and is null where its
    inputs do not define it: these are general, any mart with N, n, sums and cross sums can call them. -#}

{#- Population covariance from sums over n units: sum(xy)/n - (sum x/n)(sum y/n). The variance is
    covariance_from_sums(sum_xx, sum_x, sum_x, n). Null when n = 0. -#}
{% macro covariance_from_sums(sum_xy, sum_x, sum_y, n) -%}
    case when cast({{ n }} as double) > 0 then
        cast({{ sum_xy }} as double) / cast({{ n }} as double)
        - (cast({{ sum_x }} as double) / cast({{ n }} as double)) * (cast({{ sum_y }} as double) / cast({{ n }} as double))
    end
{%- endmacro %}

{#- The PPI point estimate of a mean. unlabeled_sum = sum of f over the N units without hand labels;
    rectifier_sum = sum of (y - lam f) over the n hand-labeled units. Null when n = 0. -#}
{% macro ppi_mean(unlabeled_n, unlabeled_sum, labeled_n, rectifier_sum, lam) -%}
    case when cast({{ labeled_n }} as double) > 0 then
        case when cast({{ unlabeled_n }} as double) > 0
            then cast({{ lam }} as double) * cast({{ unlabeled_sum }} as double) / cast({{ unlabeled_n }} as double)
            else cast(0 as double)
        end
        + cast({{ rectifier_sum }} as double) / cast({{ labeled_n }} as double)
    end
{%- endmacro %}

{#- Covariance of two PPI means estimated on the same units (their variance when a = b):
    lam^2 Cov(f_a, f_b) / N + Cov(y_a - lam f_a, y_b - lam f_b) / n. Null when n = 0. -#}
{% macro ppi_covariance(unlabeled_n, unlabeled_covariance, labeled_n, rectifier_covariance, lam) -%}
    case when cast({{ labeled_n }} as double) > 0 then
        case when cast({{ unlabeled_n }} as double) > 0
            then cast({{ lam }} as double) * cast({{ lam }} as double)
                 * cast({{ unlabeled_covariance }} as double) / cast({{ unlabeled_n }} as double)
            else cast(0 as double)
        end
        + cast({{ rectifier_covariance }} as double) / cast({{ labeled_n }} as double)
    end
{%- endmacro %}

{#- Delta-method variance of r = a / b from Var a, Var b, Cov(a, b). Null when b is 0 or null. -#}
{% macro delta_ratio_variance(mean_a, mean_b, variance_a, variance_b, covariance_ab) -%}
    {%- set a = "cast(" ~ mean_a ~ " as double)" -%}
    {%- set b = "cast(" ~ mean_b ~ " as double)" -%}
    case when {{ b }} <> 0 then
        (cast({{ variance_a }} as double)
         - 2.0 * ({{ a }} / {{ b }}) * cast({{ covariance_ab }} as double)
         + ({{ a }} / {{ b }}) * ({{ a }} / {{ b }}) * cast({{ variance_b }} as double))
        / ({{ b }} * {{ b }})
    end
{%- endmacro %}

{#- Normal (Wald) interval bounds estimate -/+ z sqrt(variance), clamped to [lower_limit, upper_limit] (a share
    lives in [0, 1]: clamping an interval to the parameter space never lowers its coverage). A negative
    variance (rounding of a zero) counts as 0. z defaults to var('wilson_z'). -#}
{% macro normal_interval_lower(estimate, variance, z=none, lower_limit=0) -%}
    {%- set zz = "cast(" ~ (z if z is not none else var('wilson_z')) ~ " as double)" -%}
    case when {{ estimate }} is not null and {{ variance }} is not null then
        greatest(cast({{ lower_limit }} as double),
                 cast({{ estimate }} as double) - {{ zz }} * sqrt(greatest(cast(0 as double), cast({{ variance }} as double))))
    end
{%- endmacro %}

{% macro normal_interval_upper(estimate, variance, z=none, upper_limit=1) -%}
    {%- set zz = "cast(" ~ (z if z is not none else var('wilson_z')) ~ " as double)" -%}
    case when {{ estimate }} is not null and {{ variance }} is not null then
        least(cast({{ upper_limit }} as double),
              cast({{ estimate }} as double) + {{ zz }} * sqrt(greatest(cast(0 as double), cast({{ variance }} as double))))
    end
{%- endmacro %}

{#- Clamp a point estimate to [0, 1] (a PPI estimate of a share can step outside it when the rectifier is larger
    than the machine share; projecting onto the parameter space never moves it further from the truth). -#}
{% macro clamp_unit_interval(estimate) -%}
    case when {{ estimate }} is not null then
        least(cast(1 as double), greatest(cast(0 as double), cast({{ estimate }} as double)))
    end
{%- endmacro %}

{#- Sums over one cell that a ratio of two PPI means a / b needs, from per-unit columns f_a, f_b (machine),
    y_a, y_b (hand; only read where is_labeled), a boolean is_labeled and unit_count, the number of units a row
    stands for (units with the same values are counted in one row before the sums: a correction then reads a few
    thousand rows instead of a row per character, and the sums are the same). Raw moments, so that the rectifier
    y - lam f can be formed for any lam afterwards and sums of cells can be pooled by adding them:
      unlabeled_n, unlabeled_sum_a, unlabeled_sum_b, unlabeled_sum_aa, unlabeled_sum_bb, unlabeled_sum_ab
      labeled_n, labeled_sum_{fa, fb, ya, yb}, labeled_sum_{fafa, fbfb, fafb, yaya, ybyb, yayb, yafa, ybfb, yafb, fayb} -#}
{% macro ppi_ratio_sums(f_a, f_b, y_a, y_b, is_labeled, unit_count, unit_weight=none) -%}
    {#- unit_weight: a double column equal to unit_count, given when f_a, f_b, y_a, y_b are double columns too: the
        sums then read them as they are instead of casting each factor of every product -#}
    {%- set doubles = unit_weight is not none -%}
    {%- set w = unit_weight if doubles else "cast(" ~ unit_count ~ " as double)" -%}
    {%- set u = "case when not (" ~ is_labeled ~ ") then " ~ w ~ " * " -%}
    {%- set l = "case when " ~ is_labeled ~ " then " ~ w ~ " * " -%}
    {%- set fa = f_a if doubles else "cast(" ~ f_a ~ " as double)" -%}
    {%- set fb = f_b if doubles else "cast(" ~ f_b ~ " as double)" -%}
    {%- set ya = y_a if doubles else "cast(" ~ y_a ~ " as double)" -%}
    {%- set yb = y_b if doubles else "cast(" ~ y_b ~ " as double)" -%}
    cast(sum(case when not ({{ is_labeled }}) then {{ unit_count }} else 0 end) as bigint) as unlabeled_n,
    cast(coalesce(sum({{ u }}{{ fa }} end), 0) as double) as unlabeled_sum_a,
    cast(coalesce(sum({{ u }}{{ fb }} end), 0) as double) as unlabeled_sum_b,
    cast(coalesce(sum({{ u }}{{ fa }} * {{ fa }} end), 0) as double) as unlabeled_sum_aa,
    cast(coalesce(sum({{ u }}{{ fb }} * {{ fb }} end), 0) as double) as unlabeled_sum_bb,
    cast(coalesce(sum({{ u }}{{ fa }} * {{ fb }} end), 0) as double) as unlabeled_sum_ab,
    cast(sum(case when {{ is_labeled }} then {{ unit_count }} else 0 end) as bigint) as labeled_n,
    {%- for name, expression in [('fa', fa), ('fb', fb), ('ya', ya), ('yb', yb),
                                 ('fafa', fa ~ ' * ' ~ fa), ('fbfb', fb ~ ' * ' ~ fb), ('fafb', fa ~ ' * ' ~ fb),
                                 ('yaya', ya ~ ' * ' ~ ya), ('ybyb', yb ~ ' * ' ~ yb), ('yayb', ya ~ ' * ' ~ yb),
                                 ('yafa', ya ~ ' * ' ~ fa), ('ybfb', yb ~ ' * ' ~ fb), ('yafb', ya ~ ' * ' ~ fb),
                                 ('fayb', fa ~ ' * ' ~ yb)] %}
    cast(coalesce(sum({{ l }}{{ expression }} end), 0) as double) as labeled_sum_{{ name }}{% if not loop.last %},{% endif %}
    {%- endfor %}
{%- endmacro %}

{#- Sum of the rectifier y - lam f, and the cross sum of two rectifiers
    sum (y1 - lam f1)(y2 - lam f2) = sum y1 y2 - lam sum y1 f2 - lam sum f1 y2 + lam^2 sum f1 f2. -#}
{% macro rectifier_sum(sum_y, sum_f, lam) -%}
    (cast({{ sum_y }} as double) - cast({{ lam }} as double) * cast({{ sum_f }} as double))
{%- endmacro %}

{% macro rectifier_cross_sum(sum_y1y2, sum_y1f2, sum_f1y2, sum_f1f2, lam) -%}
    (cast({{ sum_y1y2 }} as double) - cast({{ lam }} as double) * cast({{ sum_y1f2 }} as double)
     - cast({{ lam }} as double) * cast({{ sum_f1y2 }} as double)
     + cast({{ lam }} as double) * cast({{ lam }} as double) * cast({{ sum_f1f2 }} as double))
{%- endmacro %}

{#- The corrected share a / b of every row of `relation`, a relation holding key_columns, a column lam_column
    (the lam to use in that row) and the sums of ppi_ratio_sums() with the rectifier's n in labeled_n. Emits a
    query with key_columns, lam, unlabeled_n, labeled_n, ppi_mean_a, ppi_mean_b, corrected_share (projected
    onto [0, 1]), corrected_share_variance and corrected_share_ci_lower / _upper (macros/stats/ppi_interval.sql:
    the normal interval on the delta-method variance, widened at the boundary to the hand labels' own Wilson
    bound, so that it has width and keeps every share they cannot rule out; interval = false leaves them null, for a
    caller that forms the interval itself). Null estimates where labeled_n = 0 or
    the estimate of b is not positive (no units in the subset). Nested selects, not lateral aliases, so every adapter runs it. -#}
{% macro ppi_ratio_select(relation, key_columns, lam_column='lam', interval=true) -%}
    {%- set keys = key_columns | join(', ') -%}
    select
        {{ keys }},
        lam,
        unlabeled_n,
        labeled_n,
        ppi_mean_a,
        ppi_mean_b,
        raw_share,
        corrected_share,
        share_variance as corrected_share_variance,
        rectifier_share_variance,
        interval_hand_n,
        labeled_sum_ya,
        labeled_sum_yb,
        {%- if interval %}
        {{ ppi_interval_lower('raw_share', 'corrected_share', 'share_variance', 'interval_hand_n', 'labeled_sum_yb',
                              'labeled_sum_ya', hull='interval_hull_lower') }} as corrected_share_ci_lower,
        {{ ppi_interval_upper('raw_share', 'corrected_share', 'share_variance', 'interval_hand_n', 'labeled_sum_yb',
                              'labeled_sum_ya', hull='interval_hull_upper') }} as corrected_share_ci_upper
        {%- else %}
        cast(null as double) as corrected_share_ci_lower,
        cast(null as double) as corrected_share_ci_upper
        {%- endif %}
    from (
    {%- if interval %}
    select
        *,
        {{ ppi_interval_hull_lower('raw_share', 'corrected_share', 'share_variance', 'interval_hand_n') }}
            as interval_hull_lower,
        {{ ppi_interval_hull_upper('raw_share', 'corrected_share', 'share_variance', 'interval_hand_n') }}
            as interval_hull_upper
    from (
    {%- endif %}
    select
        *,
        {{ clamp_unit_interval('raw_share') }} as corrected_share,
        {{ ppi_interval_hand_n('unlabeled_n + labeled_n', 'labeled_sum_yb') }} as interval_hand_n
    from (
        select
            *,
            case when ppi_mean_b > 0 then ppi_mean_a / ppi_mean_b end as raw_share,
            case when ppi_mean_b > 0
                then {{ delta_ratio_variance('ppi_mean_a', 'ppi_mean_b', 'variance_a', 'variance_b', 'covariance_ab') }}
            end as share_variance,
            -- the rectifier's part of share_variance alone (the cell/pool composite, macros/stats/ppi_composite.sql)
            case when ppi_mean_b > 0
                then {{ delta_ratio_variance('ppi_mean_a', 'ppi_mean_b', 'rectifier_variance_a', 'rectifier_variance_b',
                                             'rectifier_covariance_ab') }}
            end as rectifier_share_variance
        from (
            select
                {{ keys }},
                lam,
                unlabeled_n,
                labeled_n,
                labeled_sum_ya,
                labeled_sum_yb,
                {{ ppi_mean('unlabeled_n', 'unlabeled_sum_a', 'labeled_n', 'rectifier_sum_a', 'lam') }} as ppi_mean_a,
                {{ ppi_mean('unlabeled_n', 'unlabeled_sum_b', 'labeled_n', 'rectifier_sum_b', 'lam') }} as ppi_mean_b,
                {%- for name in ['a', 'b', 'ab'] %}
                {{ ppi_covariance('unlabeled_n', 'unlabeled_covariance_' ~ (name * 2 if name != 'ab' else name),
                                  'labeled_n', 'rectifier_covariance_' ~ (name * 2 if name != 'ab' else name), 'lam') }}
                    as {{ 'covariance_ab' if name == 'ab' else 'variance_' ~ name }},
                {%- endfor %}
                {%- for name, first, second in [('a', 'a', 'a'), ('b', 'b', 'b'), ('ab', 'a', 'b')] %}
                rectifier_covariance_{{ first ~ second }} / cast(labeled_n as double)
                    as rectifier_{{ 'co' if name == 'ab' else '' }}variance_{{ name }}{% if not loop.last %},{% endif %}
                {%- endfor %}
            from (
            -- the unlabeled f's and the rectifier's (co)variances, each a named column
            select
                *,
                {%- for source, n in [('unlabeled', 'unlabeled_n'), ('rectifier', 'labeled_n')] %}
                {%- set outer = loop %}
                {%- for first, second in [('a', 'a'), ('b', 'b'), ('a', 'b')] %}
                {{ covariance_from_sums(source ~ '_sum_' ~ first ~ second, source ~ '_sum_' ~ first,
                                        source ~ '_sum_' ~ second, n) }}
                    as {{ source }}_covariance_{{ first ~ second }}{% if not (loop.last and outer.last) %},{% endif %}
                {%- endfor %}
                {%- endfor %}
            from (
                select
                    {{ keys }},
                    cast({{ lam_column }} as double) as lam,
                    unlabeled_n,
                    unlabeled_sum_a,
                    unlabeled_sum_b,
                    unlabeled_sum_aa,
                    unlabeled_sum_bb,
                    unlabeled_sum_ab,
                    labeled_n,
                    labeled_sum_ya,
                    labeled_sum_yb,
                    {{ rectifier_sum('labeled_sum_ya', 'labeled_sum_fa', lam_column) }} as rectifier_sum_a,
                    {{ rectifier_sum('labeled_sum_yb', 'labeled_sum_fb', lam_column) }} as rectifier_sum_b,
                    {{ rectifier_cross_sum('labeled_sum_yaya', 'labeled_sum_yafa', 'labeled_sum_yafa', 'labeled_sum_fafa', lam_column) }}
                        as rectifier_sum_aa,
                    {{ rectifier_cross_sum('labeled_sum_ybyb', 'labeled_sum_ybfb', 'labeled_sum_ybfb', 'labeled_sum_fbfb', lam_column) }}
                        as rectifier_sum_bb,
                    {{ rectifier_cross_sum('labeled_sum_yayb', 'labeled_sum_yafb', 'labeled_sum_fayb', 'labeled_sum_fafb', lam_column) }}
                        as rectifier_sum_ab
                from {{ relation }}
            ) as rectified
            ) as moments
        ) as means
    ) as ratios
    ) as projected
    {%- if interval %}
    ) as hulls
    {%- endif %}
{%- endmacro %}

{#- Which hand labels correct a cell (docs/CORRECTION.md): the cell's own when it has at least
    var ppi_cell_min_hand_labeled of them, else the pool's (the same cell summed over every model: the
    assumption is that the labeler's errors, E[y - f], are the same for every model in the pool). A cell whose
    units are all hand-labeled (no unlabeled unit) is its own hand-label estimate: lam = 0, its own labels.
    Emits, from the ppi_ratio_sums() columns of the cell and of the pool, named with the prefixes `cell` and `pool`
    (e.g. 'cells.' and 'pools.' for two aliases, 'cell_' and 'pool_' for prefixed columns of one row): rectifier_source ('cell' |
    'pooled' | null), lam, the cell's unlabeled sums, the cell's own hand-labeled units in the subset and in the
    category (cell_labeled_sum_yb, cell_labeled_sum_ya: the interval keeps the shares they cannot rule out,
    ppi_interval_widen_*), and labeled_n / labeled_sum_* of the chosen source.
    No corrected value (labeled_n of the source below var ppi_min_hand_labeled) is decided by the caller. -#}
{% macro ppi_cell_or_pool_columns(cell, pool) -%}
    {%- set use_cell = "(" ~ cell ~ "unlabeled_n = 0 or " ~ cell ~ "labeled_n >= " ~ var('ppi_cell_min_hand_labeled') ~ ")" -%}
    case
        when {{ cell }}labeled_n > 0 and {{ use_cell }} then 'cell'
        when coalesce({{ pool }}labeled_n, 0) > 0 then 'pooled'
    end as rectifier_source,
    cast(case when {{ cell }}unlabeled_n = 0 then 0 else {{ var('ppi_lambda') }} end as double) as lam,
    {{ cell }}unlabeled_n as unlabeled_n,
    {{ cell }}unlabeled_sum_a as unlabeled_sum_a,
    {{ cell }}unlabeled_sum_b as unlabeled_sum_b,
    {{ cell }}unlabeled_sum_aa as unlabeled_sum_aa,
    {{ cell }}unlabeled_sum_bb as unlabeled_sum_bb,
    {{ cell }}unlabeled_sum_ab as unlabeled_sum_ab,
    cast({{ cell }}labeled_sum_ya as double) as cell_labeled_sum_ya,
    cast({{ cell }}labeled_sum_yb as double) as cell_labeled_sum_yb,
    cast(case when {{ use_cell }} then {{ cell }}labeled_n else coalesce({{ pool }}labeled_n, 0) end as bigint) as labeled_n,
    {%- for name in ['fa', 'fb', 'ya', 'yb', 'fafa', 'fbfb', 'fafb', 'yaya', 'ybyb', 'yayb', 'yafa', 'ybfb', 'yafb', 'fayb'] %}
    cast(case when {{ use_cell }} then {{ cell }}labeled_sum_{{ name }} else coalesce({{ pool }}labeled_sum_{{ name }}, 0) end
        as double) as labeled_sum_{{ name }}{% if not loop.last %},{% endif %}
    {%- endfor %}
{%- endmacro %}

{#- The corrected shares of a correction model, from one relation of per-unit indicators to one row per cell
    (docs/CORRECTION.md): `indicators` holds a column model, the cell_keys, is_hand_labeled, the indicators f_a, f_b
    (machine) and y_a, y_b (hand), and unit_count (how many units share the row's values). A cell is model x
    cell_keys, plus the same over every model (model = var all_models_label); its pool is the cell_keys summed over
    every model (so the 'All' cell is its own pool). How a per-model cell uses its own hand labels and the pool's is
    var ppi_cell_pool_rule: 'composite' (default; ppi_composite_estimates, macros/stats/ppi_composite.sql: a
    Fay-Herriot composite of the two, weighted by the between-model spread of the labeler's error) or 'switch'
    (ppi_switch_estimates: its own from var ppi_cell_min_hand_labeled of them, else the pool's,
    ppi_cell_or_pool_columns()); only cells whose pool has a hand label get a row; estimates are null where the
    source (the pool, for a composite row) has fewer than var ppi_min_hand_labeled hand-labeled units. The interval is ppi_ratio_select()'s, then a
    pooled cell's own hand labels keep 0 (none of them in the category) and 1 (all of them) inside it
    (ppi_interval_widen_*; docs/CORRECTION.md, "The interval"). Emits one query with the columns model,
    cell_keys, rectifier_source, lam, unlabeled_n, hand_labeled_n, corrected_share, corrected_share_ci_lower,
    corrected_share_ci_upper, corrected_share_variance. Nested selects, not CTEs, so that the caller keeps its own
    CTEs. A cell or pool spanning sampling strata (every model; stratum_keys within a model) weights each stratum by
    its size: ppi_stratified_sums() (macros/stats/ppi_stratified.sql). -#}
{% macro ppi_corrected_shares(indicators, cell_keys, stratum_keys=[]) -%}
    {%- set rule = var('ppi_cell_pool_rule') -%}
    {%- if rule == 'composite' -%}
        {%- set estimates = ppi_composite_estimates(indicators, cell_keys, stratum_keys) -%}
    {%- elif rule == 'switch' -%}
        {%- set estimates = ppi_switch_estimates(indicators, cell_keys, stratum_keys) -%}
    {%- else -%}
        {{ exceptions.raise_compiler_error("var ppi_cell_pool_rule must be 'composite' or 'switch', not '" ~ rule ~ "'") }}
    {%- endif -%}
    select
        model,
        {%- for key in cell_keys %}
        {{ key }},
        {%- endfor %}
        rectifier_source,
        cast(lam as double) as lam,
        cast(unlabeled_n as bigint) as unlabeled_n,
        cast(labeled_n as bigint) as hand_labeled_n,
        {%- for column, expression in [
            ('corrected_share', 'corrected_share'),
            ('corrected_share_ci_lower', ppi_interval_widen_lower('corrected_share_ci_lower', 'cell_labeled_sum_yb',
                                                                  'cell_labeled_sum_ya', to_zero_only=true)),
            ('corrected_share_ci_upper', ppi_interval_widen_upper('corrected_share_ci_upper', 'cell_labeled_sum_yb',
                                                                  'cell_labeled_sum_ya', to_one_only=true)),
            ('corrected_share_variance', 'corrected_share_variance')] %}
        cast(case when labeled_n >= {{ var('ppi_min_hand_labeled') }} then {{ expression }} end as double)
            as {{ column }}{% if not loop.last %},{% endif %}
        {%- endfor %}
    from (
        {{ estimates }}
    ) as estimates
{%- endmacro %}

{#- The per-model cells of ppi_corrected_shares, with the ppi_ratio_sums() columns: a query. (The 'All' cells are
    their own pools: ppi_pool_sums' rows of model = var all_models_label.) -#}
{% macro ppi_cell_sums(indicators, cell_keys, stratum_keys=[]) -%}
    {{ ppi_stratified_sums(indicators, ['model'] + cell_keys, stratum_keys) }}
{%- endmacro %}

{#- The pools of ppi_corrected_shares (the cell keys over every model, each model a stratum): a query, one row per
    pool and target cell (column model; join on it too): under var ppi_machine_mean all_units a pooled cell's own
    hand-labeled f is scaled in its pool (macros/stats/ppi_machine_mean.sql). -#}
{% macro ppi_pool_sums(indicators, cell_keys, stratum_keys=[]) -%}
    {{ ppi_stratified_sums(indicators, cell_keys, ['model'] + stratum_keys, target_key='model') }}
{%- endmacro %}

{#- `cells.k = pools.k and ...` over the cell keys. -#}
{% macro ppi_join_on_keys(left, right, cell_keys) -%}
    {% for key in cell_keys %}{{ left }}.{{ key }} = {{ right }}.{{ key }}{% if not loop.last %} and {% endif %}{% endfor %}
{%- endmacro %}

{#- var ppi_cell_pool_rule = 'switch': each cell's rectifier is its own or the pool's (ppi_cell_or_pool_columns),
    through ppi_ratio_select. A query with ppi_ratio_select's columns, rectifier_source and the cell's own hand
    counts in the subset and the category (cell_labeled_sum_yb, cell_labeled_sum_ya). -#}
{% macro ppi_switch_estimates(indicators, cell_keys, stratum_keys=[]) -%}
    {%- set is_all = "pools.model = '" ~ var('all_models_label') ~ "'" -%}
    {%- set chosen -%}
        (
            select
                model,
                {%- for key in cell_keys %}
                {{ key }},
                {%- endfor %}
                {{ ppi_cell_or_pool_columns('cell_', 'pool_') }}
            from (
                -- each pool beside its cell: the per-model cell's sums, or for the 'All' cell (its own pool) the pool's
                select
                    pools.model,
                    {%- for key in cell_keys %}
                    pools.{{ key }},
                    {%- endfor %}
                    {%- for column in ppi_ratio_sum_columns() %}
                    case when {{ is_all }} then pools.{{ column }} else cells.{{ column }} end as cell_{{ column }},
                    pools.{{ column }} as pool_{{ column }}{% if not loop.last %},{% endif %}
                    {%- endfor %}
                from (
                    {{ ppi_pool_sums(indicators, cell_keys, stratum_keys) }}
                ) as pools
                left join (
                    {{ ppi_cell_sums(indicators, cell_keys, stratum_keys) }}
                ) as cells
                    on pools.model = cells.model and {{ ppi_join_on_keys('pools', 'cells', cell_keys) }}
                where pools.labeled_n > 0 and ({{ is_all }} or cells.model is not null)
            ) as paired
        ) as chosen
    {%- endset -%}
    {{ ppi_ratio_select(chosen, ['model'] + cell_keys + ['rectifier_source', 'cell_labeled_sum_ya',
                                                          'cell_labeled_sum_yb']) }}
{%- endmacro %}
