"""One file's worth of rows ready to land, per raw table, plus the rows that could not be used."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

REJECT_SCHEMA = {"source_row": pl.Int64, "target_table": pl.String, "reason": pl.String,
                 "detail": pl.String, "raw_record": pl.String}


def empty_rejects() -> pl.DataFrame:
    return pl.DataFrame(schema=REJECT_SCHEMA)


@dataclass
class Batch:
    file_kind: str
    source_kind: str
    rows_read: int
    stories: pl.DataFrame | None = None
    label_responses: pl.DataFrame | None = None
    hand_labels: pl.DataFrame | None = None
    rejects: pl.DataFrame = field(default_factory=empty_rejects)
    is_simulated: bool = False  # made by `lfh simulate` (see lfh.landing.simulated)
