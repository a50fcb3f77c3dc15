"""The hand-label correction's coverage on the study's development audit with more splits than the test affords
(tests/test_correction_validation.py runs 100): audit_dev.xlsx ingested and built once, then SPLITS story-level
splits with LABELED_FRACTION of the stories keeping their hand labels (lfh.build.correction_check). Prints coverage of
the corrected and uncorrected 95% intervals per group of cells, and the seconds per split.

Run: .venv/bin/python -m bench.bench_correction [--splits 1000] [--labeled-fraction 0.3] [--workdir DIR] [--reuse]
     [--gender-rule study|refined] [--cell-pool-rule composite|switch] [--queries FILE]
--cell-pool-rule sets var ppi_cell_pool_rule for the scored SQL only (the warehouse does not depend on it), so the
same --workdir --reuse gives both columns of docs/CORRECTION.md's switch -> composite table.
--queries scores the compiled correction SQL saved in FILE (JSON {"gender": sql, "couple": sql}, as
lfh.build.correction_check.compiled_correction_sql returns it) instead of compiling this checkout's: the same
splits scored with an earlier version's SQL give the before/after table of docs/CORRECTION.md.
Needs ../shared/data/laissez-faire/audit_dev.xlsx; says so and stops where it is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lfh.build.correction_check import category_table, report_lines, run_splits
from lfh.build.dbt import run_dbt
from lfh.paths import project_root

WORKBOOK = project_root().parent / "shared" / "data" / "laissez-faire" / "audit_dev.xlsx"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=1000)
    parser.add_argument("--labeled-fraction", type=float, default=0.3)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--reuse", action="store_true", help="reuse the warehouse already in --workdir")
    parser.add_argument("--gender-rule", default=None, help="var gender_rule for the build (default: the project's)")
    parser.add_argument("--cell-pool-rule", default=None, choices=["composite", "switch"],
                        help="var ppi_cell_pool_rule for the scored SQL (default: the project's)")
    parser.add_argument("--queries", type=Path, default=None, help="score this saved compiled SQL instead")
    options = parser.parse_args()
    if not WORKBOOK.is_file():
        print(f"{WORKBOOK} not present: nothing to measure")
        return
    dbt_vars = {"gender_rule": options.gender_rule} if options.gender_rule else None
    queries = json.loads(options.queries.read_text()) if options.queries else None
    workdir = options.workdir or Path(tempfile.mkdtemp(prefix="bench_correction_"))
    warehouse = workdir / "lfh.duckdb"
    if not (options.reuse and warehouse.is_file()):
        workdir.mkdir(parents=True, exist_ok=True)
        warehouse.unlink(missing_ok=True)
        environment = {**os.environ, "LFH_DB": str(warehouse)}
        subprocess.run([sys.executable, "-m", "lfh.cli", "ingest", str(WORKBOOK)], env=environment, check=True)
        run_dbt(["build", "--select", "+fct_representation_ratios", "+fct_sexual_orientation_ratios", "+dim_stories"],
                db_path=warehouse, dbt_vars=dbt_vars, capture=True)
    started = time.perf_counter()
    scored_vars = {**(dbt_vars or {}), **({"ppi_cell_pool_rule": options.cell_pool_rule}
                                          if options.cell_pool_rule else {})}
    cells = run_splits(warehouse, workdir / "target", options.splits, options.labeled_fraction,
                       dbt_vars=scored_vars or None, queries=queries)
    elapsed = time.perf_counter() - started
    print(f"{options.splits} splits, {options.labeled_fraction:.0%} of the audit's stories hand-labeled in each, "
          f"{elapsed / options.splits:.2f} s per split (compile included once)")
    for line in report_lines(cells):
        print(line)
    print()
    for line in category_table(cells):
        print(line)


if __name__ == "__main__":
    main()
