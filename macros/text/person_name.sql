{#- docs/METHOD.md §4.6 and the refined name parse (docs/NAME_RULE.md), the one place a person's name is split into
    first and last name. parse_person_names(relation, key_columns, name_expr, rule) is a select over `relation` (a CTE
    or ref) giving, per row, the key columns and:
      full_name         the name's tokens (title-cased, prefix and suffix included) joined by spaces; null: no name
      first_name        null when the rule reads none
      last_name         null when the rule reads none
      name_prefix_kind  honorific | title when the first token is one (seeds/name_prefixes*.csv)
      name_parse        the branch that decided: no_name | prefix_alone | one_token | first_last | prefix_last |
                        prefix_first | prefix_first_last | initial (refined: the first-name token is one letter) |
                        description (refined: several tokens, all lowercase, e.g. 'older sister', or a
                        capitalised relation phrase, e.g. 'Younger Brother')
    name_expr: the name text (null: no name). rule: study | refined (default var name_rule). Both rules' seeds are
    referenced whichever rule renders, so the model's dependencies do not change with the var. -#}
{% macro parse_person_names(relation, key_columns, name_expr, rule=none) -%}
    {%- set rule = rule or var('name_rule') -%}
    {%- set study_prefixes = ref('name_prefixes') -%}
    {%- set refined_prefixes = ref('name_prefixes_refined') -%}
    {%- set suffixes = ref('name_suffixes') -%}
    {%- set description_words = ref('name_description_words') -%}
    {%- if rule not in ['study', 'refined'] -%}
        {{ exceptions.raise_compiler_error("name_rule must be study or refined, got '" ~ rule ~ "'") }}
    {%- endif -%}
    {%- set keys = key_columns | join(', ') -%}
    {%- if rule == 'study' %}
    {{ laissez_faire.study_name_parse(relation, keys, name_expr, study_prefixes) }}
    {%- else %}
    {{ laissez_faire.refined_name_parse(relation, keys, name_expr, refined_prefixes, suffixes, description_words) }}
    {%- endif -%}
{%- endmacro %}

{#- §4.6 exactly: nickname in double quotes removed, tokens title-cased; more than max_name_tokens tokens (prefix
    included) -> no name; honorific first: 2 tokens -> last name, 3 -> first + last; title first: 'Dr' -> the next
    token is the last name, 'Chef'/'Nurse' -> the first name, whatever follows ('Dr. Sarah Lee': last name Sarah);
    else 1 token -> first name, 2-3 -> first + last. A prefix alone is no name. -#}
{% macro study_name_parse(relation, keys, name_expr, prefixes) -%}
    {%- set second_token = laissez_faire.list_element('name_tokens', 2) -%}
    {%- set last_token = laissez_faire.list_element('name_tokens', 'token_count') -%}
    {%- set token_count = laissez_faire.list_length('tokenized.name_tokens') -%}
    select
        {{ keys }},
        case when has_name then {{ laissez_faire.list_join('name_tokens', "' '") }} end as full_name,
        case
            when not has_name then null
            when prefix_kind = 'honorific' and token_count = 3 then {{ second_token }}
            when prefix_kind = 'honorific' then null
            when prefix_kind = 'title' and next_token_is = 'first_name' then {{ second_token }}
            when prefix_kind = 'title' then null
            else {{ laissez_faire.list_element('name_tokens', 1) }}
        end as first_name,
        case
            when not has_name then null
            when prefix_kind = 'honorific' and token_count in (2, 3) then {{ last_token }}
            when prefix_kind = 'title' and next_token_is = 'last_name' then {{ second_token }}
            when prefix_kind is null and token_count >= 2 then {{ last_token }}
        end as last_name,
        prefix_kind as name_prefix_kind,
        case
            when token_count = 1 and prefix_kind is not null then 'prefix_alone'
            when not has_name then 'no_name'
            when prefix_kind = 'honorific' and token_count = 3 then 'prefix_first_last'
            when prefix_kind = 'honorific' then 'prefix_last'
            when prefix_kind = 'title' and next_token_is = 'first_name' then 'prefix_first'
            when prefix_kind = 'title' then 'prefix_last'
            when token_count = 1 then 'one_token'
            else 'first_last'
        end as name_parse
    from (
        select
            tokenized.*,
            {{ token_count }} as token_count,
            name_prefixes.prefix_kind,
            name_prefixes.next_token_is,
            {{ token_count }} between 1 and {{ var('max_name_tokens') }}
            and not (name_prefixes.prefix_kind is not null and {{ token_count }} = 1) as has_name
        from (
            select
                {{ keys }},
                case
                    when {{ name_expr }} is null then {{ laissez_faire.empty_text_list() }}
                    else {{ laissez_faire.list_map(
                        laissez_faire.split_on_whitespace(laissez_faire.remove_quoted_nickname(name_expr)),
                        'token -> ' ~ laissez_faire.title_case_token('token')) }}
                end as name_tokens
            from {{ relation }}
        ) as tokenized
        left join {{ prefixes }} as name_prefixes
            on lower({{ laissez_faire.list_element('tokenized.name_tokens', 1) }}) = lower(trim(name_prefixes.prefix))
    ) as classified
{%- endmacro %}

{#- The refined parse (docs/NAME_RULE.md). Before splitting, a nickname in double quotes or in parentheses is removed;
    each token loses leading non-letters, trailing characters other than letters and periods, and a possessive
    's; tokens left empty are dropped; tokens are title-cased. A name of several tokens given all in lowercase
    ('older sister', 'legendary wide receiver') is a description, no name: labelers capitalise names. So is a
    capitalised relation phrase: no prefix, several tokens, the first a modifier and the last a relation noun of
    seeds/name_description_words.csv ('Younger Brother', 'The Boss', 'My Best Friend'); both ends must match, so
    'Sarah Friend' and 'Minh Son' stay names. A first
    token in seeds/name_prefixes_refined.csv (matched without its final period) is the prefix; a last token in
    seeds/name_suffixes.csv (Jr., III, PhD) is a suffix when another name token remains. The tokens between are
    the name proper: none, or more than max_name_tokens -> no name; 1 after a prefix -> the prefix's next_token_is
    (honorifics and most titles: the last name; Nurse, Sir, Dame: the first name); 1 without a prefix -> first
    name; 2-3 -> first + last (the middle token kept only in full_name), with or without a prefix. A one-letter
    first token is an initial: no first name (last names likewise). Periods are kept in full_name and removed from
    first_name and last_name. -#}
{% macro refined_name_parse(relation, keys, name_expr, prefixes, suffixes, description_words) -%}
    {%- set without_nicknames = laissez_faire.regex_replace_all(
        laissez_faire.remove_quoted_nickname(name_expr), "'[(][^)]*[)]'", "' '") -%}
    {%- set cleaned_token = laissez_faire.regex_replace_all(
        laissez_faire.regex_replace_all(
            laissez_faire.regex_replace_all('token', "'^[^\\p{L}]+'", "''"),
            "'[^\\p{L}.]+$'", "''"),
        "'[\\x27’][Ss]$'", "''") -%}
    {%- set first_token = laissez_faire.list_element('name_tokens', 'name_start') -%}
    {#- The seeds' lookup keys of the raw first and last tokens (prefix, suffix and relation-phrase joins). greatest(..,
        1): Spark's element_at refuses index 0 (an empty list). -#}
    {%- set token_count = laissez_faire.list_length('tokenized.name_tokens') -%}
    {%- set first_token_key = laissez_faire.name_lookup_key(laissez_faire.list_element('tokenized.name_tokens', 1)) -%}
    {%- set last_token_key = laissez_faire.name_lookup_key(laissez_faire.list_element(
        'tokenized.name_tokens', 'greatest(' ~ token_count ~ ', 1)')) -%}
    {#- greatest(.., 1): name_end is 0 for an empty list (then there is no name), and Spark's element_at refuses 0 -#}
    {%- set last_token = laissez_faire.list_element('name_tokens', 'greatest(name_end, 1)') -%}
    select
        {{ keys }},
        case when has_name then {{ laissez_faire.list_join('name_tokens', "' '") }} end as full_name,
        case
            when not has_name then null
            when prefix_kind is not null and name_count = 1 and next_token_is = 'last_name' then null
            when length({{ laissez_faire.regex_replace_all(first_token, "'[.]+$'", "''") }}) = 1 then null
            else {{ laissez_faire.regex_replace_all(first_token, "'[.]+$'", "''") }}
        end as first_name,
        case
            when not has_name then null
            when name_count = 1 and not (prefix_kind is not null and next_token_is = 'last_name') then null
            when length({{ laissez_faire.regex_replace_all(last_token, "'[.]+$'", "''") }}) = 1 then null
            else {{ laissez_faire.regex_replace_all(last_token, "'[.]+$'", "''") }}
        end as last_name,
        prefix_kind as name_prefix_kind,
        case
            when prefix_kind is not null and name_count = 0 then 'prefix_alone'
            when (is_lowercase and token_count >= 2) or is_relation_phrase then 'description'
            when not has_name then 'no_name'
            when length({{ laissez_faire.regex_replace_all(first_token, "'[.]+$'", "''") }}) = 1
                and not (prefix_kind is not null and name_count = 1 and next_token_is = 'last_name') then 'initial'
            when prefix_kind is not null and name_count >= 2 then 'prefix_first_last'
            when prefix_kind is not null and next_token_is = 'first_name' then 'prefix_first'
            when prefix_kind is not null then 'prefix_last'
            when name_count = 1 then 'one_token'
            else 'first_last'
        end as name_parse
    from (
        select
            sized.*,
            sized.name_end - sized.name_start + 1 as name_count,
            sized.name_end - sized.name_start + 1 between 1 and {{ var('max_name_tokens') }}
            and not (sized.is_lowercase and sized.token_count >= 2)
            and not sized.is_relation_phrase as has_name
        from (
            select
                looked_up.*,
                case when looked_up.prefix_kind is not null then 2 else 1 end as name_start,
                looked_up.token_count - case when looked_up.has_suffix then 1 else 0 end as name_end
            from (
                select
                    tokenized.*,
                    {{ token_count }} as token_count,
                    name_prefixes.prefix_kind,
                    name_prefixes.next_token_is,
                    name_suffixes.suffix is not null as has_suffix,
                    coalesce(name_prefixes.prefix_kind is null
                        and description_modifiers.word is not null
                        and description_relations.word is not null, false) as is_relation_phrase
                from (
                    select
                        {{ keys }},
                        case
                            when {{ name_expr }} is null then {{ laissez_faire.empty_text_list() }}
                            else {{ laissez_faire.list_map(
                                laissez_faire.list_keep(
                                    laissez_faire.list_map(
                                        laissez_faire.split_on_whitespace(without_nicknames),
                                        'token -> ' ~ cleaned_token),
                                    "token -> token <> ''"),
                                'token -> ' ~ laissez_faire.title_case_token('token')) }}
                        end as name_tokens,
                        coalesce({{ name_expr }} = lower({{ name_expr }}), false) as is_lowercase
                    from {{ relation }}
                ) as tokenized
                left join {{ prefixes }} as name_prefixes
                    on {{ first_token_key }} = lower(trim(name_prefixes.prefix))
                left join {{ suffixes }} as name_suffixes
                    on {{ last_token_key }} = lower(trim(name_suffixes.suffix))
                    and {{ token_count }} - case when name_prefixes.prefix_kind is not null then 1 else 0 end >= 2
                left join {{ description_words }} as description_modifiers
                    on {{ first_token_key }} = lower(trim(description_modifiers.word))
                    and description_modifiers.word_kind = 'modifier'
                left join {{ description_words }} as description_relations
                    on {{ last_token_key }} = lower(trim(description_relations.word))
                    and description_relations.word_kind = 'relation'
                    and {{ token_count }} >= 2
            ) as looked_up
        ) as sized
    ) as classified
{%- endmacro %}

{#- A prefix or suffix token as the refined seeds list it: lowercase, final periods removed ('Dr.' -> 'dr'). -#}
{% macro name_lookup_key(token_expr) -%}
    {{ laissez_faire.regex_replace_all('lower(' ~ token_expr ~ ')', "'[.]+$'", "''") }}
{%- endmacro %}
