"""Building the warehouse: running dbt with the project's profile against the DuckDB file named by LFH_DB."""
