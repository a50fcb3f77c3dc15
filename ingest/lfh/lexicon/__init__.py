"""The first-name lexicon of METHOD.md section 5: fetching the pinned sources, reading them, writing
raw.*_first_names."""
