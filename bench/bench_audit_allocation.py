"""Optimal against proportional hand-label allocation on the study's development audit, with more pilots and
draws than tests/test_audit_allocation.py affords: audit_dev.xlsx ingested and built once (gender rule `study`, the
biased labeler the correction is validated on); then for each of PILOTS random proportional pilots of PILOT stories,
EXTRA more stories allocated by `lfh audit-sample --allocate optimal` (planned from the pilot only) and by the
proportional allocation, each drawn DRAWS times, and the correction models run on pilot + draw
(lfh.build.correction_check.compare_allocations). Prints, per group of cells, the mean interval width of each
allocation, the coverage of the whole-audit hand-label share, and the plan's predicted against realised half-width.

Run: .venv/bin/python -m bench.bench_audit_allocation [--pilot 100] [--extra 200] [--draws 10] [--pilots 4]
     [--measure gender --measure couple] [--workdir DIR] [--reuse]
Needs ../shared/data/laissez-faire/audit_dev.xlsx; says so and stops where it is absent.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lfh.build.correction_check import allocation_summary, compare_allocations, compiled_correction_sql
from lfh.build.dbt import run_dbt
from lfh.paths import project_root

WORKBOOK = project_root().parent / "shared" / "data" / "laissez-faire" / "audit_dev.xlsx"
BIASED_RULE = {"gender_rule": "study"}
GROUPS = {
    "selected cells (gender and couple)": r"^(gender|couple)/",
    "all-model cells": r"^(gender|couple)/All/",
    "per-model cells": r"^(gender|couple)/(?!All/)",
    "gender cells": r"^gender/",
    "couple cells": r"^couple/",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pilot", type=int, default=100)
    parser.add_argument("--extra", type=int, default=200)
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--pilots", type=int, default=4)
    parser.add_argument("--measure", action="append", default=None)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--reuse", action="store_true", help="reuse the warehouse already in --workdir")
    options = parser.parse_args()
    if not WORKBOOK.is_file():
        print(f"{WORKBOOK} not present: nothing to measure")
        return
    workdir = options.workdir or Path(tempfile.mkdtemp(prefix="bench_audit_allocation_"))
    warehouse = workdir / "lfh.duckdb"
    if not (options.reuse and warehouse.is_file()):
        workdir.mkdir(parents=True, exist_ok=True)
        warehouse.unlink(missing_ok=True)
        environment = {**os.environ, "LFH_DB": str(warehouse)}
        subprocess.run([sys.executable, "-m", "lfh.cli", "ingest", str(WORKBOOK)], env=environment, check=True)
        run_dbt(["build", "--select", "+fct_representation_ratios", "+fct_sexual_orientation_ratios", "+dim_stories"],
                db_path=warehouse, dbt_vars=BIASED_RULE, capture=True)
    started = time.perf_counter()
    queries = compiled_correction_sql(warehouse, workdir / "target", BIASED_RULE)
    families = tuple(options.measure or ("gender", "couple"))
    runs = compare_allocations(warehouse, queries, options.pilot, options.extra, options.draws, options.pilots,
                               families=families)
    print(f"pilot {options.pilot} + {options.extra} stories ({families}), {options.pilots} pilots x "
          f"{options.draws} draws per allocation, {time.perf_counter() - started:.0f} s")
    for label, pattern in GROUPS.items():
        summary = allocation_summary(runs, re.compile(pattern))
        print(f"{label}: {summary['cells']:.0f} cells, mean width optimal {summary['optimal_width']:.4f} "
              f"proportional {summary['proportional_width']:.4f} ({summary['narrower']:+.1%} narrower); coverage "
              f"optimal {summary['optimal_coverage']:.3f} proportional {summary['proportional_coverage']:.3f}; "
              f"half-width predicted/realised optimal {summary['optimal_predicted_half_width']:.4f}/"
              f"{summary['optimal_realised_half_width']:.4f} proportional "
              f"{summary['proportional_predicted_half_width']:.4f}/{summary['proportional_realised_half_width']:.4f}")


if __name__ == "__main__":
    main()
