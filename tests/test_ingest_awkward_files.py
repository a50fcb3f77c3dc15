"""Files a user really has: a byte-order mark, one bad value among good rows, a path that
cannot be read next to good ones, Latin-1 or `;`-separated CSV. Each keeps the good rows."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from fixtures_ingest import label_records, query_all, run_ingest, scalar, story_records, write_jsonl

from lfh.cli.ingest import ingest


def _jsonl_bytes(records: list[dict]) -> bytes:
    return "".join(json.dumps(record) + "\n" for record in records).encode("utf-8")


def _csv_text(records: list[dict], separator: str = ",") -> str:
    columns = ["model", "query", "subject", "text", "time"]
    def cell(value: object) -> str:
        text = "" if value is None else str(value)
        return '"' + text.replace('"', '""') + '"' if any(c in text for c in f'"\n{separator}') else text
    return "\n".join([separator.join(columns)]
                     + [separator.join(cell(record[name]) for name in columns) for record in records]) + "\n"


def test_a_utf8_byte_order_mark_is_not_part_of_the_first_jsonl_record(tmp_path: Path, warehouse: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + _jsonl_bytes(story_records(3)))

    result = run_ingest(path)

    assert result.exit_code == 0, result.output
    assert "3 rows read, 3 landed, 0 duplicates, 0 rejected" in result.output
    assert scalar(warehouse, "select count(*) from raw.rejects") == 0
    assert query_all(warehouse, "select min(source_row), max(source_row) from raw.stories") == [(1, 3)]


def test_a_byte_order_mark_before_a_bad_first_record_keeps_its_text(tmp_path: Path, warehouse: Path) -> None:
    records = story_records(2)
    records[0]["text"] = ""
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + _jsonl_bytes(records))

    run_ingest(path)

    ((row, reason, raw),) = query_all(warehouse, "select source_row, reason, raw_record from raw.rejects")
    assert (row, reason) == (1, "no_text")
    assert json.loads(raw)["model"] == records[0]["model"]


def test_a_utf8_byte_order_mark_is_not_part_of_the_csv_header(tmp_path: Path, warehouse: Path) -> None:
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbf" + _csv_text(story_records(3)).encode("utf-8"))

    result = run_ingest(path)

    assert result.exit_code == 0, result.output
    assert "3 rows read, 3 landed" in result.output


def test_a_sample_index_too_large_rejects_that_row_only(tmp_path: Path, warehouse: Path) -> None:
    records = label_records(["story-a", "story-b"], samples=2)
    records[2]["sample_index"] = 2147483648
    path = write_jsonl(tmp_path / "labels.jsonl", records)

    result = run_ingest(path)

    assert result.exit_code == 0, result.output
    assert "4 rows read, 3 landed, 0 duplicates, 1 rejected" in result.output
    ((row, reason, detail, raw),) = query_all(warehouse, "select source_row, reason, detail, raw_record "
                                                         "from raw.rejects")
    assert (row, reason) == (3, "sample_index_too_large")
    assert "2,147,483,647" in detail
    assert json.loads(raw)["sample_index"] == 2147483648


def _parquet_with_invalid_utf8(path: Path, records: list[dict], bad_row: int, column: str) -> Path:
    columns = {}
    for name in records[0]:
        values = [None if record[name] is None else str(record[name]).encode("utf-8") for record in records]
        if name == column:
            values[bad_row] = b"Mar\xeda \xff smiled"
        binary = pa.array(values, type=pa.binary())
        # the same bytes declared as text, as a writer that does not check its strings produces them
        columns[name] = pa.Array.from_buffers(pa.string(), len(binary), binary.buffers(), binary.null_count)
    pq.write_table(pa.table(columns), path)
    return path


def test_an_invalid_utf8_parquet_cell_rejects_that_row_only(tmp_path: Path, warehouse: Path) -> None:
    path = _parquet_with_invalid_utf8(tmp_path / "stories.parquet", story_records(5), bad_row=3, column="text")

    result = run_ingest(path)

    assert result.exit_code == 0, result.output
    assert "5 rows read, 4 landed, 0 duplicates, 1 rejected" in result.output
    ((row, reason, detail),) = query_all(warehouse, "select source_row, reason, detail from raw.rejects")
    assert (row, reason) == (4, "unreadable_value")
    assert "'text'" in detail and "not valid UTF-8" in detail and "0xED" in detail


def test_a_symlink_loop_is_one_failed_path_and_the_good_files_land(tmp_path: Path, warehouse: Path) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", story_records(4))
    loop = tmp_path / "loop.jsonl"
    os.symlink(loop, loop)
    folder = tmp_path / "folder"
    write_jsonl(folder / "inside.jsonl", story_records(3, start=10))
    os.symlink(folder / "cycle.jsonl", folder / "cycle.jsonl")

    result = CliRunner().invoke(ingest, [str(loop), str(good), str(folder)])

    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    assert "loop.jsonl: FAILED" in result.output and "cycle.jsonl: FAILED" in result.output
    assert scalar(warehouse, "select count(*) from raw.stories") == 7
    assert query_all(warehouse, "select status, count(*) from raw.load_log group by all order by 1") == \
        [("failed", 2), ("loaded", 2)]


def test_an_unreadable_file_is_one_failure(tmp_path: Path, warehouse: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads files whatever their mode")
    good = write_jsonl(tmp_path / "good.jsonl", story_records(2))
    locked = write_jsonl(tmp_path / "locked.jsonl", story_records(2, start=5))
    locked.chmod(0)

    result = CliRunner().invoke(ingest, [str(locked), str(good)])

    assert result.exit_code == 1 and "locked.jsonl: FAILED" in result.output
    assert scalar(warehouse, "select count(*) from raw.stories") == 2


def test_latin1_csv_fails_naming_the_encoding_and_lands_with_it(tmp_path: Path, warehouse: Path) -> None:
    records = story_records(3)
    records[1]["text"] = "José and Zoë went to the café."
    path = tmp_path / "latin1.csv"
    path.write_bytes(_csv_text(records).encode("latin-1"))

    refused = run_ingest(path)

    assert refused.exit_code == 1
    assert "not valid UTF-8" in refused.output and "--encoding latin-1" in refused.output
    assert "line 3" in refused.output
    assert scalar(warehouse, "select count(*) from raw.stories") == 0

    accepted = CliRunner().invoke(ingest, ["--encoding", "latin-1", str(path)], catch_exceptions=False)

    assert accepted.exit_code == 0, accepted.output
    assert "3 rows read, 3 landed" in accepted.output
    assert scalar(warehouse, "select story_text from raw.stories where source_row = 2") == records[1]["text"]


def test_semicolon_separated_csv_is_detected(tmp_path: Path, warehouse: Path) -> None:
    records = story_records(3)
    records[0]["text"] = "A story, with commas, in it."
    path = tmp_path / "semicolons.csv"
    path.write_text(_csv_text(records, separator=";"), encoding="utf-8")

    result = run_ingest(path)

    assert result.exit_code == 0, result.output
    assert "3 rows read, 3 landed" in result.output
    assert scalar(warehouse, "select story_text from raw.stories where source_row = 1") == records[0]["text"]


def test_the_separator_can_be_given(tmp_path: Path, warehouse: Path) -> None:
    path = tmp_path / "tabs.csv"
    path.write_text(_csv_text(story_records(2), separator="\t"), encoding="utf-8")

    result = CliRunner().invoke(ingest, ["--separator", "tab", str(path)], catch_exceptions=False)

    assert result.exit_code == 0, result.output
    assert "2 rows read, 2 landed" in result.output
