-- Hand labels with the gender mapped to the project's codes (seeds/hand_gender_codes.csv).
with

source_hand_labels as (
    {{ source_or_empty('raw', 'hand_labels', [
        ('story_id', 'string'), ('role', 'string'), ('gender', 'string'), ('name', 'string'),
        ('name_raw', 'string'), ('reference_words', type_text_list()), ('label_source', 'string'),
        ('source_file', 'string'), ('source_row', 'integer'), ('file_sha256', 'string'),
        ('loaded_at', 'timestamp'), ('load_id', 'string')]) }}
),

gender_codes as (
    select lower(trim(label)) as label_key, gender
    from {{ ref('hand_gender_codes') }}
)

select
    source_hand_labels.story_id,
    lower(trim(source_hand_labels.role)) as role,
    source_hand_labels.gender as gender_given,
    gender_codes.gender,
    nullif(trim(source_hand_labels.name), '') as name,
    source_hand_labels.name_raw,
    source_hand_labels.reference_words,
    source_hand_labels.label_source,
    source_hand_labels.source_file,
    source_hand_labels.source_row,
    source_hand_labels.file_sha256,
    source_hand_labels.loaded_at,
    source_hand_labels.load_id
from source_hand_labels
left join gender_codes
    on lower(trim(source_hand_labels.gender)) = gender_codes.label_key
