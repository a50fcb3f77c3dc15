-- MENA and NH/PI first-name shares as fractions, with the lexicon match key (docs/METHOD.md §5).
with

source_wikipedia as (
    {{ source_or_empty('raw', 'wikipedia_first_names', [
        ('first_name', 'string'), ('n_bearers', 'double'), ('n_mena', 'double'), ('n_nhpi', 'double'),
        ('pct_mena', 'double'), ('pct_nhpi', 'double'), ('source', 'string'), ('vintage', 'string')]) }}
)

select
    first_name,
    {{ normalize_name_key('first_name') }} as first_name_key,
    n_bearers,
    n_mena,
    n_nhpi,
    pct_mena / 100.0 as share_mena,
    pct_nhpi / 100.0 as share_nhpi,
    source,
    vintage
from source_wikipedia
