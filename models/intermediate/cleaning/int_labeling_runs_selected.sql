{{ config(**story_incremental()) }}
-- docs/METHOD.md §3: one labeling run per story. A run is a labeler model and prompt version; the pinned run when vars
-- labeling_labeler_model / labeling_prompt_version name one, else the run loaded last.
with

responses as (
    select story_id, labeler_model, prompt_version, loaded_at
    from {{ changed_only(ref('stg_label_responses')) }}
)

select
    story_id,
    labeler_model,
    prompt_version,
    row_number() over (
        partition by story_id
        order by
            {% if var('labeling_labeler_model', none) is not none -%}
            (labeler_model = '{{ var("labeling_labeler_model") }}') desc,
            {% endif -%}
            {% if var('labeling_prompt_version', none) is not none -%}
            (prompt_version = '{{ var("labeling_prompt_version") }}') desc,
            {% endif -%}
            max(loaded_at) desc, labeler_model, prompt_version asc
    ) = 1 as is_selected_run
from responses
group by story_id, labeler_model, prompt_version
