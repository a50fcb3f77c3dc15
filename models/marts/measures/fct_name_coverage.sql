-- Name coverage (METHOD.md §5): per model (and var all_models_label), domain and condition, how many
-- characters have a name and how many a first name found in the lexicon. Characters without a matched first
-- name are left out of every race count: unmatched_share is that share, reported beside every race measure.

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
        sum(with_matched_name) as with_matched_name
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
    cast(with_matched_name as double) / cast(characters as double) as matched_share
from coverage
