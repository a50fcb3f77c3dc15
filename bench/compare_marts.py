"""Every mart equal before and after a refactor, on the simulated, the audit and a mixed warehouse.

Build the three warehouses with the code of one checkout (the lfh package first on PYTHONPATH decides which):

    PYTHONPATH=OTHER_CHECKOUT/ingest python -m bench.compare_marts build BEFORE_DIR
    PYTHONPATH=ingest python -m bench.compare_marts build AFTER_DIR
    python -m bench.compare_marts compare BEFORE_DIR AFTER_DIR [marts intermediate ...]

- simulated: a simulated corpus (stories_per_prompt 2, seed 7) with the test lexicon of tests/fixtures_simulate.py
- audit: the study's audit_dev.xlsx (stories, label responses and hand labels) with the same lexicon
- mixed: both, plus training_150.xlsx
- real (only when named: `build OUT real`): audit_dev.xlsx and training_150.xlsx with the project's real lexicon,
  surnames included, copied from the warehouse LFH_COMPARE_LEXICON names (one `lfh lexicon` run beforehand)
Each is a full `lfh build --skip-tests` (the tables, not the tests). `compare` checks every table of the marts
schema (or of the schemas named): the same columns and types, the same rows (doubles to a relative 1e-9;
source_file, a path, and the load columns aside), and exits 1 naming what differs. A table present only after
(a new model) is not compared; one present only before is an error.
Needs the study's audit_dev.xlsx (docs/DATA.md) for the audit and mixed warehouses (skipped, saying so, without it).
"""

from __future__ import annotations

import math
import os
import sys
from dataclasses import replace
from pathlib import Path

import duckdb

RELATIVE_TOLERANCE = 1e-9
# the landed file's path: each side simulates into its own folder, so it differs by construction; when and in
# which load a row landed (intermediate tables), which differ between two ingests by construction; and what a run
# manifest records of the simulation that wrote it (when it ran, the checkout's state, the manifest file's bytes)
NOT_COMPARED = ("source_file", "loaded_at", "load_id", "last_loaded_at", "started_at", "finished_at", "git_dirty",
                "file_sha256", "first_run_at", "version_at")
WAREHOUSES = ("simulated", "audit", "mixed")


def _shared_data() -> Path:
    from lfh.paths import project_root

    return project_root().parent / "shared" / "data" / "laissez-faire"


def build(out: Path, names: tuple[str, ...] = WAREHOUSES) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from fixtures_simulate import write_test_lexicon

    from lfh.build.dbt import build_warehouse
    from lfh.landing.ingest import ingest_paths
    from lfh.simulate.config import load_config
    from lfh.simulate.run import run_simulation

    lexicon = out / "lexicon.duckdb"
    out.mkdir(parents=True, exist_ok=True)
    if not lexicon.exists():
        write_test_lexicon(lexicon)
    simulated = out / "landing"
    if not simulated.exists():
        run_simulation(replace(load_config(), stories_per_prompt=2, seed=7), simulated, lexicon)
    shared = _shared_data()
    inputs = {"simulated": [simulated], "audit": [shared / "audit_dev.xlsx"],
              "mixed": [simulated, shared / "audit_dev.xlsx", shared / "training_150.xlsx"],
              "real": [shared / "audit_dev.xlsx", shared / "training_150.xlsx"]}
    for name in names:
        files = inputs[name]
        if not all(path.exists() for path in files):
            print(f"{name}: skipped ({shared} absent, docs/DATA.md)")
            continue
        db_path = out / name / "lfh.duckdb"
        db_path.parent.mkdir(parents=True, exist_ok=True)
        db_path.unlink(missing_ok=True)
        if name == "real":
            real_lexicon = os.environ.get("LFH_COMPARE_LEXICON")
            if not real_lexicon:
                raise SystemExit("real: set LFH_COMPARE_LEXICON to a warehouse holding `lfh lexicon`'s tables")
            db_path.write_bytes(Path(real_lexicon).read_bytes())
        else:
            db_path.write_bytes(lexicon.read_bytes())
        results, _skipped = ingest_paths(files, db_path, allow_mix=(name in ("mixed", "real")))
        failed = [result.summary() for result in results if result.error is not None]
        if failed:
            raise SystemExit(f"{name}: ingest failed: {failed}")
        summary = build_warehouse(db_path=db_path, full_refresh=True, skip_tests=True)
        print(f"{name}: {summary}")


