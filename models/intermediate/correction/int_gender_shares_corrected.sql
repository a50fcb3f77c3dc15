-- Gender shares corrected from hand labels by prediction-powered inference (docs/METHOD.md §9, docs/CORRECTION.md).
-- Unit: the character. Cell: model x domain x condition (and the same over every model, var all_models_label),
-- as in int_groups_counted. For gender g the share is the ratio of two means over the cell's characters:
--   a: 1{gender = g}                            b: 1{gender in female, male, nonbinary}
-- f from the inferred gender, y from the hand gender, as int_correction_units_counted counts the characters (its
-- gender family; macro correction_units), its per-story counts summed over the stories: the sums are the same, over
-- a few thousand rows instead of about one per character. The rectifier combines the cell's own hand labels and the
-- cell summed over models (var ppi_cell_pool_rule; ppi_corrected_shares).
-- No row where no character of the cell's domain x condition has a hand label; null estimates below
-- var ppi_min_hand_labeled.
with

units as (
    select
        model, domain, condition, machine_class, hand_class, is_hand_labeled,
        cast(sum(unit_count) as bigint) as unit_count
    from {{ correction_units() }}
    where family = 'gender'
    group by model, domain, condition, machine_class, hand_class, is_hand_labeled
),

genders as (
    {{ codes_relation(measure_gender_codes(), 'gender') }}
),

indicators as (
    select
        units.model,
        units.domain,
        units.condition,
        genders.gender,
        units.is_hand_labeled,
        units.unit_count,
        case when units.machine_class = genders.gender then 1.0 else 0.0 end as f_a,
        case when units.machine_class in {{ sql_in_list(measure_gender_codes()) }} then 1.0 else 0.0 end as f_b,
        case when units.hand_class = genders.gender then 1.0 else 0.0 end as y_a,
        case when units.hand_class in {{ sql_in_list(measure_gender_codes()) }} then 1.0 else 0.0 end as y_b
    from units
    cross join genders
)

{{ ppi_corrected_shares('indicators', ['domain', 'condition', 'gender']) }}
