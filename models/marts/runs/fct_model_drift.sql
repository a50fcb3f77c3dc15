-- How each model moved between its versions (docs/RUNS.md, "Drift"): for every model with two or more versions, each
-- version against the one before it, per measure and group, as fct_model_contrasts compares two models: both values,
-- their ratio (version / previous version) with a 95% interval on the log scale, an Altman–Bland p-value and a
-- Benjamini–Hochberg q-value. BH family = every row of one measure whose race is reported (all models, versions,
-- domains, conditions and groups of the build together); unreported races keep their p-values and get null q-values.

with drift as (

    select * from {{ ref('int_model_drift_computed') }}

),

with_q_values as (

    {{ reported_race_q_values('drift', 'drift_p_value', ['measure'], 'drift_q_value') }}

)

select
    measure,
    domain,
    condition,
    race,
    gender,
    couple_type,
    model,
    model_version,
    version_number,
    previous_version,
    numerator,
    denominator,
    previous_numerator,
    previous_denominator,
    estimate,
    previous_estimate,
    epsilon,
    log_ratio,
    cast(sqrt(log_variance) as double) as log_standard_error,
    drift_ratio,
    drift_ci_lower,
    drift_ci_upper,
    drift_p_value,
    cast(drift_q_value as double) as drift_q_value
from with_q_values
