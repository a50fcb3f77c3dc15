-- Census 2010 surname shares as fractions in the Census's own six groups, with the match key (the same fold as
-- first names). The mapping to the project's groups is seeds/census_surname_groups.csv (int_surnames_mapped).
with

source_surnames as (
    {{ source_or_empty('raw', 'census_surnames', [
        ('surname', 'string'), ('n_total', 'double'), ('pct_white', 'double'), ('pct_black', 'double'),
        ('pct_api', 'double'), ('pct_aian', 'double'), ('pct_two_or_more', 'double'), ('pct_hispanic', 'double'),
        ('source', 'string'), ('vintage', 'string')]) }}
)

select
    surname,
    {{ normalize_name_key('surname') }} as surname_key,
    n_total,
    pct_white / 100.0 as share_white,
    pct_black / 100.0 as share_black,
    pct_api / 100.0 as share_api,
    pct_aian / 100.0 as share_aian,
    pct_two_or_more / 100.0 as share_two_or_more,
    pct_hispanic / 100.0 as share_hispanic,
    source,
    vintage
from source_surnames
