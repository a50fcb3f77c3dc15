-- Rankings with ties (docs/CONTRASTS.md): per measure, domain, condition and group, the models ordered by how far
-- their ratio is from parity (|ln R| for representation, |ln S| for subordination; a ratio of 0 is the
-- farthest), with the range of ranks each model can hold. Model B counts as closer to parity than model A when
-- the difference of their distances, |ln R_a| - |ln R_b|, tested against 0 with the standard error of their
-- contrast (fct_model_contrasts: the two log variances added; conservative for a difference of absolute values),
-- has a Benjamini–Hochberg q below var model_contrast_fdr (family: every pair of one measure, as the contrasts),
-- or, when A's ratio is 0, when their contrast's q is. rank_best = 1 + models closer, rank_worst = models ranked
-- - models farther; models whose rank ranges overlap cannot be told apart at the chosen FDR.
{%- set fdr = var('model_contrast_fdr') %}
{%- set groups = ['measure', 'domain', 'condition', 'race', 'gender'] %}

with contrasts as (

    select * from {{ ref('fct_model_contrasts') }}

),

representation as (

    select * from {{ ref('int_representation_ratios_computed') }}
    where model <> '{{ var("all_models_label") }}' and representation_ratio is not null

),

subordination as (

    select * from {{ ref('int_subordination_ratios_computed') }}
    where model <> '{{ var("all_models_label") }}' and subordination_ratio is not null

),

estimates as (

    select
        cast('representation' as string) as measure,
        domain,
        condition,
        race,
        gender,
        model,
        baseline_set,
        representation_ratio as estimate,
        ci_lower,
        ci_upper
    from representation

    union all

    select
        cast('subordination' as string) as measure,
        domain,
        cast(null as string) as condition,
        race,
        gender,
        model,
        cast(null as string) as baseline_set,
        subordination_ratio as estimate,
        ci_lower,
        ci_upper
    from subordination

),

placed as (

    select
        *,
        case when estimate > 0 then abs(ln(estimate)) end as log_distance
    from estimates

),

unordered_pairs as (

    select
        contrasts.measure,
        contrasts.domain,
        contrasts.condition,
        contrasts.race,
        contrasts.gender,
        contrasts.model_a,
        contrasts.model_b,
        contrasts.contrast_q_value,
        placed_a.log_distance as log_distance_a,
        placed_b.log_distance as log_distance_b,
        placed_b.log_distance - placed_a.log_distance as distance_difference,
        contrasts.log_standard_error
    from contrasts
    inner join placed as placed_a
        on {{ keys_match('contrasts', 'placed_a', ['measure', 'domain'], ['condition', 'race', 'gender']) }}
        and contrasts.model_a = placed_a.model
    inner join placed as placed_b
        on {{ keys_match('contrasts', 'placed_b', ['measure', 'domain'], ['condition', 'race', 'gender']) }}
        and contrasts.model_b = placed_b.model

),

distance_tests as (

    select
        *,
        {{ altman_bland_p_value('distance_difference', '0',
                                'distance_difference - ' ~ var('wilson_z') ~ ' * log_standard_error',
                                'distance_difference + ' ~ var('wilson_z') ~ ' * log_standard_error') }}
            as distance_p_value
    from unordered_pairs

),

distance_q_values as (

    {{ reported_race_q_values('distance_tests', 'distance_p_value', ['measure'], 'distance_q_value') }}

),

-- each pair seen from both of its models: the model's distance beside the other's
pair_tests as (

    select
        measure, domain, condition, race, gender, model_a as model, log_distance_a as log_distance,
        log_distance_b as other_log_distance, contrast_q_value, distance_q_value
    from distance_q_values

    union all

    select
        measure, domain, condition, race, gender, model_b as model, log_distance_b as log_distance,
        log_distance_a as other_log_distance, contrast_q_value, distance_q_value
    from distance_q_values

),

compared as (

    select
        {{ groups | join(', ') }},
        model,
        sum(case
            when distance_q_value < {{ fdr }} and other_log_distance < log_distance then 1
            when contrast_q_value < {{ fdr }} and log_distance is null and other_log_distance is not null then 1
            else 0
        end) as closer_models,
        sum(case
            when distance_q_value < {{ fdr }} and other_log_distance > log_distance then 1
            when contrast_q_value < {{ fdr }} and other_log_distance is null and log_distance is not null then 1
            else 0
        end) as farther_models
    from pair_tests
    group by {{ groups | join(', ') }}, model

),

ranked as (

    select
        placed.*,
        cast(coalesce(compared.closer_models, 0) as bigint) as closer_models,
        cast(coalesce(compared.farther_models, 0) as bigint) as farther_models,
        -- ties broken by model name, also where equal ratios differ in their last bits (2/30 and 6/90 summed in
        -- another order): distances are compared to 12 decimals, far below any difference a contrast can resolve
        row_number() over (
            partition by placed.{{ groups | join(', placed.') }}
            order by
                case when placed.log_distance is null then 1 else 0 end, round(placed.log_distance, 12), placed.model
        ) as distance_rank,
        count(*) over (partition by placed.{{ groups | join(', placed.') }}) as models_ranked
    from placed
    left join compared
        on {{ keys_match('placed', 'compared', ['measure', 'domain', 'model'], ['condition', 'race', 'gender']) }}

)

select
    measure,
    domain,
    condition,
    race,
    gender,
    model,
    baseline_set,
    cast(estimate as double) as estimate,
    cast(ci_lower as double) as ci_lower,
    cast(ci_upper as double) as ci_upper,
    cast(log_distance as double) as log_distance,
    cast(distance_rank as bigint) as distance_rank,
    cast(models_ranked as bigint) as models_ranked,
    closer_models,
    farther_models,
    cast(1 + closer_models as bigint) as rank_best,
    cast(models_ranked - farther_models as bigint) as rank_worst,
    cast(models_ranked - 1 - closer_models - farther_models as bigint) as tied_models,
    cast(closer_models = 0 as boolean) as among_closest,
    cast({{ fdr }} as double) as fdr
from ranked
