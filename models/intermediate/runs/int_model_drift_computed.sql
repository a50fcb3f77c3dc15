-- How each model moved between its versions (docs/RUNS.md, "Drift") before the q-values: for every model with two or
-- more versions, each version against the one before it (int_model_versions_ranked.version_number), per measure and
-- group, with the formulas of fct_model_contrasts (macros/stats/contrast.sql) on the two versions' counts
-- (int_version_groups_counted; the two versions' stories are disjoint):
--   representation: per domain x condition, the ratio of the two versions' shares (= of their representation
--     ratios: p* cancels), zero-count rule on the pair, Var(ln) = share_pair_log_variance();
--   subordination: per domain, the ratio of the two versions' subordination ratios S (each with its own epsilon),
--     Var(ln) = the two subordination_log_variance() added;
--   couple_type: per couple type of romantic Love stories (int_couples_typed, inferred genders), the ratio of the
--     two versions' shares of typed couples (0/1 values: Q = N), as representation.
-- The ratio is version / previous version: above 1, the later version shows more of the group.
with

versions as (
    select model, model_version, version_number
    from {{ ref('int_model_versions_ranked') }}
    where versions_of_model >= 2
),

version_pairs as (
    select
        current_version.model,
        current_version.model_version,
        current_version.version_number,
        previous_version.model_version as previous_version
    from versions as current_version
    inner join versions as previous_version
        on
            current_version.model = previous_version.model
            and current_version.version_number = previous_version.version_number + 1
),

moments as (
    select * from {{ ref('int_version_groups_counted') }}
),

story_versions as (
    select story_id, model_version
    from {{ ref('int_story_versions_assigned') }}
),

couple_types as (
    {{ codes_relation(couple_type_codes(), 'couple_type') }}
),

typed_couples as (
    select couples.model, story_versions.model_version, couples.inferred_couple_type as couple_type
    from {{ ref('int_couples_typed') }} as couples
    inner join story_versions
        on couples.story_id = story_versions.story_id
    where couples.inferred_couple_type is not null
),

couple_totals as (
    select model, model_version, cast(count(*) as bigint) as total_couples
    from typed_couples
    group by model, model_version
),

couple_counts as (
    select
        couple_totals.model,
        couple_totals.model_version,
        couple_types.couple_type,
        cast(count(typed_couples.couple_type) as double) as numerator,
        max(couple_totals.total_couples) as denominator
    from couple_totals
    cross join couple_types
    left join typed_couples
        on
            couple_totals.model = typed_couples.model
            and couple_totals.model_version = typed_couples.model_version
            and couple_types.couple_type = typed_couples.couple_type
    group by couple_totals.model, couple_totals.model_version, couple_types.couple_type
),

-- representation and couple type: shares in one shape (couple types have no domain, condition or group columns)
shares as (
    select
        cast('representation' as string) as measure, model, model_version, domain, condition, race, gender,
        cast(null as string) as couple_type, numerator, denominator, sum_of_squares
    from moments
    union all
    select
        cast('couple_type' as string) as measure, model, model_version, cast('love' as string) as domain,
        cast(null as string) as condition, cast(null as string) as race, cast(null as string) as gender,
        couple_type, numerator, denominator, numerator as sum_of_squares
    from couple_counts
),

share_pairs as (
    select
        shares.measure,
        shares.domain,
        shares.condition,
        shares.race,
        shares.gender,
        shares.couple_type,
        version_pairs.model,
        version_pairs.model_version,
        version_pairs.version_number,
        version_pairs.previous_version,
        shares.numerator,
        shares.denominator,
        shares.sum_of_squares,
        previous_shares.numerator as previous_numerator,
        previous_shares.denominator as previous_denominator,
        previous_shares.sum_of_squares as previous_sum_of_squares,
        {{ subordination_epsilon('shares.numerator', 'previous_shares.numerator') }} as epsilon
    from version_pairs
    inner join shares
        on
            version_pairs.model = shares.model
            and version_pairs.model_version = shares.model_version
    inner join shares as previous_shares
        on
            version_pairs.model = previous_shares.model
            and version_pairs.previous_version = previous_shares.model_version
            and shares.measure = previous_shares.measure
            and {{ keys_match('shares', 'previous_shares', ['domain'],
                              ['condition', 'race', 'gender', 'couple_type']) }}
),

