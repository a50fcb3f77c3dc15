-- N and D of METHOD.md §6 per model x domain x condition for every group: race rows (gender null), race x
-- gender rows and gender rows (race null), by macro groups_counted (macros/stats/group_counts.sql, which
-- int_version_groups_counted calls per model version). The representation and the subordination ratios both read
-- them, so the two measures share one definition of their counts. "With race": a matched first name, or a matched
-- surname under var race_name_source = first_then_surname (int_characters_joined.has_race, docs/RACE_NAMES.md);
-- METHOD.md §6 counts matched first names only. sum_of_squares (Q, for the contrasts' variance, docs/CONTRASTS.md).
{{ groups_counted(ref('int_character_cells_summed'), ['model']) }}
