{#- The text rules of docs/METHOD.md §2-§5, each written once. Dialect pieces come from macros/dialect. -#}

{#- Runs of whitespace become one space; ends trimmed (how a query is matched to the prompt catalog). -#}
{% macro normalize_whitespace(text_expr) -%}
    trim({{ laissez_faire.regex_replace_all(text_expr, "'[\\s\\p{Z}]+'", "' '") }})
{%- endmacro %}

{#- §4.2 token rule: lowercase, split on whitespace, keep only the letters of each token (Unicode letters).
    Removing every character that is neither a letter nor whitespace before splitting gives the same tokens
    as cleaning token by token, with one regex per text instead of one per token. Tokens left empty are
    dropped on both sides, so a reference made only of punctuation has no tokens. -#}
{% macro letter_tokens(text_expr) -%}
    {{ laissez_faire.split_on_whitespace(laissez_faire.regex_replace_all('lower(' ~ text_expr ~ ')', "'[^\\p{L}\\s\\p{Z}]'", "''")) }}
{%- endmacro %}

{#- §4.2 token set as one string: lowercased, every character that is neither a letter nor whitespace removed, each
    remaining whitespace character made a space, and a space added at each end. Tokens stay separated by one or
    more spaces, so a token is in the set exactly when ' token ' occurs in the string. Two regex passes per text. -#}
{% macro padded_token_text(text_expr) -%}
    (' ' || {{ laissez_faire.regex_replace_all(
        laissez_faire.regex_replace_all('lower(coalesce(' ~ text_expr ~ ", ''))", "'[^\\p{L}\\s\\p{Z}]+'", "''"),
        "'[^ \\p{L}]'", "' '") }} || ' ')
{%- endmacro %}

{#- §4.2: a reference (or name, §4.5) is in the story when every one of its tokens is in the story's token set.
    tokens_expr: the reference's letter_tokens; story_token_text_expr: the story's padded_token_text. A reference
    without letters has no tokens and passes (vacuously), as an all() over no tokens would. -#}
{% macro tokens_in_story(tokens_expr, story_token_text_expr) -%}
    {{ laissez_faire.list_all_true(laissez_faire.list_map(tokens_expr, "token -> " ~ laissez_faire.text_contains(story_token_text_expr, "' ' || token || ' '"))) }}
{%- endmacro %}

{#- §4.4: a counted reference's tokens for the indicator lookup: split on spaces, lowercased (punctuation kept,
    so 'mr.' and 'mr' are both indicator words). -#}
{% macro indicator_tokens(text_expr) -%}
    {{ laissez_faire.split_on_whitespace('lower(' ~ text_expr ~ ')') }}
{%- endmacro %}

{#- §5: the lexicon match key, the same on both sides: lowercase, accents stripped, hyphens and apostrophes removed,
    trimmed. The name tables fold punctuation so (Census 2010 surnames: OBRIEN, GARCIALOPEZ; 2020 first names:
    DANDRE, MARYJANE, none with a hyphen or apostrophe); keeping it on the story's side would leave "O'Brien" and
    "Mary-Jane" out of race counts. \x27 is the straight apostrophe (written so for Spark's string literals). -#}
{% macro normalize_name_key(text_expr) -%}
    {{ return(adapter.dispatch('normalize_name_key', 'laissez_faire')(text_expr)) }}
{%- endmacro %}
{% macro default__normalize_name_key(text_expr) -%}
    nullif(lower(trim({{ laissez_faire.regex_replace_all(
        laissez_faire.strip_accents(text_expr), "'[-\\x27’‘ʼ]'", "''") }})), '')
{%- endmacro %}

{#- §4.6 title case of one token: first character upper, the rest lower ('mcDONALD' -> 'Mcdonald'). -#}
{% macro title_case_token(token_expr) -%}
    (upper(left({{ token_expr }}, 1)) || lower(substr({{ token_expr }}, 2)))
{%- endmacro %}

{#- §4.6: a nickname in double quotes (straight or curly) is removed before the name is split. -#}
{% macro remove_quoted_nickname(text_expr) -%}
    {{ laissez_faire.regex_replace_all(text_expr, "'\"[^\"]*\"|“[^”]*”'", "' '") }}
{%- endmacro %}

{#- §1: an answer that starts with its own prompt (Llama restates it) loses that prefix. The query must match
    exactly after leading whitespace; the whitespace after it is removed too. -#}
{% macro strip_prompt_prefix(text_expr, query_expr) -%}
    case
        when {{ query_expr }} is not null and {{ query_expr }} <> ''
            and {{ laissez_faire.text_starts_with(laissez_faire.trim_whitespace(text_expr, 'left'), query_expr) }}
            then {{ laissez_faire.trim_whitespace('substr(' ~ laissez_faire.trim_whitespace(text_expr, 'left') ~ ', length(' ~ query_expr ~ ') + 1)', 'left') }}
        else {{ text_expr }}
    end
{%- endmacro %}

{#- §4.1 key matching: the exact key when the object has it, else the first key equal to it after lowercasing
    and trimming (so "Actor Name" or " actor name" answer "actor name"); null when neither. -#}
{% macro match_json_key(keys_expr, wanted_expr) -%}
    case
        when {{ laissez_faire.list_contains(keys_expr, wanted_expr) }} then {{ wanted_expr }}
        else {{ laissez_faire.list_element(laissez_faire.list_keep(keys_expr, 'candidate_key -> lower(trim(candidate_key)) = lower(trim(' ~ wanted_expr ~ '))'), 1) }}
    end
{%- endmacro %}

{#- §4.1: the role names asked for in a labeling request, in order: the `"<role> name":` entries of its
    type-definition block, the first {...} after the words "type definition" (or, without those words, the first
    {...} holding such an entry). `"actor name": ...` gives 'actor'. One pass over the request's text. -#}
{% macro request_role_keys(request_expr) -%}
    {{ laissez_faire.regex_extract_all(
        laissez_faire.regex_extract(
            "case when " ~ laissez_faire.text_contains(request_expr, "'type definition'") ~ " then split_part(" ~ request_expr ~ ", 'type definition', 2) else " ~ request_expr ~ " end",
            "'[{][^{}]*\"[^\"\\n]* name\"[ \\t\\n]*:[^{}]*[}]'"),
        "'\"([^\"\\n]*) name\"[ \\t\\n]*:'", 1) }}
{%- endmacro %}

{#- Trim spaces, tabs, carriage returns and newlines (plain trim only removes spaces). side: both | left. -#}
{% macro trim_whitespace(text_expr, side='both') -%}
    {%- set characters = "' ' || chr(9) || chr(10) || chr(13)" -%}
    {{- laissez_faire.trim_characters(text_expr, characters, side) -}}
{%- endmacro %}

{#- §4.1, for speed: the request up to its first '}' (where the type-definition block ends in every request format
    the project knows). Requests share few heads, so request_role_keys runs once per distinct head. The head's keys
    equal the whole request's whenever the head holds 'type definition' and a keyed block after it: the leftmost
    {...} match cannot reach past the head's closing '}', so the whole text has the same first match. Otherwise
    (no '}', no 'type definition' before it, or no keyed block) the caller reads the whole request. -#}
{% macro request_head(request_expr) -%}
    substr({{ request_expr }}, 1, {{ laissez_faire.text_position(request_expr, "'}'") }})
{%- endmacro %}

{% macro request_head_has_keys(head_expr, head_keys_expr) -%}
    coalesce({{ laissez_faire.text_contains(head_expr, "'type definition'") }} and {{ laissez_faire.list_length(head_keys_expr) }} >= 1, false)
{%- endmacro %}

{#- §4.1: a role's references value as a list of text: the array's strings (JSON nulls removed) when it is an array,
    else (null, or absent) an empty list. Callers reject any other JSON type before reading it. -#}
{% macro references_text_list(value_expr, type_expr) -%}
    coalesce(
        case when {{ type_expr }} = 'ARRAY' then {{ laissez_faire.json_value_text_list(value_expr) }} end,
        {{ laissez_faire.empty_text_list() }}
    )
{%- endmacro %}
