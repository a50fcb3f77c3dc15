"""First-name extraction and MENA / NH/PI shares, with the arithmetic done by hand."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from lfh.lexicon.regions import default_seed_path, read_demonym_regions
from lfh.lexicon.wikipedia import derive_first_name_shares, first_name_expr, persons_frame

REGIONS = {"Egyptian": "mena", "Iraqi": "mena", "Tongan": "nhpi", "Samoan": "nhpi"}


@pytest.mark.parametrize(
    ("full_name", "first_name"),
    [
        ("Ahmed Zewail", "Ahmed"),
        ("Aristotle", "Aristotle"),
        ("Sir Winston Churchill", "Winston"),
        ("Grand Duke Michael Alexandrovich", "Michael"),
        ("Prince", "Prince"),
        ("Louis, Prince of Condé", "Louis"),
        ("Lil' Kim", "Lil"),
        ("Jean-Pierre Rampal", "Jean-Pierre"),
        ("D'Angelo", "D'Angelo"),
        ("ʻAbdu'l-Bahá", "Abdu'l-Bahá"),
        ("José Martí", "José"),
        ("Al Pacino", "Al"),
        ("J. R. R. Tolkien", None),
        ("J.R. Smith", None),
        ("Md. Rahman", None),
        ("Mr. T", None),
        ("50 Cent", None),
        ("1st Dalai Lama", None),
        ("I Ketut", None),
    ],
)
def test_first_name_rules(full_name: str, first_name: str | None) -> None:
    result = pl.select(first_name_expr(pl.lit(full_name))).item()
    assert result == first_name


def test_region_shares_by_hand() -> None:
    persons = persons_frame({
        "Ahmed Ali": ["Egyptian"],                     # Ahmed: 1 MENA
        "Ahmed Khan": ["Pakistani"],                   # Ahmed: 0
        "Ahmed Zewail": ["Egyptian", "American"],      # Ahmed: 1/2 MENA
        "Sir Ahmed Pasha": ["Iraqi", "Iraqi"],         # title skipped; duplicate nationality counted once: 1
        "Sione Tuipulotu": ["Tongan"],                 # Sione: 1 NH/PI
        "Sione Smith": ["Tongan", "Australian", "Samoan"],  # Sione: 2/3 NH/PI
        "J. Smith": ["Samoan"],                        # no usable first name: left out
        "Nobody Known": [],                            # no nationality: left out
    })
    table = derive_first_name_shares(persons, REGIONS)
    rows = {row["first_name"]: row for row in table.frame.iter_rows(named=True)}
    assert set(rows) == {"Ahmed", "Sione"}
    ahmed, sione = rows["Ahmed"], rows["Sione"]
    assert ahmed["n_bearers"] == 4
    assert ahmed["n_mena"] == pytest.approx(2.5) and ahmed["pct_mena"] == pytest.approx(62.5)
    assert ahmed["n_nhpi"] == 0 and ahmed["pct_nhpi"] == 0
    assert sione["n_bearers"] == 2
    assert sione["n_nhpi"] == pytest.approx(5 / 3) and sione["pct_nhpi"] == pytest.approx(250 / 3)
    assert table.persons == 8 and table.persons_without_first_name == 1 and table.persons_without_nationality == 1
    assert table.unmapped_demonyms == ["American", "Australian", "Pakistani"]
    # 6 counted persons: MENA 1 + 0 + 0.5 + 1 = 2.5, NH/PI 1 + 2/3
    assert table.mena_share_of_persons == pytest.approx(100 * 2.5 / 6)
    assert table.nhpi_share_of_persons == pytest.approx(100 * (5 / 3) / 6)


def test_first_names_are_kept_as_given() -> None:
    table = derive_first_name_shares(persons_frame({"José A": ["Egyptian"], "Jose B": ["Pakistani"]}), REGIONS)
    assert table.frame.select("first_name", "n_mena").rows() == [("Jose", 0.0), ("José", 1.0)]


def test_seed_covers_method_countries_and_regions() -> None:
    regions = read_demonym_regions(default_seed_path())
    for demonym in ["Egyptian", "Iranian", "Israeli", "Lebanese", "Turk", "Saudi", "Emirati", "Palestinian"]:
        assert regions[demonym] == "mena"
    for demonym in ["Samoan", "Tongan", "Marshallese", "I-Kiribati", "Palauan", "Tuvaluan", "Vanuatuan", "Nauruan"]:
        assert regions[demonym] == "nhpi"
    seed = pl.read_csv(default_seed_path())
    method_countries = {
        "mena": {"Algeria", "Bahrain", "Egypt", "Iran", "Iraq", "Israel", "Jordan", "Kuwait", "Lebanon", "Libya",
                 "Morocco", "Oman", "Palestine", "Qatar", "Sahrawi Arab Democratic Republic", "Saudi Arabia",
                 "Syria", "Tunisia", "Turkey", "United Arab Emirates", "Yemen"},
        "nhpi": {"American Samoa", "Cook Islands", "East Timor", "Fiji", "French Polynesia", "Guam", "Kiribati",
                 "Marshall Islands", "Micronesia", "Nauru", "New Caledonia", "Vanuatu", "Niue", "Norfolk Island",
                 "Northern Mariana Islands", "Palau", "Pitcairn Islands", "Samoa", "Solomon Islands", "Tokelau",
                 "Tonga", "Tuvalu", "Wallis and Futuna"},
    }
    for region, countries in method_countries.items():
        assert set(seed.filter(pl.col("region") == region)["country"]) == countries


def test_bad_seed_rows_are_named(tmp_path: Path) -> None:
    seed = tmp_path / "d.csv"
    seed.write_text("demonym,country,region,source,vintage\nEgyptian,Egypt,mena,x,1\nTongan,Tonga,pacific,x,1\n")
    with pytest.raises(ValueError, match=r"d\.csv: line 3: region 'pacific'"):
        read_demonym_regions(seed)
    seed.write_text("demonym,country,region,source,vintage\nTurk,Turkey,mena,x,1\nTurk,Turkey,other,x,1\n")
    with pytest.raises(ValueError, match="listed with two regions"):
        read_demonym_regions(seed)
    seed.write_text("demonym,region\nTurk,mena\n")
    with pytest.raises(ValueError, match="missing column"):
        read_demonym_regions(seed)
