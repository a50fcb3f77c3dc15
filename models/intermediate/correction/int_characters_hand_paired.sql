-- Every character (int_characters_joined: the rows of fct_characters) beside its hand label where one exists
-- (docs/METHOD.md §9, docs/CORRECTION.md): the units of the correction. The hand gender is read from
-- int_hand_labels_paired (one hand label per story and role); a hand label whose gender the project cannot
-- code ('unmapped') counts as no hand label.
with

characters as (
    select story_id, role, model, domain, prompt_condition, condition, prompt_id, role_text, gender
    from {{ ref('int_characters_joined') }}
    where {{ in_selected_versions('story_id') }}  -- the model versions the measures use (docs/RUNS.md)
),

hand_labels as (
    select story_id, role, hand_gender
    from {{ ref('int_hand_labels_paired') }}
    where hand_gender <> 'unmapped'
)

select
    characters.story_id,
    characters.role,
    characters.model,
    characters.domain,
    characters.prompt_condition,
    characters.condition,
    characters.prompt_id,
    characters.role_text,
    characters.gender as inferred_gender,
    hand_labels.hand_gender,
    hand_labels.hand_gender is not null as is_hand_labeled
from characters
left join hand_labels
    on characters.story_id = hand_labels.story_id
    and characters.role = hand_labels.role
