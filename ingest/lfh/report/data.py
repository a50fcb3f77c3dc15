"""Reading the marts for `lfh report`: read-only, from the warehouse (LFH_DB) or a published copy."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl

from lfh.db import reading
from lfh.errors import WarehouseError
from lfh.serve.copy import present_marts

MARTS = (
    "dim_stories", "fct_characters", "fct_representation_ratios", "fct_sexual_orientation_ratios",
    "fct_subordination_ratios", "fct_median_racialized_subordination", "fct_top_names", "fct_name_coverage",
    "fct_labeler_agreement", "fct_labeler_confusion", "fct_labeler_class_metrics", "fct_labeler_couples",
    "fct_occupation_representation_ratios", "fct_race_sensitivity",
    "fct_model_rankings", "fct_model_drift", "dim_runs",
)
# Only the columns the report uses from the two row-per-story/character marts (they can be large).
_NARROW = {
    "dim_stories": "model, domain, labeler_model, is_labeled, labeling_failure",
    "fct_characters": "model, domain, condition, gender, name_matched",
}


class MartsMissing(WarehouseError, RuntimeError):
    """The warehouse has no marts: build them first."""


def _has_column(connection: duckdb.DuckDBPyConnection, mart: str, column: str) -> bool:
    found = connection.execute("select count(*) from information_schema.columns where table_name = ? "
                               "and column_name = ?", [mart, column]).fetchone()
    return bool(found and found[0])


def read_marts(db_path: Path, wait: float | None = None) -> dict[str, pl.DataFrame]:
    """Every mart the report draws (an absent mart comes back as an empty frame, and its section says so)."""
    if not db_path.is_file():
        raise MartsMissing(f"{db_path} does not exist: run `lfh build` (or `lfh demo`) first, or pass --db")
    with reading(db_path, "write the report", wait) as connection:
        present = set(present_marts(connection))  # build warehouse or published copy: `marts.<name>` reads both
        if "fct_representation_ratios" not in present:
            raise MartsMissing(f"{db_path} has no marts.fct_representation_ratios: run `lfh build` first")
        frames = {}
        for mart in MARTS:
            columns = _NARROW.get(mart, "*")
            if mart == "dim_stories" and _has_column(connection, mart, "is_simulated"):
                columns += ", is_simulated"  # marts built before the flag lack it
            frames[mart] = (connection.sql(f"select {columns} from marts.{mart}").pl() if mart in present
                            else pl.DataFrame())
        return frames
