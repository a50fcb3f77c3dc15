"""Simulated stories never mix with real ones silently: `lfh ingest data/landing` leaves the simulated subfolder
alone unless asked, a warehouse holds one kind unless told to mix, and each story says which kind it is."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from fixtures_ingest import query_all, story_records, write_jsonl

from lfh.cli.ingest import ingest
from lfh.landing.simulated import write_marker


def _landing(root: Path) -> Path:
    """data/landing as `lfh generate` and `lfh simulate` leave it: real stories, and simulated/ beside them."""
    landing = root / "landing"
    write_jsonl(landing / "stories" / "generate-gpt.jsonl", story_records(4, model="gpt-4"))
    write_jsonl(landing / "simulated" / "stories" / "simulated_stories.jsonl", story_records(6, model="SimGPT-A"))
    write_marker(landing / "simulated")
    return landing


def _ingest(*arguments: str):
    return CliRunner().invoke(ingest, list(arguments), catch_exceptions=False)


def _kinds(warehouse: Path) -> dict[str, int]:
    rows = query_all(warehouse, "select model, count(*) from raw.stories group by model")
    return dict(rows)


def test_ingest_of_the_landing_folder_skips_the_simulated_subfolder(tmp_path: Path, warehouse: Path) -> None:
    landing = _landing(tmp_path)
    outcome = _ingest(str(landing))
    assert outcome.exit_code == 0, outcome.output
    assert _kinds(warehouse) == {"gpt-4": 4}
    assert "SIMULATED data" in outcome.output and "--simulated" in outcome.output
    assert query_all(warehouse, "select distinct is_simulated from raw.stories") == [(False,)]


def test_simulated_stories_are_refused_in_a_real_warehouse_unless_mixing_is_asked(
        tmp_path: Path, warehouse: Path) -> None:
    landing = _landing(tmp_path)
    assert _ingest(str(landing)).exit_code == 0
    refused = _ingest("--simulated", str(landing))
    assert refused.exit_code != 0
    assert "SIMULATED stories and the warehouse holds real ones" in refused.output and "--mix" in refused.output
    assert _kinds(warehouse) == {"gpt-4": 4}
    mixed = _ingest("--simulated", "--mix", str(landing))
    assert mixed.exit_code == 0, mixed.output
    assert dict(query_all(warehouse, "select model, bool_and(is_simulated) from raw.stories group by model")) == {
        "gpt-4": False, "SimGPT-A": True}


def test_real_stories_are_refused_in_a_simulated_warehouse(tmp_path: Path, warehouse: Path) -> None:
    landing = _landing(tmp_path)
    assert _ingest(str(landing / "simulated")).exit_code == 0  # a marked folder named itself: explicit
    assert _kinds(warehouse) == {"SimGPT-A": 6}
    refused = _ingest(str(landing / "stories"))
    assert refused.exit_code != 0 and "holds SIMULATED ones" in refused.output
    assert _kinds(warehouse) == {"SimGPT-A": 6}


def test_a_copied_simulator_file_stays_simulated(tmp_path: Path, warehouse: Path) -> None:
    copied = write_jsonl(tmp_path / "elsewhere" / "simulated_stories.jsonl", story_records(3, model="SimGPT-B"))
    assert _ingest(str(copied)).exit_code == 0
    assert query_all(warehouse, "select distinct is_simulated from raw.stories") == [(True,)]


def test_a_file_of_stories_the_warehouse_already_holds_mixes_nothing(tmp_path: Path, warehouse: Path) -> None:
    """E.g. a filled audit-sample workbook of the simulated warehouse's own stories: its hand labels land."""
    landing = _landing(tmp_path)
    assert _ingest(str(landing / "simulated")).exit_code == 0
    again = write_jsonl(tmp_path / "elsewhere" / "same.jsonl",
                        story_records(6, model="SimGPT-A"))  # the same stories, in a file not marked simulated
    outcome = _ingest(str(again))
    assert outcome.exit_code == 0, outcome.output
    assert _kinds(warehouse) == {"SimGPT-A": 6}
