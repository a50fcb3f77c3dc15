"""Turning row rejections (source_row, reason, detail) into raw.rejects rows carrying the original record."""

from __future__ import annotations

import polars as pl

from lfh.landing.batch import REJECT_SCHEMA, empty_rejects
from lfh.landing.records import RawRecords


def reject_rows(records: RawRecords, rejections: pl.DataFrame, target_table: str) -> pl.DataFrame:
    if rejections.height == 0:
        return empty_rejects()
    with_raw = records.with_raw_records(rejections.select("source_row", "reason", "detail"))
    return with_raw.with_columns(pl.lit(target_table).alias("target_table")).select(
        [pl.col(name).cast(dtype) for name, dtype in REJECT_SCHEMA.items()]
    )


def combine(*frames: pl.DataFrame) -> pl.DataFrame:
    present = [frame for frame in frames if frame.height]
    return pl.concat(present).sort("source_row", "target_table") if present else empty_rejects()
