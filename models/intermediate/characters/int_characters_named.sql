{{ config(**story_incremental()) }}
-- METHOD.md §4.5-§4.6: the name of each character and its parts. Among the kept names, 'Unspecified' only when
-- no other remains; the name given by the most samples wins, ties to the earliest sample. Then: the nickname in
-- double quotes is removed, tokens are title-cased, more than max_name_tokens tokens -> no name; an honorific
-- first (2 tokens -> last name, 3 -> first + last), a title first ('Dr' -> the next token is the last name,
-- 'Chef'/'Nurse' -> the next token is the first name), else 1 token -> first, 2 -> first + last,
-- 3 -> first + last (the middle token is kept only in full_name).
with

candidates as (
    select story_id, role, name, samples_naming, first_sample, is_unspecified
    from {{ changed_only(ref('int_name_candidates_filtered')) }}
    where is_kept
),

name_prefixes as (
    select lower(trim(prefix)) as prefix, prefix_kind, next_token_is
    from {{ ref('name_prefixes') }}
),

chosen as (
    select story_id, role, name as chosen_name, is_unspecified
    from candidates
    qualify row_number() over (
        partition by story_id, role
        order by is_unspecified asc, samples_naming desc, first_sample asc, name asc
    ) = 1
),

tokenized as (
    select
        story_id,
        role,
        chosen_name,
        case
            when is_unspecified then {{ empty_text_list() }}
            else
                {{ list_map(
                    split_on_whitespace(remove_quoted_nickname('chosen_name')),
                    'token -> ' ~ title_case_token('token')
                ) }}
        end as name_tokens
    from chosen
),

classified as (
    select
        tokenized.*,
        {{ list_length('name_tokens') }} as token_count,
        name_prefixes.prefix_kind,
        name_prefixes.next_token_is
    from tokenized
    left join name_prefixes
        on lower({{ list_element('tokenized.name_tokens', 1) }}) = name_prefixes.prefix
),

parsed as (
    select
        story_id,
        role,
        chosen_name,
        name_tokens,
        token_count,
        prefix_kind,
        token_count between 1 and {{ var('max_name_tokens') }}
        and not (prefix_kind is not null and token_count = 1) as has_name,
        case
            when token_count < 1 or token_count > {{ var('max_name_tokens') }} then null
            when prefix_kind = 'honorific' and token_count = 3 then {{ list_element('name_tokens', 2) }}
            when prefix_kind = 'honorific' then null
            when prefix_kind = 'title' and next_token_is = 'first_name' then {{ list_element('name_tokens', 2) }}
            when prefix_kind = 'title' then null
            else {{ list_element('name_tokens', 1) }}
        end as first_name,
        case
            when token_count < 1 or token_count > {{ var('max_name_tokens') }} then null
            when
                prefix_kind = 'honorific' and token_count in (2, 3)
                then {{ list_element('name_tokens', 'token_count') }}
            when prefix_kind = 'title' and next_token_is = 'last_name' then {{ list_element('name_tokens', 2) }}
            when prefix_kind is null and token_count >= 2 then {{ list_element('name_tokens', 'token_count') }}
        end as last_name
    from classified
)

select
    story_id,
    role,
    chosen_name,
    case when has_name then {{ list_join('name_tokens', "' '") }} end as full_name,
    first_name,
    last_name,
    {{ normalize_name_key('first_name') }} as first_name_key,
    prefix_kind as name_prefix_kind
from parsed
