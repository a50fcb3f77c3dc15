"""The workforce baselines of the Labor domain, generated from BLS's own table (`lfh occupation-baselines`).

The study notes that p* may be any comparison distribution fitting the question (docs/METHOD.md §7); for an
occupation that is its workforce. This step reads

- BLS's Current Population Survey table 11 ("Employed persons by detailed occupation, sex, race, and Hispanic or
  Latino ethnicity", annual averages) as a CSV with the columns of READ_COLUMNS, one row per published line, and
- seeds/occupation_bls_lines.csv, the hand-written choice of one BLS line per Labor occupation with its reason,

and writes seeds/occupation_workforce_baselines.csv: per occupation, BLS's exact title and figures (total
employed in thousands, women, White, Black, Asian and Hispanic or Latino percent of the employed) with source
and vintage. No figure is typed by hand: every number is copied from the BLS file, and an empty BLS cell (a
dash: BLS shows no percentage where the base is under 50,000) stays empty.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

READ_COLUMNS = ("bls_title", "total_employed_thousands", "women_pct", "white_pct", "black_pct", "asian_pct",
                "hispanic_pct")
PERCENT_COLUMNS = READ_COLUMNS[2:]
MAPPING_COLUMNS = ("occupation", "bls_title", "reason")
SEED_COLUMNS = ("occupation", *READ_COLUMNS, "source", "vintage")
MAPPING_SEED = "occupation_bls_lines.csv"
BASELINE_SEED = "occupation_workforce_baselines.csv"
SOURCE = ("US Bureau of Labor Statistics, Current Population Survey annual averages, table 11: employed persons "
          "by detailed occupation, sex, race, and Hispanic or Latino ethnicity "
          "(https://www.bls.gov/cps/aa{vintage}/cpsaat11.htm)")


class OccupationBaselineError(ValueError):
    """An input the baselines cannot be made from; the message names the file, the row and what to fix."""


@dataclass(frozen=True)
class BlsLine:
    bls_title: str
    total_employed_thousands: int
    percents: dict[str, str]  # as BLS printed them (checked to be 0-100), "" where BLS shows a dash


@dataclass(frozen=True)
class BlsTable:
    path: Path
    lines: dict[str, BlsLine]  # by title, single-spaced
    repeated_titles: frozenset[str]


def _normalise_title(title: str) -> str:
    # BLS's own titles carry stray double spaces ("Management,  professional, ..."); match on single spaces
    return " ".join(title.split())


DASHES = ("", "-", "–", "—")


def _number(text: str, path: Path, row: int, column: str, *, percent: bool) -> float | None:
    text = text.strip().replace(",", "")
    if text in DASHES:
        return None
    try:
        value = float(text)
    except ValueError as exc:
        raise OccupationBaselineError(f"{path}, row {row}, column {column}: {text!r} is not a number") from exc
    if value < 0 or (percent and value > 100):
        raise OccupationBaselineError(f"{path}, row {row}, column {column}: {value} is outside "
                                      f"{'0-100' if percent else '>= 0'}")
    return value


def _not_utf8(path: Path, exc: UnicodeDecodeError, what: str) -> OccupationBaselineError:
    return OccupationBaselineError(
        f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); save the {what} as "
        "CSV UTF-8 (e.g. `iconv -f latin1 -t utf-8`) and run again")


def read_bls_table(path: Path) -> BlsTable:
    """BLS table 11 by title: group totals and detailed lines alike. A title printed twice is an error only when a
    mapping asks for it (occupation_baselines checks), so it is recorded rather than refused here."""
    try:
        return _read_bls_table(path)
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, exc, "BLS table") from None
    except IsADirectoryError:
        raise OccupationBaselineError(f"{path} is a folder; give the BLS table's CSV file") from None


def _read_bls_table(path: Path) -> BlsTable:
    try:
        handle = path.open(encoding="utf-8-sig", newline="")
    except FileNotFoundError as exc:
        raise OccupationBaselineError(f"{path}: no such file. Give the path of BLS CPS 2022 table 11 saved as CSV "
                                      "(docs/DATA.md names the file, its columns and where BLS publishes it)") from exc
    lines: dict[str, BlsLine] = {}
    duplicates: set[str] = set()
    with handle:
        reader = csv.DictReader(handle)
        missing = [column for column in READ_COLUMNS if column not in (reader.fieldnames or [])]
        if missing:
            raise OccupationBaselineError(f"{path}: missing columns {missing}; expected {list(READ_COLUMNS)}")
        for row_number, row in enumerate(reader, start=2):
            title = _normalise_title(row["bls_title"] or "")
            if not title:
                raise OccupationBaselineError(f"{path}, row {row_number}: empty bls_title")
            total = _number(row["total_employed_thousands"] or "", path, row_number, "total_employed_thousands",
                            percent=False)
            if total is None or total != int(total):
                raise OccupationBaselineError(f"{path}, row {row_number}, column total_employed_thousands: "
                                              "a whole number of thousands is required")
            percents = {}
            for column in PERCENT_COLUMNS:
                text = (row[column] or "").strip()
                _number(text, path, row_number, column, percent=True)
                percents[column] = "" if text in DASHES else text
            if title in lines:
                duplicates.add(title)
                continue
            lines[title] = BlsLine(title, int(total), percents)
    return BlsTable(path, lines, frozenset(duplicates))


def read_mapping(path: Path) -> list[dict[str, str]]:
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle)
            missing = [column for column in MAPPING_COLUMNS if column not in (reader.fieldnames or [])]
            if missing:
                raise OccupationBaselineError(f"{path}: missing columns {missing}; expected {list(MAPPING_COLUMNS)}")
            rows = list(reader)
    except FileNotFoundError as exc:
        raise OccupationBaselineError(f"{path}: no such file (the occupation -> BLS line mapping)") from exc
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, exc, "mapping") from None
    seen: set[str] = set()
    for row_number, row in enumerate(rows, start=2):
        occupation = (row["occupation"] or "").strip()
        if not occupation or not (row["bls_title"] or "").strip() or not (row["reason"] or "").strip():
            raise OccupationBaselineError(f"{path}, row {row_number}: occupation, bls_title and reason are all "
                                          "required (the reason documents the choice of line)")
        if occupation in seen:
            raise OccupationBaselineError(f"{path}, row {row_number}: occupation {occupation!r} mapped twice; "
                                          "keep one BLS line per occupation")
        seen.add(occupation)
    return rows


def vintage_from_name(path: Path) -> str:
    match = re.search(r"(19|20)\d\d", path.stem)
    if match is None:
        raise OccupationBaselineError(f"{path}: no year in the file name; pass the vintage (--vintage 2022)")
    return match.group(0)


def occupation_baselines(bls_path: Path, mapping_path: Path, vintage: str | None = None) -> list[dict[str, str]]:
    """The seed rows, in the mapping's order, as text exactly as BLS published it (empty where BLS has a dash)."""
    table = read_bls_table(bls_path)
    vintage = vintage or vintage_from_name(bls_path)
    rows = []
    for row_number, mapping in enumerate(read_mapping(mapping_path), start=2):
        title = _normalise_title(mapping["bls_title"])
        line = table.lines.get(title)
        if line is None:
            raise OccupationBaselineError(
                f"{mapping_path}, row {row_number}: BLS title {mapping['bls_title']!r} is not a line of {bls_path}; "
                "copy the title exactly as the table prints it")
        if title in table.repeated_titles:
            raise OccupationBaselineError(f"{mapping_path}, row {row_number}: BLS title {title!r} appears more "
                                          f"than once in {bls_path}; the mapping cannot tell which line is meant")
        rows.append({
            "occupation": mapping["occupation"].strip(),
            "bls_title": line.bls_title,
            "total_employed_thousands": str(line.total_employed_thousands),
            **line.percents,
            "source": SOURCE.format(vintage=vintage),
            "vintage": vintage,
        })
    return rows


def write_seed(rows: list[dict[str, str]], out_path: Path) -> None:
    out_path.parent.mkdir(parents=True, exist_ok=True)
    temporary = out_path.with_suffix(out_path.suffix + ".tmp")
    with temporary.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=SEED_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    temporary.replace(out_path)
