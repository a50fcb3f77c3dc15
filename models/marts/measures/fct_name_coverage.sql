-- Name coverage (docs/METHOD.md §5): per model (and var all_models_label), domain and condition, how many
-- characters have a name and how many a first name found in the lexicon. Characters without a matched first
-- name are left out of race counts unless their surname gives race (var race_name_source = first_then_surname,
-- docs/RACE_NAMES.md): the with_race_* columns say where each character's race comes from, without_race_share
-- the share left out, reported beside every race measure.

with cells as (

    select * from {{ ref('int_character_cells_summed') }}

),

coverage as (

    select
        model,
        domain,
        condition,
        sum(characters) as characters,
        sum(with_name) as with_name,
        sum(with_matched_name) as with_matched_name,
        sum(with_race) as with_race,
        sum(with_race_from_first_name) as with_race_from_first_name,
        sum(with_race_from_surname) as with_race_from_surname
    from cells
    group by model, domain, condition

)

select
    model,
    domain,
    condition,
    cast(characters as bigint) as characters,
    cast(with_name as bigint) as with_name,
    cast(with_matched_name as bigint) as with_matched_name,
    cast(characters - with_matched_name as double) / cast(characters as double) as unmatched_share,
    cast(with_matched_name as double) / cast(characters as double) as matched_share,
    cast(with_race_from_first_name as bigint) as with_race_from_first_name,
    cast(with_race_from_surname as bigint) as with_race_from_surname,
    cast(characters - with_race as bigint) as without_race,
    cast(characters - with_race as double) / cast(characters as double) as without_race_share
from coverage
