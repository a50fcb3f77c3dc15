-- N, D and Q per model x version x domain x condition for every group (race, race x gender, gender): the counts of
-- int_groups_counted (macro groups_counted) for each model version, for fct_model_drift.
{{ groups_counted(ref('int_version_cells_summed'), ['model', 'model_version']) }}
