-- The labeler version behind each story's labels (docs/RUNS.md): the labeling run in use for the story
-- (int_labeling_runs_selected: one labeler and prompt version per story, METHOD.md §3) and the version(s) its
-- responses report (stg_label_responses.labeler_version: the reported model string, else the labeler's name;
-- several joined by ', ' when one run's responses reported more than one).
with

selected_runs as (
    select story_id, labeler_model, prompt_version
    from {{ ref('int_labeling_runs_selected') }}
    where is_selected_run
),

responses as (
    select story_id, labeler_model, prompt_version, labeler_version, run_id
    from {{ ref('stg_label_responses') }}
)

select
    selected_runs.story_id,
    selected_runs.labeler_model,
    selected_runs.prompt_version,
    {{ agg_sorted_distinct_join('responses.labeler_version', "', '") }} as labeler_version,
    {{ agg_sorted_distinct_join('responses.run_id', "', '") }} as labeling_run_ids
from selected_runs
inner join responses
    on
        selected_runs.story_id = responses.story_id
        and selected_runs.labeler_model = responses.labeler_model
        and selected_runs.prompt_version = responses.prompt_version
group by selected_runs.story_id, selected_runs.labeler_model, selected_runs.prompt_version
