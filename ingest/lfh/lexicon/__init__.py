"""The first-name lexicon of docs/METHOD.md §5: fetching the pinned sources, reading them, writing
raw.*_first_names."""
