"""Hand labels name the stories they label (Story ID): a label of a story the warehouse does not hold would land
and never be read (the agreement marts join labels to stories), so it is refused, row by row, with the reason and
what to do, instead of an ingest that reports it landed and a build whose agreement marts stay silently empty."""

from __future__ import annotations

import duckdb
import polars as pl

from lfh.landing.batch import REJECT_SCHEMA, Batch
from lfh.landing.rejects import combine

REASON = "story_not_in_warehouse"


def _known(connection: duckdb.DuckDBPyConnection, story_ids: list[str]) -> set[str]:
    try:
        rows = connection.execute("select distinct story_id from raw.stories where story_id in "
                                  "(select unnest(?::varchar[]))", [story_ids]).fetchall()
    except duckdb.CatalogException:  # no stories landed yet
        return set()
    return {story_id for (story_id,) in rows}


def refuse_unknown_stories(connection: duckdb.DuckDBPyConnection, batch: Batch, header_rows: int) -> Batch:
    """The batch without the hand labels of stories neither in the warehouse nor in the batch itself; each one
    becomes a raw.rejects row (the spreadsheet's row number in its detail: header_rows above the data)."""
    labels = batch.hand_labels
    if labels is None or labels.height == 0:
        return batch
    own = set(batch.stories["story_id"].to_list()) if batch.stories is not None and batch.stories.height else set()
    wanted = sorted(set(labels["story_id"].drop_nulls().to_list()) - own)
    if not wanted:
        return batch
    unknown = set(wanted) - _known(connection, wanted)
    if not unknown:
        return batch
    missing = pl.col("story_id").is_in(pl.Series(sorted(unknown), dtype=pl.String).implode())
    refused = labels.filter(missing)
    rejects = refused.select(
        pl.col("source_row").cast(pl.Int64),
        pl.lit("hand_labels").alias("target_table"),
        pl.lit(REASON).alias("reason"),
        pl.format("story {} (spreadsheet row {}) is not in this warehouse, so its {} label would never be read: "
                  "ingest the stories first (the workbook or JSONL they came from), or ingest this workbook into "
                  "the warehouse `lfh audit-sample` drew it from",
                  pl.col("story_id"), pl.col("source_row") + header_rows, pl.col("role")).alias("detail"),
        pl.struct([name for name in labels.columns if name != "reference_words"]).struct.json_encode()
        .alias("raw_record"),
    ).select([pl.col(name).cast(dtype) for name, dtype in REJECT_SCHEMA.items()])
    batch.hand_labels = labels.filter(~missing)
    batch.rejects = combine(batch.rejects, rejects)
    return batch
