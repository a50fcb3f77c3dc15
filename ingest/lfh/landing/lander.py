"""Landing one batch of a file through a LandingSink: its tables' new rows, and how many were duplicates.

The file's transaction (begin, finish, abort) is ingest_file's: a file's batches land together or not at all.
"""

from __future__ import annotations

import polars as pl

from lfh.landing.batch import Batch
from lfh.landing.duckdb_sink import PAUSE_ENV_VAR
from lfh.landing.sink import LandedCounts, LandingSink, Provenance

__all__ = ["PAUSE_ENV_VAR", "LandedCounts", "Provenance", "land_batch", "land_rejects"]


def land_batch(sink: LandingSink, batch: Batch, rejects_now: bool = True) -> LandedCounts:
    """Offer one batch's rows to the sink; rejects too unless rejects_now is False (their raw records come
    later, see RecordStream.complete_rejects)."""
    counts: dict[str, int] = {}
    offered = 0
    for table in ("stories", "label_responses", "hand_labels"):
        frame = getattr(batch, table)
        if frame is None or frame.height == 0:
            counts[table] = 0
            continue
        if table == "stories":
            frame = frame.with_columns(pl.lit(batch.source_kind).alias("source_kind"))
        counts[table] = sink.insert_new(table, frame)
        offered += frame.height
    if rejects_now:
        land_rejects(sink, batch.rejects)
    return LandedCounts(stories=counts["stories"], label_responses=counts["label_responses"],
                        hand_labels=counts["hand_labels"], duplicates=offered - sum(counts.values()),
                        rejected=batch.rejects.height)


def land_rejects(sink: LandingSink, rejects: pl.DataFrame) -> None:
    if rejects.height:
        sink.insert_new("rejects", rejects)
