-- Characters with a hand label (a hand gender in seeds/hand_gender_codes.csv) beside what the cleaning inferred:
-- the input of fct_labeler_agreement. Hand labels have a history (raw.hand_labels is append-only; a corrected
-- label lands as a new row): the latest load of each story, role and source wins, then one hand label per story
-- and role, the latest loaded (audit_manual before training_correct on a tie). Ingest rejects a gender outside
-- the drop-down, so none reaches here unmapped (a row landed before that check is left out; stg warns of it).
with

characters as (
    select story_id, role, model, domain, condition, prompt_id, role_text, gender, full_name
    from {{ ref('int_characters_joined') }}
),

latest_labels as (
    select story_id, role, gender, name, label_source, loaded_at, source_file, source_row
    from {{ ref('stg_hand_labels') }}
    qualify row_number() over (
        partition by story_id, role, label_source
        order by loaded_at desc, load_id desc, source_row desc
    ) = 1
),

hand_labels as (
    select story_id, role, gender, name
    from latest_labels
    where gender is not null
    qualify row_number() over (
        partition by story_id, role
        order by loaded_at desc, label_source asc, source_file asc, source_row asc
    ) = 1
)

select
    characters.story_id,
    characters.role,
    characters.model,
    characters.domain,
    characters.gender as inferred_gender,
    coalesce(hand_labels.gender, 'unmapped') as hand_gender,
    characters.full_name as inferred_name,
    hand_labels.name as hand_name,
    coalesce(characters.gender = hand_labels.gender, false) as gender_agrees,
    -- names agree when both fold to the same key, or when neither side has a name ('Unspecified' is no name)
    coalesce(
        {{ normalize_name_key('characters.full_name') }}
        = {{ normalize_name_key("nullif(lower(trim(hand_labels.name)), 'unspecified')") }},
        characters.full_name is null and nullif(lower(trim(hand_labels.name)), 'unspecified') is null
    ) as name_agrees,
    characters.condition,
    characters.prompt_id,
    characters.role_text,
    cast('{{ var("gender_rule") }}' as string) as gender_rule
from characters
inner join hand_labels
    on
        characters.story_id = hand_labels.story_id
        and characters.role = hand_labels.role
