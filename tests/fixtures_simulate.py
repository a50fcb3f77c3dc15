"""A small, made-up name lexicon for the simulate/report/demo tests (the real one comes from `lfh lexicon`).
Shares are invented for testing; they are not data about any population."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import duckdb

from lfh.simulate.config import SimModel

CENSUS_GROUPS = ("white", "black", "latine", "asian", "aian", "multiracial")
# group -> names whose census share is mostly that group
CENSUS_NAMES = {
    "white": ["Emily", "John", "Sarah", "Connor", "Hannah", "Luke", "Megan", "Wyatt"],
    "black": ["Jamal", "Latoya", "Darnell", "Imani", "Tyrone", "Ebony", "Deshawn", "Aaliyah"],
    "latine": ["Maria", "Juan", "Jose", "Guadalupe", "Alejandro", "Lucia", "Carlos", "Ximena"],
    "asian": ["Priya", "Wei", "Minh", "Hiroshi", "Mei", "Anh", "Rahul", "Jisoo"],
    "aian": ["Nizhoni", "Kiona", "Aiyana", "Takoda", "Dyani", "Chayton"],
}
# percent of each census name's bearers who are female (made up, but on the right side of 50 for each name)
PCT_FEMALE = {name: 98.0 for name in ("Emily", "Sarah", "Hannah", "Megan", "Latoya", "Imani", "Ebony", "Aaliyah",
                                      "Maria", "Guadalupe", "Lucia", "Ximena", "Priya", "Mei", "Jisoo", "Nizhoni",
                                      "Kiona", "Aiyana", "Dyani", "Malia")} | {"Anh": 61.0}
WIKIPEDIA_NAMES = {
    "mena": ["Ahmed", "Fatima", "Omar", "Layla", "Yusuf", "Mehmet"],
    "nhpi": ["Sione", "Malia", "Tevita", "Leilani", "Kalani", "Mele"],
}


def _census_rows() -> list[tuple]:
    rows = []
    for group_index, (group, names) in enumerate(CENSUS_NAMES.items()):
        for name_index, name in enumerate(names):
            main = 62.0 + 3 * name_index + group_index
            rest = 100.0 - main
            shares = {other: rest / 5 for other in CENSUS_GROUPS if other != group}
            shares[group] = main
            count = 50_000 // (name_index + 1) + 1_500
            rows.append((name, count, *[round(shares[g], 2) for g in CENSUS_GROUPS], "test fixture", "2020"))
    # a MENA and an NH/PI name also in the census table: a name can carry weights from both tables
    rows.append(("Omar", 8_000, 40.0, 20.0, 10.0, 10.0, 5.0, 15.0, "test fixture", "2020"))
    rows.append(("Malia", 3_000, 30.0, 10.0, 20.0, 20.0, 5.0, 15.0, "test fixture", "2020"))
    return [(*row, PCT_FEMALE.get(row[0], 1.5), 100.0 - PCT_FEMALE.get(row[0], 1.5)) for row in rows]


def _wikipedia_rows() -> list[tuple]:
    rows = []
    for group, names in WIKIPEDIA_NAMES.items():
        for name_index, name in enumerate(names):
            bearers = 400 - 40 * name_index
            hits = int(bearers * (0.9 - 0.08 * name_index))
            n_mena, n_nhpi = (hits, 0) if group == "mena" else (0, hits)
            rows.append((name, bearers, n_mena, n_nhpi, 100 * n_mena / bearers, 100 * n_nhpi / bearers,
                         "test fixture", "2024"))
    for name in ("Emily", "John", "Maria", "Priya"):
        rows.append((name, 900, 9, 2, 1.0, 100 * 2 / 900, "test fixture", "2024"))
    return rows


def write_test_lexicon(db_path: Path) -> None:
    """raw.census_first_names and raw.wikipedia_first_names with the columns of docs/CONTRACTS.md."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    connection = duckdb.connect(str(db_path))
    try:
        connection.execute("create schema if not exists raw")
        connection.execute(
            "create or replace table raw.census_first_names (first_name varchar, n_total bigint, pct_white double,"
            " pct_black double, pct_latine double, pct_asian double, pct_aian double, pct_multiracial double,"
            " source varchar, vintage varchar, pct_female double, pct_male double)")
        connection.executemany("insert into raw.census_first_names values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                               _census_rows())
        connection.execute(
            "create or replace table raw.wikipedia_first_names (first_name varchar, n_bearers bigint,"
            " n_mena bigint, n_nhpi bigint, pct_mena double, pct_nhpi double, source varchar, vintage varchar)")
        connection.executemany("insert into raw.wikipedia_first_names values (?, ?, ?, ?, ?, ?, ?, ?)",
                               _wikipedia_rows())
    finally:
        connection.close()


def planted_models() -> tuple[SimModel, ...]:
    """Three simulated models: Sim-A and Sim-B identical (every contrast between them is planted equal), Sim-D with
    planted differences in race and gender shares and in who is cast as subordinate (docs/CONTRASTS.md)."""
    same = SimModel("Sim-A", ("Sim-A",), {}, {}, 1.0)
    return (
        same,
        replace(same, name="Sim-B", spellings=("Sim-B",)),
        replace(same, name="Sim-D", spellings=("Sim-D",), race_multiplier={"black": 0.25, "latine": 3.0},
                gender_multiplier={"female": 2.0},
                condition_multiplier={"subordinate": {"white": 0.3}, "dominant": {"white": 2.0}}),
    )
