{#- The interval of a corrected (PPI) share: from its estimate, its variance and the hand-label counts behind them
    to bounds inside [0, 1] that never claim a certainty the hand labels do not give (docs/CORRECTION.md, "The
    interval"). The interval is the hull (smallest interval containing all) of:

    1. the PPI normal interval raw_share -/+ z sqrt(variance), each bound clamped to [0, 1] (the validated
       construction; unchanged wherever the estimate is inside (0, 1) and the hand labels show the category
       and its complement);
    2. where the PPI variance degenerates (variance <= 0, or the projected share is 0 or 1, where the normal
       approximation of a share breaks down as a Wald interval does): the Wilson score interval of the projected
       share on m units, m = the hand-labeled units of the subset (the only measurement of the labeler's errors),
       at most the units behind the estimate;
    3. where the hand-labeled units show none of the category (hand_category_n = 0): [0, Wilson upper bound of 0
       of m] (a share they cannot rule out is inside, and so is 0); where they show every unit in the category:
       [Wilson lower bound of m of m, 1].

    (ppi_corrected_shares then applies the widening of part 3 with a pooled cell's own hand labels, keeping 0 and 1
    only: ppi_interval_widen_lower / _upper with to_zero_only / to_one_only.)
    The hull of intervals covers whenever any of them covers, so it is at least as valid as the most valid of the
    three: where 1 holds (inside the parameter space, the PPI central limit theorem) it is kept, and at the
    boundary, where it does not, the hand labels' own score bound is. With m = 0 (no hand-labeled unit in the
    subset) and a degenerate variance nothing is ruled out: [0, 1]. Arguments are SQL expressions (column names):
    raw_share (the ratio before projection), share (projected onto [0, 1]), its delta-method variance,
    hand_n (m, from ppi_interval_hand_n), hand_subset_n and hand_category_n (hand-labeled units in the subset and
    in the category: labeled_sum_yb, labeled_sum_ya). z defaults to var('wilson_z'). Null where the share or the
    variance is null. -#}

{#- m of part 2 and 3: the hand-labeled units of the subset, at most the units behind the estimate (N + n: a pooled
    rectifier can rest on more hand labels than the cell has units, and no bound may be tighter than the cell). -#}
{% macro ppi_interval_hand_n(total_n, hand_subset_n) -%}
    greatest(cast(0 as double), least(cast({{ hand_subset_n }} as double), cast({{ total_n }} as double)))
{%- endmacro %}

{#- Whether the PPI variance is degenerate for the interval (part 2). A variance below 1e-12 (sd 1e-6) is a zero
    that floating-point rounding left positive (sums of products over the units: seen at 1e-23 to 1e-17 on the dev
    audit, where every unit of a cell agreed and the projected share fell a hair below 1), not a measurement:
    no share estimated from hand labels has an sd near 1e-6, and part 2 only widens (the hull). -#}
{% macro ppi_interval_is_degenerate(share, variance) -%}
    (cast({{ variance }} as double) < 1e-12 or cast({{ share }} as double) <= 0 or cast({{ share }} as double) >= 1)
{%- endmacro %}

{#- Parts 1 and 2: the hull of the clamped normal interval and, where the variance degenerates, the Wilson interval
    of the projected share on hand_n units; ppi_interval_lower / _upper widen it by part 3. A caller that computes it
    as a named column in a nested select passes that column as their `hull` (the expression is long: inlining it
    in every formula that reads it multiplies the compiled SQL). -#}
{% macro ppi_interval_hull_lower(raw_share, share, variance, hand_n, z=none) -%}
    least(least(cast(1 as double), {{ normal_interval_lower(raw_share, variance, z) }}), case when
        {{- ' ' ~ ppi_interval_is_degenerate(share, variance) }} then coalesce(
        {{- wilson_lower(share ~ ' * cast(' ~ hand_n ~ ' as double)', hand_n, z) }}, cast(0 as double)) end)
{%- endmacro %}

{% macro ppi_interval_hull_upper(raw_share, share, variance, hand_n, z=none) -%}
    greatest(greatest(cast(0 as double), {{ normal_interval_upper(raw_share, variance, z) }}), case when
        {{- ' ' ~ ppi_interval_is_degenerate(share, variance) }} then coalesce(
        {{- wilson_upper(share ~ ' * cast(' ~ hand_n ~ ' as double)', hand_n, z) }}, cast(1 as double)) end)
{%- endmacro %}

{#- hull: a column holding ppi_interval_hull_lower (_upper) of the same arguments, read instead of inlining it. -#}
{% macro ppi_interval_lower(raw_share, share, variance, hand_n, hand_subset_n, hand_category_n, z=none, hull=none) -%}
    case when {{ share }} is not null and {{ variance }} is not null then
        {{ ppi_interval_widen_lower(
            hull if hull is not none else ppi_interval_hull_lower(raw_share, share, variance, hand_n, z),
            hand_n, hand_category_n, z=z, subset_n=hand_subset_n) }}
    end
{%- endmacro %}

{% macro ppi_interval_upper(raw_share, share, variance, hand_n, hand_subset_n, hand_category_n, z=none, hull=none) -%}
    case when {{ share }} is not null and {{ variance }} is not null then
        {{ ppi_interval_widen_upper(
            hull if hull is not none else ppi_interval_hull_upper(raw_share, share, variance, hand_n, z),
            hand_n, hand_category_n, z=z, subset_n=hand_subset_n) }}
    end
{%- endmacro %}

{#- Part 3 on its own: widen a lower bound to what m hand-labeled units (hand_n of them in the subset, k =
    hand_category_n in the category) cannot rule out: to 0 where k = 0, to the Wilson lower bound of m of m where
    every one is in the category (k >= subset_n, subset_n defaulting to hand_n). to_zero_only keeps only the
    first (ppi_corrected_shares applies it with a pooled cell's own few hand labels: a cell whose own hand labels
    show none of a category is not declared to have some on the strength of other models' labeler errors alone).
    Null where the bound is null. Widening an interval never lowers its coverage. -#}
{% macro ppi_interval_widen_lower(lower, hand_n, hand_category_n, z=none, subset_n=none, to_zero_only=false) -%}
    {%- set m = "cast(" ~ hand_n ~ " as double)" -%}
    {%- set k = "cast(" ~ hand_category_n ~ " as double)" -%}
    {%- set all_in = "cast(" ~ (subset_n if subset_n is not none else hand_n) ~ " as double)" -%}
    case when {{ lower }} is not null then
        least(
            cast({{ lower }} as double),
            case when {{ m }} > 0 and {{ k }} <= 0 then cast(0 as double) end
            {%- if not to_zero_only %},
            case when {{ m }} > 0 and {{ k }} >= {{ all_in }} then {{ wilson_lower(m, m, z) }} end
            {%- endif %}
        )
    end
{%- endmacro %}

{#- The mirror image: to 1 where every hand-labeled unit of the subset is in the category, to the Wilson upper
    bound of 0 of m where none is (to_one_only keeps only the first). -#}
{% macro ppi_interval_widen_upper(upper, hand_n, hand_category_n, z=none, subset_n=none, to_one_only=false) -%}
    {%- set m = "cast(" ~ hand_n ~ " as double)" -%}
    {%- set k = "cast(" ~ hand_category_n ~ " as double)" -%}
    {%- set all_in = "cast(" ~ (subset_n if subset_n is not none else hand_n) ~ " as double)" -%}
    case when {{ upper }} is not null then
        greatest(
            cast({{ upper }} as double),
            case when {{ m }} > 0 and {{ k }} >= {{ all_in }} then cast(1 as double) end
            {%- if not to_one_only %},
            case when {{ m }} > 0 and {{ k }} <= 0 then {{ wilson_upper('0', m, z) }} end
            {%- endif %}
        )
    end
{%- endmacro %}