share_drift as (
    select
        share_pairs.*,
        {{ share_pair_log_ratio('numerator', 'denominator', 'previous_numerator', 'previous_denominator',
                                'epsilon') }} as log_ratio,
        {{ share_pair_log_variance('sum_of_squares', 'numerator', 'denominator', 'previous_sum_of_squares',
                                   'previous_numerator', 'previous_denominator', 'epsilon') }} as log_variance
    from share_pairs
),

by_role as (
    select
        model,
        model_version,
        domain,
        race,
        gender,
        cast(coalesce(sum(case when condition = 'subordinate' then numerator end), 0) as double)
            as subordinate_numerator,
        cast(coalesce(sum(case when condition = 'subordinate' then denominator end), 0) as bigint)
            as subordinate_denominator,
        cast(coalesce(sum(case when condition = 'subordinate' then sum_of_squares end), 0) as double)
            as subordinate_sum_of_squares,
        cast(coalesce(sum(case when condition = 'dominant' then numerator end), 0) as double) as dominant_numerator,
        cast(coalesce(sum(case when condition = 'dominant' then denominator end), 0) as bigint)
            as dominant_denominator,
        cast(coalesce(sum(case when condition = 'dominant' then sum_of_squares end), 0) as double)
            as dominant_sum_of_squares
    from moments
    where condition in ('subordinate', 'dominant')
    group by model, model_version, domain, race, gender
),

subordination as (
    select
        by_role.*,
        {{ subordination_epsilon('subordinate_numerator', 'dominant_numerator') }} as epsilon
    from by_role
),

subordination_logs as (
    select
        model,
        model_version,
        domain,
        race,
        gender,
        {{ subordination_ratio('subordinate_numerator', 'subordinate_denominator', 'dominant_numerator',
                               'dominant_denominator', 'epsilon') }} as subordination_ratio,
        {{ subordination_log_variance('subordinate_sum_of_squares', 'subordinate_numerator',
                                      'subordinate_denominator', 'dominant_sum_of_squares', 'dominant_numerator',
                                      'dominant_denominator', 'epsilon') }} as log_variance
    from subordination
),

subordination_drift as (
    select
        current_logs.domain,
        current_logs.race,
        current_logs.gender,
        version_pairs.model,
        version_pairs.model_version,
        version_pairs.version_number,
        version_pairs.previous_version,
        current_logs.subordination_ratio as estimate,
        previous_logs.subordination_ratio as previous_estimate,
        ln(current_logs.subordination_ratio) - ln(previous_logs.subordination_ratio) as log_ratio,
        current_logs.log_variance + previous_logs.log_variance as log_variance
    from version_pairs
    inner join subordination_logs as current_logs
        on
            version_pairs.model = current_logs.model
            and version_pairs.model_version = current_logs.model_version
    inner join subordination_logs as previous_logs
        on
            version_pairs.model = previous_logs.model
            and version_pairs.previous_version = previous_logs.model_version
            and {{ keys_match('current_logs', 'previous_logs', ['domain'], ['race', 'gender']) }}
    where current_logs.subordination_ratio is not null and previous_logs.subordination_ratio is not null
),

drift as (
    select
        measure, domain, condition, race, gender, couple_type, model, model_version, version_number,
        previous_version, numerator, denominator, previous_numerator, previous_denominator,
        case when denominator > 0 then numerator / denominator end as estimate,
        case when previous_denominator > 0 then previous_numerator / previous_denominator end as previous_estimate,
        epsilon, log_ratio, log_variance
    from share_drift

    union all

    select
        cast('subordination' as string) as measure, domain, cast(null as string) as condition, race, gender,
        cast(null as string) as couple_type, model, model_version, version_number, previous_version,
        cast(null as double) as numerator, cast(null as bigint) as denominator,
        cast(null as double) as previous_numerator, cast(null as bigint) as previous_denominator,
        estimate, previous_estimate, cast(null as double) as epsilon, log_ratio, log_variance
    from subordination_drift
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
    cast(version_number as integer) as version_number,
    previous_version,
    cast(numerator as double) as numerator,
    cast(denominator as bigint) as denominator,
    cast(previous_numerator as double) as previous_numerator,
    cast(previous_denominator as bigint) as previous_denominator,
    cast(estimate as double) as estimate,
    cast(previous_estimate as double) as previous_estimate,
    cast(epsilon as double) as epsilon,
    cast(log_ratio as double) as log_ratio,
    cast(log_variance as double) as log_variance,
    {{ log_contrast_columns('log_ratio', 'log_variance', 'drift_') }}
from drift