def _rows(connection: duckdb.DuckDBPyConnection, catalog: str, table: str,
          schema: str = "marts") -> tuple[list[tuple], list[tuple]]:
    columns = connection.execute(
        "select column_name, data_type from information_schema.columns where table_catalog = ? and "
        "table_schema = ? and table_name = ? order by ordinal_position", [catalog, schema, table]).fetchall()
    selected = ", ".join(f'"{name}"' for name, _type in columns if name not in NOT_COMPARED)
    rows = connection.execute(f'select {selected} from {catalog}.{schema}."{table}"').fetchall()
    columns = [(name, kind) for name, kind in columns if name not in NOT_COMPARED]
    return columns, sorted(rows, key=lambda row: tuple((value is None, repr(value)) for value in row))


def _same(left: object, right: object) -> bool:
    if isinstance(left, float) and isinstance(right, float):
        return math.isclose(left, right, rel_tol=RELATIVE_TOLERANCE, abs_tol=1e-12) or (
            math.isnan(left) and math.isnan(right))
    return left == right


def compare(before: Path, after: Path, schemas: tuple[str, ...] = ("marts",)) -> int:
    problems, compared = [], 0
    names = [*WAREHOUSES, *sorted(path.parent.name for path in before.glob("*/lfh.duckdb")
                                  if path.parent.name not in WAREHOUSES)]
    for name, schema in ((name, schema) for name in names for schema in schemas):
        left, right = before / name / "lfh.duckdb", after / name / "lfh.duckdb"
        if not (left.exists() and right.exists()):
            print(f"{name}: not built on both sides, not compared")
            continue
        with duckdb.connect() as connection:
            connection.execute(f"attach '{left}' as a (read_only)")
            connection.execute(f"attach '{right}' as b (read_only)")
            tables = {catalog: {row[0] for row in connection.execute(
                "select table_name from information_schema.tables where table_catalog = ? and table_schema = ? "
                "and table_type = 'BASE TABLE'",  # a view reads its warehouse by name: its tables are compared
                [catalog, schema]).fetchall()} for catalog in ("a", "b")}
            if tables["a"] - tables["b"]:
                problems.append(f"{name}: {schema} missing after: {sorted(tables['a'] - tables['b'])}")
            for table in sorted(tables["a"] & tables["b"]):
                columns_a, rows_a = _rows(connection, "a", table, schema)
                columns_b, rows_b = _rows(connection, "b", table, schema)
                if schema == "marts" and columns_a != columns_b[:len(columns_a)]:
                    # a mart's columns may be added, never renamed, dropped or moved
                    problems.append(f"{name}.{table}: columns {columns_a} -> {columns_b}")
                    continue
                if not set(columns_a) <= set(columns_b):  # another table's columns may move, not go
                    problems.append(f"{name}.{schema}.{table}: columns {columns_a} -> {columns_b}")
                    continue
                positions = [columns_b.index(column) for column in columns_a]
                rows_b = sorted((tuple(row[position] for position in positions) for row in rows_b),
                                key=lambda row: tuple((value is None, repr(value)) for value in row))
                if len(rows_a) != len(rows_b) or not all(
                        _same(x, y) for row_a, row_b in zip(rows_a, rows_b, strict=True)
                        for x, y in zip(row_a, row_b, strict=True)):
                    problems.append(f"{name}.{schema}.{table}: rows differ ({len(rows_a)} before, {len(rows_b)} after)")
                    continue
                compared += len(rows_a)
            new = len(tables["b"] - tables["a"])
            print(f"{name}: {len(tables['a'] & tables['b'])} {schema} tables compared"
                  + (f" ({new} new after, not compared)" if new else ""))
    for problem in problems:
        print("DIFFERS", problem)
    print(f"{compared} rows equal" if not problems else f"{len(problems)} tables differ")
    return 1 if problems else 0


def main() -> None:
    if len(sys.argv) >= 3 and sys.argv[1] == "build":  # build OUT [simulated|audit|mixed ...]
        build(Path(sys.argv[2]).resolve(), tuple(sys.argv[3:]) or WAREHOUSES)
    elif len(sys.argv) >= 4 and sys.argv[1] == "compare":  # compare BEFORE AFTER [schema ...]
        raise SystemExit(compare(Path(sys.argv[2]), Path(sys.argv[3]), tuple(sys.argv[4:]) or ("marts",)))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
