"""Comparison distributions (METHOD.md section 7) made from public tables: the Labor occupations' workforce
baselines from BLS CPS table 11, written as seeds."""
