"""Hand labels have a history and the latest wins, in both landing sinks. A corrected cell lands as a new
row (the earlier one stays, with its load id), an unchanged one is a duplicate, a revert to an earlier value lands
again (it is the latest now), and the load says how many labels changed."""

from __future__ import annotations

import time
import uuid
from datetime import datetime
from pathlib import Path

import duckdb
import polars as pl
import pytest

from lfh.landing.duckdb_sink import DuckDBSink
from lfh.landing.parquet_sink import ParquetSink
from lfh.landing.sink import TARGETS, LandedCounts, LoadRecord, Provenance

COLUMNS = TARGETS["hand_labels"][0]


def _labels(*genders: str | None) -> pl.DataFrame:
    rows = [{"story_id": f"s{index}", "role": "subject", "gender": gender, "name": "Ann", "name_raw": "Ann",
             "reference_words": None, "label_source": "audit_sample", "source_row": index}
            for index, gender in enumerate(genders, start=1)]
    return pl.DataFrame(rows, schema={**{name: pl.String for name in COLUMNS},
                                      "reference_words": pl.List(pl.String), "source_row": pl.Int64})


def _load(sink: DuckDBSink | ParquetSink, frame: pl.DataFrame) -> tuple[LandedCounts, str]:
    provenance = Provenance("labels.xlsx", uuid.uuid4().hex, datetime.now(), uuid.uuid4().hex)
    sink.begin_file(provenance)
    sink.offer("hand_labels", frame)
    counts = sink.finish_file(LoadRecord(provenance, "audit_sample_xlsx", frame.height, 0))
    time.sleep(0.01)  # distinct loaded_at per load, as between two real ingests
    return counts, provenance.load_id


def _history(sink_kind: str, target: Path) -> list[tuple]:
    query = "select story_id, gender, load_id from {} order by story_id, loaded_at"
    if sink_kind == "duckdb":
        with duckdb.connect(str(target), read_only=True) as connection:
            return connection.execute(query.format("raw.hand_labels")).fetchall()
    return duckdb.sql(query.format(f"read_parquet('{target}/hand_labels/*.parquet')")).fetchall()


@pytest.mark.parametrize("sink_kind", ["duckdb", "parquet"])
def test_a_corrected_label_lands_and_the_earlier_one_stays(tmp_path: Path, sink_kind: str) -> None:
    target = tmp_path / ("w.duckdb" if sink_kind == "duckdb" else "landed")
    steps = [_labels("Male", "Female", "Male"),      # first ingest
             _labels("Male", "Female", "Male"),      # the same cells again: nothing lands
             _labels("Female", "Female", "Male"),    # s1 corrected
             _labels("Male", "Female", None)]        # s1 reverted, s3's gender cleared (name kept)
    outcomes = []
    if sink_kind == "duckdb":
        connection = duckdb.connect(str(target))
        sink = DuckDBSink(connection, target)
        sink.prepare()
        outcomes = [_load(sink, frame) for frame in steps]
        connection.close()
    else:
        with ParquetSink(target) as sink:
            sink.prepare()
            outcomes = [_load(sink, frame) for frame in steps]
    counts = [outcome[0] for outcome in outcomes]
    assert [(c.hand_labels, c.duplicates, c.hand_labels_changed) for c in counts] == [
        (3, 0, 0), (0, 3, 0), (1, 2, 1), (2, 1, 2)]
    loads = [outcome[1] for outcome in outcomes]
    assert _history(sink_kind, target) == [
        ("s1", "Male", loads[0]), ("s1", "Female", loads[2]), ("s1", "Male", loads[3]),
        ("s2", "Female", loads[0]),
        ("s3", "Male", loads[0]), ("s3", None, loads[3])]
