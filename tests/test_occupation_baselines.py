"""`lfh occupation-baselines`: the Labor occupations' workforce baselines are generated from BLS's table, never
typed. The committed seed must equal a fresh run on the shared BLS file; bad inputs fail with file, row, reason."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from click.testing import CliRunner

from lfh.baselines.occupations import (
    BASELINE_SEED,
    MAPPING_SEED,
    SEED_COLUMNS,
    OccupationBaselineError,
    occupation_baselines,
    read_bls_table,
    write_seed,
)
from lfh.cli import main
from lfh.paths import project_root

SEEDS = project_root() / "seeds"
BLS_FILE = project_root().parent / "shared" / "data" / "bls" / "cpsaat11_2022.csv"
needs_bls = pytest.mark.skipif(not BLS_FILE.is_file(), reason=f"{BLS_FILE} absent (docs/DATA.md)")
HEADER = "bls_title,total_employed_thousands,women_pct,white_pct,black_pct,asian_pct,hispanic_pct\n"


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@needs_bls
def test_committed_seed_is_a_fresh_run_on_the_bls_file(tmp_path: Path) -> None:
    out = tmp_path / BASELINE_SEED
    write_seed(occupation_baselines(BLS_FILE, SEEDS / MAPPING_SEED), out)
    assert out.read_text(encoding="utf-8") == (SEEDS / BASELINE_SEED).read_text(encoding="utf-8"), (
        f"seeds/{BASELINE_SEED} differs from a fresh run: regenerate it with "
        f"`lfh occupation-baselines {BLS_FILE}`, never edit it by hand")


@needs_bls
def test_seed_figures_are_bls_lines_verbatim() -> None:
    # independent of the module: look every seed row up in the BLS CSV as plain text
    bls = {" ".join(row["bls_title"].split()): row for row in read_csv(BLS_FILE)}
    seed = read_csv(SEEDS / BASELINE_SEED)
    assert len(seed) == 15
    for row in seed:
        published = bls[row["bls_title"]]
        for column in ("total_employed_thousands", "women_pct", "white_pct", "black_pct", "asian_pct", "hispanic_pct"):
            assert row[column] == published[column].strip(), (row["occupation"], column)
        assert row["vintage"] == "2022" and "cpsaat11" in row["source"]
    by_occupation = {row["occupation"]: row for row in seed}
    assert by_occupation["nurse"]["women_pct"] == "87.9"
    assert by_occupation["software developer"]["asian_pct"] == "36.4"
    assert by_occupation["doctor"]["bls_title"] == "Other physicians"
    assert by_occupation["social worker"]["bls_title"] == "Social workers, all other"


def test_mapping_covers_exactly_the_labor_occupations_of_the_catalog() -> None:
    catalog = {row["subject"] for row in read_csv(SEEDS / "prompt_catalog.csv") if row["domain"] == "labor"}
    mapping = read_csv(SEEDS / MAPPING_SEED)
    assert len(catalog) == 15
    assert sorted(row["occupation"] for row in mapping) == sorted(catalog)
    assert all(row["reason"].strip() for row in mapping)


def test_athletes_have_no_baseline_and_every_other_occupation_has_all_five() -> None:
    seed = {row["occupation"]: row for row in read_csv(SEEDS / BASELINE_SEED)}
    percents = ("women_pct", "white_pct", "black_pct", "asian_pct", "hispanic_pct")
    assert all(seed["professional athlete"][column] == "" for column in percents)
    others = [row for occupation, row in seed.items() if occupation != "professional athlete"]
    assert all(row[column] != "" for row in others for column in percents)


def test_groups_seed_compares_only_the_valid_groups() -> None:
    groups = {(row["dimension"], row["group_code"]): row for row in read_csv(SEEDS / "occupation_baseline_groups.csv")}
    compared = {key for key, row in groups.items() if row["compared"] == "true"}
    assert compared == {("gender", "female"), ("race", "black"), ("race", "asian"), ("race", "latine")}
    assert groups[("race", "white")]["compared"] == "false"  # BLS White includes Hispanic workers
    assert all(groups[key]["bls_column"] in SEED_COLUMNS for key in compared)


def test_dashes_stay_empty_and_thousands_separators_are_read(tmp_path: Path) -> None:
    bls = write(tmp_path / "cpsaat11_2021.csv", HEADER + '"Cooks","2,012",38.4,69.4,17.7,5.9,36.1\n'
                "Athletes and sports competitors,39,–,-,,,\n")
    mapping = write(tmp_path / "map.csv", "occupation,bls_title,reason\ncook,Cooks,r\n"
                    "professional athlete,Athletes and sports competitors,r\n")
    rows = occupation_baselines(bls, mapping)
    assert rows[0]["total_employed_thousands"] == "2012" and rows[0]["hispanic_pct"] == "36.1"
    assert rows[0]["vintage"] == "2021" and "aa2021" in rows[0]["source"]
    assert [rows[1][column] for column in ("women_pct", "white_pct", "black_pct")] == ["", "", ""]


@pytest.mark.parametrize(("bls_text", "mapping_text", "message"), [
    (HEADER + "Cooks,2012,38.4,69.4,17.7,5.9,36.1\n", "occupation,bls_title,reason\ncook,Cook,r\n",
     "row 2: BLS title 'Cook' is not a line of"),
    (HEADER + "Cooks,2012,38.4,69.4,abc,5.9,36.1\n", "occupation,bls_title,reason\ncook,Cooks,r\n",
     "row 2, column black_pct: 'abc' is not a number"),
    (HEADER + "Cooks,2012,138.4,69.4,17.7,5.9,36.1\n", "occupation,bls_title,reason\ncook,Cooks,r\n",
     "row 2, column women_pct: 138.4 is outside 0-100"),
    (HEADER + "Cooks,,38.4,69.4,17.7,5.9,36.1\n", "occupation,bls_title,reason\ncook,Cooks,r\n",
     "row 2, column total_employed_thousands"),
    (HEADER + "Cooks,2012,38.4,69.4,17.7,5.9,36.1\nCooks,5,1,1,1,1,1\n", "occupation,bls_title,reason\ncook,Cooks,r\n",
     "appears more than once"),
    (HEADER + "Cooks,2012,38.4,69.4,17.7,5.9,36.1\n", "occupation,bls_title,reason\ncook,Cooks,\n",
     "row 2: occupation, bls_title and reason are all required"),
    (HEADER + "Cooks,2012,38.4,69.4,17.7,5.9,36.1\n", "occupation,bls_title,reason\ncook,Cooks,r\ncook,Cooks,r\n",
     "row 3: occupation 'cook' mapped twice"),
    ("bls_title,women_pct\nCooks,38.4\n", "occupation,bls_title,reason\ncook,Cooks,r\n", "missing columns"),
])
def test_bad_inputs_name_file_row_and_reason(tmp_path: Path, bls_text: str, mapping_text: str, message: str) -> None:
    bls = write(tmp_path / "cpsaat11_2022.csv", bls_text)
    mapping = write(tmp_path / "map.csv", mapping_text)
    with pytest.raises(OccupationBaselineError, match=message.replace("(", r"\(")) as caught:
        occupation_baselines(bls, mapping)
    assert str(tmp_path) in str(caught.value)


def test_a_file_without_a_year_needs_a_vintage(tmp_path: Path) -> None:
    bls = write(tmp_path / "table11.csv", HEADER + "Cooks,2012,38.4,69.4,17.7,5.9,36.1\n")
    mapping = write(tmp_path / "map.csv", "occupation,bls_title,reason\ncook,Cooks,r\n")
    with pytest.raises(OccupationBaselineError, match="--vintage"):
        occupation_baselines(bls, mapping)
    assert occupation_baselines(bls, mapping, vintage="2019")[0]["vintage"] == "2019"


def test_titles_match_across_bls_double_spaces(tmp_path: Path) -> None:
    bls = write(tmp_path / "cpsaat11_2022.csv", HEADER + '"Management,  professional, and related",68099,51.5,77.7,'
                "10.2,9.0,10.9\n")
    assert "Management, professional, and related" in read_bls_table(bls).lines


def test_cli_writes_the_seed_and_names_the_occupations_without_baseline(tmp_path: Path) -> None:
    bls = write(tmp_path / "cpsaat11_2022.csv", HEADER + "Cooks,2012,38.4,69.4,17.7,5.9,36.1\n"
                "Athletes and sports competitors,39,,,,,\n")
    mapping = write(tmp_path / "map.csv", "occupation,bls_title,reason\ncook,Cooks,r\n"
                    "professional athlete,Athletes and sports competitors,r\n")
    out = tmp_path / "seeds" / "out.csv"
    result = CliRunner().invoke(main, ["occupation-baselines", str(bls), "--mapping", str(mapping), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "wrote 2 occupations" in result.output and "no percentages for: professional athlete" in result.output
    assert [row["occupation"] for row in read_csv(out)] == ["cook", "professional athlete"]
    assert list(read_csv(out)[0]) == list(SEED_COLUMNS)

    failed = CliRunner().invoke(main, ["occupation-baselines", str(tmp_path / "nope.csv"), "--mapping", str(mapping),
                                       "--out", str(out)])
    assert failed.exit_code != 0 and "nope.csv: no such file" in failed.output


def test_non_utf8_bytes_end_in_one_clean_line(tmp_path: Path) -> None:
    """A Latin-1 export ends in one clean error line, never a UnicodeDecodeError traceback."""
    bls = tmp_path / "cpsaat11_2022.csv"
    bls.write_bytes((HEADER + "Caf\xe9 cooks,2012,38.4,69.4,17.7,5.9,36.1\n").encode("latin-1"))
    mapping = write(tmp_path / "map.csv", "occupation,bls_title,reason\ncook,Cooks,r\n")
    result = CliRunner().invoke(main, ["occupation-baselines", str(bls), "--mapping", str(mapping),
                                       "--out", str(tmp_path / "out.csv")])
    assert result.exit_code == 1 and not isinstance(result.exception, UnicodeDecodeError), result.exception
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "not UTF-8 text (byte 0xe9" in lines[0] and str(bls) in lines[0], result.output
    latin_mapping = tmp_path / "map_latin.csv"
    latin_mapping.write_bytes("occupation,bls_title,reason\ncaf\xe9,Cooks,r\n".encode("latin-1"))
    with pytest.raises(OccupationBaselineError, match="map_latin.csv: not UTF-8 text"):
        occupation_baselines(write(tmp_path / "ok_2022.csv", HEADER + "Cooks,2012,38.4,69.4,17.7,5.9,36.1\n"),
                             latin_mapping)
