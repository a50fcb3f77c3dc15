-- A user's own first-name shares as fractions (any pct_* column may be absent: it comes back null).
with

source_custom as (
    {{ source_or_empty('raw', 'custom_first_names', [
        ('first_name', 'string'), ('pct_white', 'double'), ('pct_black', 'double'), ('pct_latine', 'double'),
        ('pct_asian', 'double'), ('pct_aian', 'double'), ('pct_multiracial', 'double'), ('pct_mena', 'double'),
        ('pct_nhpi', 'double'), ('mode', 'string'), ('source', 'string')]) }}
)

select
    first_name,
    {{ normalize_name_key('first_name') }} as first_name_key,
    pct_white / 100.0 as share_white,
    pct_black / 100.0 as share_black,
    pct_latine / 100.0 as share_latine,
    pct_asian / 100.0 as share_asian,
    pct_aian / 100.0 as share_aian,
    pct_multiracial / 100.0 as share_multiracial,
    pct_mena / 100.0 as share_mena,
    pct_nhpi / 100.0 as share_nhpi,
    lower(trim(mode)) as mode,
    source
from source_custom
