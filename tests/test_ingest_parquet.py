"""`lfh ingest --parquet-dir`: the raw tables as Parquet files with the DuckDB lander's guarantees: the same rows
and rejects as the warehouse, nothing twice on a re-run, a grown file adds only its new rows, a killed run's
parts are cleaned up and the file lands again whole."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from fixtures_ingest import label_records, story_records, write_jsonl

from lfh.cli.ingest import ingest
from lfh.landing.ingest import ingest_paths
from lfh.landing.parquet_sink import ParquetSink, ParquetSinkError
from lfh.lexicon.load import TABLE_COLUMNS as LEXICON_TABLES
from lfh.lexicon.load import write_tables
from lfh.lexicon.parquet import write_tables_parquet

TABLE_COLUMNS = "select * exclude (source_file, loaded_at, load_id) from {relation} order by all"


def _landed(parquet_dir: Path, table: str) -> list[tuple]:
    relation = f"read_parquet('{parquet_dir / table}/*.parquet')"
    return duckdb.sql(TABLE_COLUMNS.format(relation=relation)).fetchall()


def _corpus(tmp_path: Path) -> tuple[Path, Path]:
    stories = story_records(5)
    bad = {**stories[0], "text": None}
    # stories[1] twice: its second copy is occurrence 2, a story of its own (docs/CONTRACTS.md)
    story_file = write_jsonl(tmp_path / "in" / "stories.jsonl", [*stories, stories[1], bad])
    from lfh.identity import canonical_model, story_id

    ids = [story_id(canonical_model(s["model"]), s["query"], s["text"], 1) for s in stories]
    label_file = write_jsonl(tmp_path / "in" / "labels.jsonl", label_records(ids, samples=2))
    return story_file, label_file


def test_same_rows_as_the_warehouse_and_nothing_twice(tmp_path: Path, warehouse: Path) -> None:
    story_file, label_file = _corpus(tmp_path)
    parquet_dir = tmp_path / "raw_parquet"
    runner = CliRunner()
    first = runner.invoke(ingest, [str(story_file), str(label_file), "--parquet-dir", str(parquet_dir)])
    assert first.exit_code == 0, first.output
    assert "7 rows read, 6 landed, 0 duplicates, 1 rejected" in first.output
    assert runner.invoke(ingest, [str(story_file), str(label_file)]).exit_code == 0  # the DuckDB warehouse
    connection = duckdb.connect(str(warehouse), read_only=True)
    try:
        for table in ("stories", "label_responses", "rejects"):
            in_warehouse = connection.execute(TABLE_COLUMNS.format(relation=f"raw.{table}")).fetchall()
            assert _landed(parquet_dir, table) == in_warehouse, table
            assert in_warehouse
        warehouse_types = connection.execute("select column_name, data_type from information_schema.columns "
                                             "where table_schema = 'raw' and table_name = 'stories'").fetchall()
    finally:
        connection.close()
    parquet_types = duckdb.sql(f"select column_name, column_type from (describe select * from "
                               f"read_parquet('{parquet_dir}/stories/*.parquet'))").fetchall()
    assert sorted(parquet_types) == sorted(warehouse_types)

    again = runner.invoke(ingest, [str(story_file), str(label_file), "--parquet-dir", str(parquet_dir), "--reread"])
    assert "0 landed, 6 duplicates" in again.output
    assert len(_landed(parquet_dir, "stories")) == 6
    skipped = runner.invoke(ingest, [str(story_file), "--parquet-dir", str(parquet_dir)])
    assert "unchanged since its load" in skipped.output

    grown = story_records(7)
    write_jsonl(story_file, grown)
    grew = runner.invoke(ingest, [str(story_file), "--parquet-dir", str(parquet_dir)])
    assert "7 rows read, 2 landed, 5 duplicates" in grew.output


def test_a_killed_load_leaves_nothing_and_lands_again(tmp_path: Path) -> None:
    story_file, _ = _corpus(tmp_path)
    parquet_dir = tmp_path / "raw_parquet"
    with ParquetSink(parquet_dir) as sink:
        ingest_paths([story_file], sink=sink)
    # what a run killed before its commit leaves: a part without its load_log part, and a temporary file
    orphan = parquet_dir / "stories" / "deadbeef-00000.parquet"
    (parquet_dir / "stories" / next((parquet_dir / "stories").glob("*.parquet")).name).rename(orphan)
    (parquet_dir / "stories" / ".half-written.parquet.tmp").write_bytes(b"PAR1")
    for log_part in (parquet_dir / "load_log").glob("*.parquet"):
        log_part.unlink()
    with ParquetSink(parquet_dir):
        pass
    assert not orphan.exists() and not list((parquet_dir / "stories").glob(".*"))
    with ParquetSink(parquet_dir) as sink:
        results, _ = ingest_paths([story_file], sink=sink)
    assert results[0].counts.stories == 6
    assert len(_landed(parquet_dir, "stories")) == 6


def test_the_lexicon_waits_for_no_one_writing_the_same_folder(tmp_path: Path) -> None:
    """`lfh lexicon --parquet-dir` takes the landing folder's lock, as `lfh ingest --parquet-dir` does: refused
    while an ingest holds it, written once it is free."""
    folder = tmp_path / "raw_parquet"
    with ParquetSink(folder), pytest.raises(ParquetSinkError, match="being written by another"):
        write_tables_parquet(folder, [], [], write_tables, LEXICON_TABLES)
    assert not (folder / "census_first_names").exists()
    write_tables_parquet(folder, [], [], write_tables, LEXICON_TABLES)
    assert any((folder / "census_first_names").glob("*.parquet"))
