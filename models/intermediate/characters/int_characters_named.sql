{{ config(**story_incremental()) }}
-- docs/METHOD.md §4.5-§4.6: the name of each character and its parts. Among the kept names, 'Unspecified' only when
-- no other remains; the name given by the most samples wins, ties to the earliest sample. The chosen name is then
-- parsed by the rule var name_rule names (macros/text/person_name.sql): study = docs/METHOD.md §4.6 exactly, refined =
-- docs/NAME_RULE.md (a title before two tokens gives first + last; suffixes, punctuation, initials).
-- The parse depends on the name alone: it runs once per distinct chosen name, and every character gets its name's.
with

candidates as (
    select story_id, role, name, samples_naming, first_sample, is_unspecified
    from {{ changed_only(ref('int_name_candidates_filtered')) }}
    where is_kept
),

chosen as (
    select story_id, role, name as chosen_name, is_unspecified
    from candidates
    qualify row_number() over (
        partition by story_id, role
        order by is_unspecified asc, samples_naming desc, first_sample asc, name asc
    ) = 1
),

distinct_names as (
    select distinct chosen_name, is_unspecified
    from chosen
),

parsed as (
    {{ parse_person_names(
        'distinct_names', ['chosen_name', 'is_unspecified'], "case when not is_unspecified then chosen_name end") }}
),

keyed as (
    select
        chosen_name,
        is_unspecified,
        full_name,
        first_name,
        last_name,
        {{ normalize_name_key('first_name') }} as first_name_key,
        name_prefix_kind,
        name_parse
    from parsed
)

select
    chosen.story_id,
    chosen.role,
    chosen.chosen_name,
    keyed.full_name,
    keyed.first_name,
    keyed.last_name,
    keyed.first_name_key,
    keyed.name_prefix_kind,
    keyed.name_parse,
    cast('{{ var("name_rule") }}' as string) as name_rule
from chosen
inner join keyed
    on
        chosen.chosen_name = keyed.chosen_name
        and chosen.is_unspecified = keyed.is_unspecified
