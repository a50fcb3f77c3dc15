-- Contrasts between two models (docs/CONTRASTS.md) before the q-values, one row per unordered model pair
-- (model_a < model_b) and group, 'All' left out:
--   representation: per domain x condition, the ratio of the two models' shares (= of their representation
--     ratios: p* cancels), with the zero-count rule of METHOD.md §6 on the pair (epsilon added to N, D and Q of
--     both models when either N < 1) and Var(ln) = the two models' log_share_variance() added. Gender rows
--     also get the contrast of the corrected shares (int_gender_shares_corrected), Var(ln) by the delta method.
--   subordination: per domain (condition null), the ratio of the two models' S (int_subordination_ratios_computed,
--     each with its own epsilon), Var(ln S) = log_share_variance() of its subordinate and dominant shares.

with moments as (

    select * from {{ ref('int_group_moments_summed') }}

),

subordination as (

    select * from {{ ref('int_subordination_ratios_computed') }}
    where model <> '{{ var("all_models_label") }}'

),

corrected as (

    select * from {{ ref('int_gender_shares_corrected') }}
    where model <> '{{ var("all_models_label") }}'

),

share_pairs as (

    select
        a.domain,
        a.condition,
        a.race,
        a.gender,
        a.model as model_a,
        b.model as model_b,
        a.numerator as numerator_a,
        a.denominator as denominator_a,
        a.sum_of_squares as sum_of_squares_a,
        b.numerator as numerator_b,
        b.denominator as denominator_b,
        b.sum_of_squares as sum_of_squares_b,
        {{ subordination_epsilon('a.numerator', 'b.numerator') }} as epsilon
    from moments as a
    inner join moments as b
        on {{ keys_match('a', 'b', ['domain', 'condition'], ['race', 'gender']) }}
        and a.model < b.model

),

share_contrasts as (

    select
        share_pairs.*,
        {{ share_pair_log_ratio('share_pairs.numerator_a', 'share_pairs.denominator_a', 'share_pairs.numerator_b',
                                'share_pairs.denominator_b', 'share_pairs.epsilon') }} as log_ratio,
        {{ share_pair_log_variance('share_pairs.sum_of_squares_a', 'share_pairs.numerator_a',
                                   'share_pairs.denominator_a', 'share_pairs.sum_of_squares_b',
                                   'share_pairs.numerator_b', 'share_pairs.denominator_b',
                                   'share_pairs.epsilon') }} as log_variance,
        ln(corrected_a.corrected_share / corrected_b.corrected_share) as corrected_log_ratio,
        {{ independent_log_ratio_variance('corrected_a.corrected_share', 'corrected_b.corrected_share',
                                          'corrected_a.corrected_share_variance',
                                          'corrected_b.corrected_share_variance') }} as corrected_log_variance
    from share_pairs
    left join corrected as corrected_a
        on share_pairs.race is null
        and share_pairs.model_a = corrected_a.model
        and {{ keys_match('share_pairs', 'corrected_a', ['domain', 'condition', 'gender']) }}
        and corrected_a.corrected_share > 0
    left join corrected as corrected_b
        on share_pairs.race is null
        and share_pairs.model_b = corrected_b.model
        and {{ keys_match('share_pairs', 'corrected_b', ['domain', 'condition', 'gender']) }}
        and corrected_b.corrected_share > 0

),

subordination_logs as (

    select
        subordination.model,
        subordination.domain,
        subordination.race,
        subordination.gender,
        subordination.subordination_ratio,
        ln(subordination.subordination_ratio) as log_ratio,
        {{ subordination_log_variance('sub.sum_of_squares', 'subordination.subordinate_numerator',
                                      'subordination.subordinate_denominator', 'dom.sum_of_squares',
                                      'subordination.dominant_numerator', 'subordination.dominant_denominator',
                                      'subordination.epsilon') }} as log_variance
    from subordination
    inner join moments as sub
        on sub.condition = 'subordinate'
        and {{ keys_match('subordination', 'sub', ['model', 'domain'], ['race', 'gender']) }}
    inner join moments as dom
        on dom.condition = 'dominant'
        and {{ keys_match('subordination', 'dom', ['model', 'domain'], ['race', 'gender']) }}
    where subordination.subordination_ratio is not null

),

subordination_contrasts as (

    select
        a.domain,
        a.race,
        a.gender,
        a.model as model_a,
        b.model as model_b,
        a.subordination_ratio as estimate_a,
        b.subordination_ratio as estimate_b,
        a.log_ratio - b.log_ratio as log_ratio,
        a.log_variance + b.log_variance as log_variance
    from subordination_logs as a
    inner join subordination_logs as b
        on {{ keys_match('a', 'b', ['domain'], ['race', 'gender']) }}
        and a.model < b.model

),

-- both measures in one shape: the subordination contrasts have no condition, counts or corrected shares
contrasts as (

    select
        cast('representation' as string) as measure, domain, condition, race, gender, model_a, model_b, numerator_a,
        denominator_a, numerator_b, denominator_b,
        case when denominator_a > 0 then numerator_a / denominator_a end as estimate_a,
        case when denominator_b > 0 then numerator_b / denominator_b end as estimate_b,
        epsilon, log_ratio, log_variance, corrected_log_ratio, corrected_log_variance
    from share_contrasts

    union all

    select
        cast('subordination' as string) as measure, domain, cast(null as string) as condition, race, gender, model_a,
        model_b, cast(null as double) as numerator_a, cast(null as bigint) as denominator_a,
        cast(null as double) as numerator_b, cast(null as bigint) as denominator_b, estimate_a, estimate_b,
        cast(null as double) as epsilon, log_ratio, log_variance, cast(null as double) as corrected_log_ratio,
        cast(null as double) as corrected_log_variance
    from subordination_contrasts

)

select
    measure,
    domain,
    condition,
    race,
    gender,
    model_a,
    model_b,
    cast(numerator_a as double) as numerator_a,
    cast(denominator_a as bigint) as denominator_a,
    cast(numerator_b as double) as numerator_b,
    cast(denominator_b as bigint) as denominator_b,
    cast(estimate_a as double) as estimate_a,
    cast(estimate_b as double) as estimate_b,
    cast(epsilon as double) as epsilon,
    cast(log_ratio as double) as log_ratio,
    cast(log_variance as double) as log_variance,
    {{ log_contrast_columns('log_ratio', 'log_variance', 'contrast_') }},
    {{ log_contrast_columns('corrected_log_ratio', 'corrected_log_variance', 'corrected_contrast_') }}
from contrasts
