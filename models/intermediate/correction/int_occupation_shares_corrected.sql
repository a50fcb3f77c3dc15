-- Gender shares of the Labor occupation holders corrected from hand labels by prediction-powered inference
-- (docs/METHOD.md §9, docs/CORRECTION.md), for fct_occupation_representation_ratios. Unit: the character who holds the
-- occupation (the subject of a Labor prompt, as in int_occupation_groups_counted). Cell: model x occupation x
-- condition (and the same over every model, var all_models_label). For gender g of var occupation_gender_codes
-- the share is the ratio of two means over the cell's characters, as the mart's uncorrected share is defined:
--   a: 1{gender = g}                            b: 1{gender in var occupation_gender_codes (female, male)}
-- f from the inferred gender, y from the hand gender, as int_correction_units_counted counts the holders (its
-- occupation family; macro correction_units), its per-story counts summed over the stories. The rectifier
-- combines the cell's own hand labels and the occupation x condition over every model (var ppi_cell_pool_rule;
-- ppi_corrected_shares). Race shares are not corrected (docs/CORRECTION.md, "What is not corrected").
with

units as (
    select
        model, cell_key as occupation, condition, machine_class, hand_class, is_hand_labeled,
        cast(sum(unit_count) as bigint) as unit_count
    from {{ correction_units() }}
    where family = 'occupation'
    group by model, cell_key, condition, machine_class, hand_class, is_hand_labeled
),

genders as (
    {{ codes_relation(var('occupation_gender_codes'), 'gender') }}
),

indicators as (
    select
        units.model,
        units.occupation,
        units.condition,
        genders.gender,
        units.is_hand_labeled,
        units.unit_count,
        case when units.machine_class = genders.gender then 1.0 else 0.0 end as f_a,
        case when units.machine_class in {{ sql_in_list(var('occupation_gender_codes')) }} then 1.0 else 0.0 end
            as f_b,
        case when units.hand_class = genders.gender then 1.0 else 0.0 end as y_a,
        case when units.hand_class in {{ sql_in_list(var('occupation_gender_codes')) }} then 1.0 else 0.0 end
            as y_b
    from units
    cross join genders
)

{{ ppi_corrected_shares('indicators', ['occupation', 'condition', 'gender']) }}
