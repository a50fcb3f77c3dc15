"""Comparison distributions (docs/METHOD.md §7) made from public tables: the Labor occupations' workforce
baselines from BLS CPS table 11, written as seeds."""
