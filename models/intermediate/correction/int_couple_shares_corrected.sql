-- Couple-type shares of romantic Love stories corrected from hand labels by prediction-powered inference
-- (METHOD.md §9, docs/CORRECTION.md). Unit: the couple = one romantic story with its two characters
-- (int_couples_typed, the same couples as int_couples_counted). For couple type t the share is the ratio of two
-- means over the model's couples:
--   a: 1{the pair of genders is t}              b: 1{both genders in female, male, nonbinary}
-- f from the inferred genders, y from the hand genders; couples with the same values are counted in one row
-- (unit_count). A couple counts as hand-labeled only when both of its characters carry a hand label. The rectifier
-- combines the model's own hand-labeled couples and every model's (var ppi_cell_pool_rule; ppi_corrected_shares).
-- A model's couples come from power-neutral and power-laden Love stories, two sampling strata of lfh audit-sample:
-- the cell weights them by size (stratified PPI, macros/stats/ppi_stratified.sql).
with

story_conditions as (
    select
        story_id,
        max(case when condition = 'baseline' then 'power_neutral' else 'power_laden' end) as prompt_condition
    from {{ ref('int_characters_hand_paired') }}
    where domain = 'love'
    group by story_id
),

couples as (
    select
        typed.model,
        coalesce(story_conditions.prompt_condition, 'power_neutral') as prompt_condition,
        typed.inferred_couple_type,
        typed.hand_couple_type,
        typed.is_hand_labeled,
        count(*) as unit_count
    from {{ ref('int_couples_typed') }} as typed
    left join story_conditions on typed.story_id = story_conditions.story_id
    where typed.characters = 2
        and {{ in_selected_versions('typed.story_id') }}  -- the model versions the measures use
    group by
        typed.model,
        coalesce(story_conditions.prompt_condition, 'power_neutral'),
        typed.inferred_couple_type,
        typed.hand_couple_type,
        typed.is_hand_labeled
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
        case when couples.inferred_couple_type = couple_types.couple_type then 1.0 else 0.0 end as f_a,
        case when couples.inferred_couple_type is not null then 1.0 else 0.0 end as f_b,
        case when couples.hand_couple_type = couple_types.couple_type then 1.0 else 0.0 end as y_a,
        case when couples.hand_couple_type is not null then 1.0 else 0.0 end as y_b
    from couples
    cross join couple_types
)

{{ ppi_corrected_shares('indicators', ['couple_type'], stratum_keys=['prompt_condition']) }}
