"""Offering one batch of a file to a LandingSink: its tables' rows, and its rejects.

The file's load (begin, finish, abort) is ingest_file's: a file's batches land together or not at all.
"""

from __future__ import annotations

import polars as pl

from lfh.landing.batch import Batch
from lfh.landing.duckdb_sink import PAUSE_ENV_VAR
from lfh.landing.sink import LandedCounts, LandingSink, Provenance

__all__ = ["PAUSE_ENV_VAR", "LandedCounts", "Provenance", "land_batch", "land_rejects"]


def land_batch(sink: LandingSink, batch: Batch, rejects_now: bool = True) -> None:
    """Offer one batch's rows to the sink; rejects too unless rejects_now is False (their raw records come
    later, see RecordStream.complete_rejects)."""
    for table in ("stories", "label_responses", "hand_labels"):
        frame = getattr(batch, table)
        if frame is None or frame.height == 0:
            continue
        if table == "stories":
            frame = frame.with_columns(pl.lit(batch.source_kind).alias("source_kind"),
                                       pl.lit(batch.is_simulated).alias("is_simulated"))
        sink.offer(table, frame)
    if rejects_now:
        land_rejects(sink, batch.rejects)


def land_rejects(sink: LandingSink, rejects: pl.DataFrame) -> None:
    if rejects.height:
        sink.offer("rejects", rejects)
