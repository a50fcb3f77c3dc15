"""The hand-label correction's coverage on the study's development audit with more splits than the test affords
(tests/test_correction_validation.py runs 100): audit_dev.xlsx ingested and built once, then SPLITS story-level
splits with LABELED_FRACTION of the stories keeping their hand labels (bench.correction_check). Prints coverage of
the corrected and uncorrected 95% intervals per group of cells, and the seconds per split.

Run: .venv/bin/python -m bench.bench_correction [--splits 1000] [--labeled-fraction 0.3] [--workdir DIR] [--reuse]
     [--gender-rule study|refined] [--cell-pool-rule composite|switch] [--queries FILE] [--plain-interval]
--cell-pool-rule sets var ppi_cell_pool_rule for the scored SQL only (the warehouse does not depend on it), so the
same --workdir --reuse gives both columns of the switch / composite table (bench/results/correction.md).
--queries scores the compiled correction SQL saved in FILE (JSON {"gender": sql, "couple": sql}, as
bench.correction_check.compiled_correction_sql returns it) instead of compiling this checkout's: the same
splits scored with an earlier version's SQL compare two versions on the same splits.
--plain-interval scores the plain interval instead (bench/results/correction.md, "Net widths"): this
checkout's SQL compiled from a scratch copy of the project whose boundary construction is switched off (the plain
clamped normal interval), with ppi_cell_pool_rule switch and ppi_machine_mean unlabeled.
Needs the study's audit_dev.xlsx (docs/DATA.md); says so and stops where it is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.correction_check import CORRECTION_MODELS, category_table, check_vars, checked_sql, report_lines, run_splits
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
    parser.add_argument("--plain-interval", action="store_true",
                        help="score the plain interval (switch, unlabeled, no boundary hull)")
    options = parser.parse_args()
    if not WORKBOOK.is_file():
        print(f"{WORKBOOK} not present (docs/DATA.md): nothing to measure")
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
    if options.plain_interval:
        queries = plain_interval_queries(workdir, {**(dbt_vars or {}), "ppi_cell_pool_rule": "switch",
                                                 "ppi_machine_mean": "unlabeled"})
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


# ppi_interval.sql's boundary construction switched off: the widening macros return the bound as it is, and part 2
# (the Wilson interval where the variance degenerates) never applies. The plain clamped normal interval remains.
PLAIN_INTERVAL_PATCHES = (
    ("{% macro ppi_interval_widen_lower(lower, hand_n, hand_category_n, z=none, subset_n=none, to_zero_only=false) -%}",
     "{% macro ppi_interval_widen_lower(lower, hand_n, hand_category_n, z=none, subset_n=none, to_zero_only=false) -%}"
     "{{ lower }}{%- endmacro %}{% macro plain_interval_unused_lower(lower, hand_n, hand_category_n, z=none, "
     "subset_n=none, to_zero_only=false) -%}"),
    ("{% macro ppi_interval_widen_upper(upper, hand_n, hand_category_n, z=none, subset_n=none, to_one_only=false) -%}",
     "{% macro ppi_interval_widen_upper(upper, hand_n, hand_category_n, z=none, subset_n=none, to_one_only=false) -%}"
     "{{ upper }}{%- endmacro %}{% macro plain_interval_unused_upper(upper, hand_n, hand_category_n, z=none, "
     "subset_n=none, to_one_only=false) -%}"),
    ("(cast({{ variance }} as double) < 1e-12 or cast({{ share }} as double) <= 0 or cast({{ share }} as double) >= 1)",
     "(1 = 0)"),
)


def plain_interval_queries(workdir: Path, dbt_vars: dict) -> dict[str, str]:
    """The correction SQL with the plain interval (no boundary hull): compiled from a copy of the project in
    workdir/plain_interval whose ppi_interval.sql has PLAIN_INTERVAL_PATCHES applied (each must match)."""
    root = project_root()
    copy = workdir / "plain_interval"
    shutil.rmtree(copy, ignore_errors=True)
    for item in ("models", "macros", "seeds", "tests", "dbt_project.yml", "profiles.yml"):
        source = root / item
        if source.is_dir():
            shutil.copytree(source, copy / item, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
        elif source.is_file():
            shutil.copy(source, copy / item)
    interval = copy / "macros" / "stats" / "ppi_interval.sql"
    text = interval.read_text()
    for old, new in PLAIN_INTERVAL_PATCHES:
        if old not in text:
            raise SystemExit(f"{interval}: no longer contains {old[:60]}...; update PLAIN_INTERVAL_PATCHES")
        text = text.replace(old, new)
    interval.write_text(text)
    target = copy / "target"
    environment = {**os.environ, "LFH_DB": str(copy / "lfh.duckdb")}
    subprocess.run([str(Path(sys.executable).parent / "dbt"), "compile", "--project-dir", str(copy), "--profiles-dir",
                    str(copy), "--select", *CORRECTION_MODELS.values(), "--target-path", str(target),
                    "--vars", json.dumps(check_vars(dbt_vars))],
                   env=environment, cwd=copy, check=True, capture_output=True)
    nodes = {node["name"]: node for node in json.loads((target / "manifest.json").read_text())["nodes"].values()
             if node["resource_type"] == "model"}
    return {kind: checked_sql(model, nodes[model]["compiled_code"]) for kind, model in CORRECTION_MODELS.items()}


if __name__ == "__main__":
    main()
