-- Which models differ (docs/CONTRASTS.md): per group, domain and condition, every pair of models compared by
-- the ratio of their shares (representation) or of their subordination ratios (subordination), with a 95%
-- interval on the log scale, an Altman–Bland p-value and Benjamini–Hochberg q-values. BH family = every row of
-- one measure whose race is reported (all domains, conditions, groups and model pairs of the build together);
-- the corrected contrasts (gender rows) form a family of their own. Unreported races keep their p-values and
-- get null q-values.

with contrasts as (

    select * from {{ ref('int_model_contrasts_computed') }}

),

with_q_values as (

    {{ reported_race_q_values('contrasts', 'contrast_p_value', ['measure'], 'contrast_q_value') }}

),

uncorrected_tested as (

    select
        measure, domain, condition, race, gender, model_a, model_b, numerator_a, denominator_a, numerator_b,
        denominator_b, estimate_a, estimate_b, epsilon, log_ratio, log_variance, contrast_ratio, contrast_ci_lower,
        contrast_ci_upper, contrast_p_value, contrast_q_value, corrected_contrast_ratio, corrected_contrast_ci_lower,
        corrected_contrast_ci_upper, corrected_contrast_p_value
    from with_q_values

),

with_corrected_q_values as (

    {{ bh_q_values('uncorrected_tested', 'corrected_contrast_p_value', ['measure'], 'corrected_contrast_q_value') }}

)

select
    measure,
    domain,
    condition,
    race,
    gender,
    model_a,
    model_b,
    numerator_a,
    denominator_a,
    numerator_b,
    denominator_b,
    estimate_a,
    estimate_b,
    epsilon,
    log_ratio,
    cast(sqrt(log_variance) as double) as log_standard_error,
    contrast_ratio,
    contrast_ci_lower,
    contrast_ci_upper,
    contrast_p_value,
    cast(contrast_q_value as double) as contrast_q_value,
    corrected_contrast_ratio,
    corrected_contrast_ci_lower,
    corrected_contrast_ci_upper,
    corrected_contrast_p_value,
    cast(corrected_contrast_q_value as double) as corrected_contrast_q_value
from with_corrected_q_values
