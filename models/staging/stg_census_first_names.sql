-- Census-style first-name shares as fractions, with the lexicon match key (docs/METHOD.md §5).
with

source_census as (
    {{ source_or_empty('raw', 'census_first_names', [
        ('first_name', 'string'), ('n_total', 'double'), ('pct_white', 'double'), ('pct_black', 'double'),
        ('pct_latine', 'double'), ('pct_asian', 'double'), ('pct_aian', 'double'), ('pct_multiracial', 'double'),
        ('source', 'string'), ('vintage', 'string')]) }}
)

select
    first_name,
    {{ normalize_name_key('first_name') }} as first_name_key,
    n_total,
    pct_white / 100.0 as share_white,
    pct_black / 100.0 as share_black,
    pct_latine / 100.0 as share_latine,
    pct_asian / 100.0 as share_asian,
    pct_aian / 100.0 as share_aian,
    pct_multiracial / 100.0 as share_multiracial,
    source,
    vintage
from source_census
