-- Couple-type shares of romantic Love stories corrected from hand labels by prediction-powered inference
-- (docs/METHOD.md §9, docs/CORRECTION.md). Unit: the couple = one romantic story with its two characters
-- (int_couples_typed, the same couples as int_couples_counted). For couple type t the share is the ratio of two
-- means over the model's couples:
--   a: 1{the pair of genders is t}              b: 1{both genders in female, male, nonbinary}
-- f from the inferred genders, y from the hand genders, as int_correction_units_counted counts the couples (its
-- couple family; macro correction_units, its per-story counts summed over the stories): a couple counts as
-- hand-labeled only when both characters carry a hand label. The rectifier combines the model's own hand-labeled
-- couples and every model's (var ppi_cell_pool_rule; ppi_corrected_shares).
-- A model's couples come from power-neutral and power-laden Love stories, two sampling strata of lfh audit-sample:
-- the cell weights them by size (stratified PPI, macros/stats/ppi_stratified.sql).
with

couples as (
    select
        model, prompt_condition, machine_class, hand_class, is_hand_labeled,
        cast(sum(unit_count) as bigint) as unit_count
    from {{ correction_units() }}
    where family = 'couple'
    group by model, prompt_condition, machine_class, hand_class, is_hand_labeled
),

couple_types as (
    {{ codes_relation(couple_type_codes(), 'couple_type') }}
),

indicators as (
    select
        couples.model,
        couples.prompt_condition,
        couple_types.couple_type,
        couples.is_hand_labeled,
        couples.unit_count,
        case when couples.machine_class = couple_types.couple_type then 1.0 else 0.0 end as f_a,
        case when couples.machine_class in {{ sql_in_list(couple_type_codes()) }} then 1.0 else 0.0 end as f_b,
        case when couples.hand_class = couple_types.couple_type then 1.0 else 0.0 end as y_a,
        case when couples.hand_class in {{ sql_in_list(couple_type_codes()) }} then 1.0 else 0.0 end as y_b
    from couples
    cross join couple_types
)

{{ ppi_corrected_shares('indicators', ['couple_type'], stratum_keys=['prompt_condition']) }}
