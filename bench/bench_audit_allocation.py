"""Optimal against proportional hand-label allocation on the study's development audit, for every natural selection
of cells (lfh.audit.plan.NATURAL_SELECTIONS), with more pilots and draws than tests/test_audit_allocation.py
affords: audit_dev.xlsx ingested and built once (gender rule `study`, the biased labeler the correction is validated
on); then for each of PILOTS random proportional pilots of PILOT stories, EXTRA more stories allocated by
`lfh audit-sample --allocate optimal` for each selection (planned from the pilot only) and by the proportional
allocation, each drawn DRAWS times, and the correction models run on pilot + draw
(bench.correction_check.compare_selections). Prints, per selection, the mean interval width of each allocation
over the selected cells, the realised and the planned gain, the plan's ceiling (every selected cell at the least
half-width the budget could give it alone), the coverage of the whole-audit hand-label share (all-model, per-model)
and the plan's predicted against realised half-width.

Run: .venv/bin/python -m bench.bench_audit_allocation [--pilot 100] [--extra 200] [--draws 10] [--pilots 4]
     [--var ppi_machine_mean=unlabeled] [--selection NAME] [--objective variance]
     [--min-per-stratum 1] [--no-ceiling] [--workdir DIR] [--reuse]
Needs the study's audit_dev.xlsx (docs/DATA.md); says so and stops where it is absent.
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
from pathlib import Path

import duckdb

from bench.correction_check import (
    allocation_pilots,
    allocation_summary,
    build_dev_audit,
    compare_machine_label_strata,
    compare_selections,
    compare_selections_without_ceilings,
    compiled_correction_sql,
    compiled_machine_class_sql,
)
from lfh.audit.allocation import allocate
from lfh.audit.plan import (
    NATURAL_SELECTIONS,
    OBJECTIVES,
    STRATA,
    PlanSettings,
    Selection,
    build_plan,
    mask_units,
    plan_allocation,
    predicted_half_width,
    read_units,
    stratum_floors,
)
from lfh.build.vars import parse_var_text, project_var_defaults
from lfh.paths import project_root

WORKBOOK = project_root().parent / "shared" / "data" / "laissez-faire" / "audit_dev.xlsx"
BIASED_RULE = {"gender_rule": "study"}


def level(selection: Selection, name: str) -> Selection | None:
    return dataclasses.replace(selection, levels=(name,)) if name in selection.levels else None


def report(runs: dict, selections: dict[str, Selection]) -> list[str]:
    """One markdown row per selection (docs/CORRECTION.md's table)."""
    lines = ["| selection | cells | mean width, optimal / proportional | narrower | per pilot | planned | ceiling "
             "| coverage all-model, optimal / proportional | coverage per-model, optimal / proportional | half-width "
             "predicted / realised, optimal | … proportional |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, selection in selections.items():
        pair = {"optimal": runs[name], "proportional": runs["proportional"]}
        summary = allocation_summary(pair, selection)
        coverage = []
        for level_name in ("all-model", "per-model"):
            chosen = level(selection, level_name)
            if chosen is None:
                coverage.append("–")
                continue
            part = allocation_summary(pair, chosen)
            coverage.append(f"{part['optimal_coverage']:.1%} / {part['proportional_coverage']:.1%}")
        per_pilot = [allocation_summary({"optimal": [optimal], "proportional": [proportional]}, selection)["narrower"]
                     for optimal, proportional in zip(runs[name], runs["proportional"], strict=True)]
        lines.append(
            f"| {name} | {summary['cells']:.0f} | {summary['optimal_width']:.3f} / {summary['proportional_width']:.3f} "
            f"| {summary['narrower']:.1%} | {min(per_pilot):.0%} to {max(per_pilot):.0%} | "
            f"{summary.get('predicted_narrower', float('nan')):.1%} | "
            f"{summary.get('ceiling_narrower', float('nan')):.1%} | {coverage[0]} | {coverage[1]} | "
            f"{summary['optimal_predicted_half_width']:.3f} / {summary['optimal_realised_half_width']:.3f} | "
            f"{summary['proportional_predicted_half_width']:.3f} / "
            f"{summary['proportional_realised_half_width']:.3f} |")
    return lines


def _mean_widths(plan, allocation: dict, selection: Selection, settings: PlanSettings) -> dict[tuple, float | None]:
    now = plan.labeled_now()
    stories = {stratum: now[stratum] + allocation.get(stratum, 0) for stratum in now}
    return {(cell.family, cell.model, *cell.key): predicted_half_width(cell, stories, settings)
            for cell in plan.cells if selection.matches(cell)}


def today_report(runs: dict, selections: dict[str, Selection]) -> list[str]:
    """Each selection's optimal allocation over the machine-label strata (and the proportional one over them) against
    today's proportional allocation and estimator, on the same pilots."""
    lines = ["| selection | mean width: optimal by class / proportional by class / today's proportional | optimal "
             "narrower than today's | proportional by class narrower than today's | coverage all-model, today's "
             "| coverage per-model, today's |", "|---|---|---|---|---|---|"]
    for name, selection in selections.items():
        optimal = allocation_summary({"optimal": runs[name], "proportional": runs["proportional today"]}, selection)
        by_class = allocation_summary({"optimal": runs["proportional"], "proportional": runs["proportional today"]},
                                      selection)
        coverage = []
        pair = {"optimal": runs[name], "proportional": runs["proportional today"]}
        for level_name in ("all-model", "per-model"):
            chosen = level(selection, level_name)
            coverage.append("–" if chosen is None else
                            f"{allocation_summary(pair, chosen)['proportional_coverage']:.1%}")
        lines.append(f"| {name} | {optimal['optimal_width']:.3f} / {by_class['optimal_width']:.3f} / "
                     f"{optimal['proportional_width']:.3f} | {optimal['narrower']:.1%} | {by_class['narrower']:.1%} | "
                     f"{coverage[0]} | {coverage[1]} |")
    return lines


def oracle_report(warehouse: Path, selections: dict[str, Selection], settings: PlanSettings, pilot_stories: int,
                  extra: int, pilots: int, min_per_stratum: int, strata: str = "model_domain_condition",
                  min_labeled: int = 0, today_min_per_stratum: int = 3) -> list[str]:
    """What an allocation could gain if each stratum's labeler errors were known: on the same pilots as the runs,
    the plan built from EVERY hand label of the audit (each stratum's true moments; the pilot's counts) allocates the
    extra stories for each selection, and the predicted mean half-width of its allocation, of the one the pilot's
    plan chose, and of the proportional one are compared over the selected cells (no SQL run: the plan's model).
    "oracle": the best the estimator and the floors leave any allocation; "pilot's plan": how much of it the
    100-story pilot's estimates find."""
    fine = strata != "model_domain_condition"
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        units, stories = read_units(connection, strata)
        today_units, today_stories = read_units(connection) if fine else (units, stories)
    oracle = build_plan(units, stories, settings)
    today_oracle = build_plan(today_units, today_stories, settings) if fine else oracle
    gains: dict[str, list[tuple[float, ...]]] = {name: [] for name in selections}
    for pilot in allocation_pilots(today_stories, pilot_stories, pilots):
        plan = build_plan(*mask_units(units, stories, pilot), settings)
        truth = dataclasses.replace(oracle, strata=plan.strata)
        candidates = {stratum: info.candidates for stratum, info in plan.strata.items()}
        floors = stratum_floors(candidates, plan.labeled_now(), min_per_stratum, min_labeled)
        proportional = allocate(candidates, extra, min_per_stratum, floors)
        today_plan = build_plan(*mask_units(today_units, today_stories, pilot), settings) if fine else plan
        today_truth = dataclasses.replace(today_oracle, strata=today_plan.strata)
        today_candidates = {stratum: info.candidates for stratum, info in today_plan.strata.items()}
        today_proportional = allocate(today_candidates, extra, today_min_per_stratum)
        for name, selection in selections.items():
            chosen = {"oracle": plan_allocation(truth, budget=extra, min_per_stratum=min_per_stratum,
                                                candidates=candidates, selection=selection, min_labeled=min_labeled),
                      "pilot": plan_allocation(plan, budget=extra, min_per_stratum=min_per_stratum,
                                               candidates=candidates, selection=selection, min_labeled=min_labeled),
                      "proportional": proportional}
            widths = {key: _mean_widths(truth, allocation, selection, settings) for key, allocation in chosen.items()}
            widths["today"] = _mean_widths(today_truth, today_proportional, selection, settings)
            keys = [key for key in widths["today"] if all(widths[which].get(key) is not None for which in widths)]
            totals = {which: sum(widths[which][key] for key in keys) for which in widths}
            gains[name].append((1 - totals["oracle"] / totals["proportional"],
                                1 - totals["pilot"] / totals["proportional"],
                                1 - totals["oracle"] / totals["today"], 1 - totals["pilot"] / totals["today"]))
    lines = ["| selection | oracle allocation, planned gain | pilot's allocation, gain under the oracle | oracle "
             "allocation against today's proportional | pilot's allocation against today's proportional |",
             "|---|---|---|---|---|"]
    for name, values in gains.items():
        lines.append("| " + name + " | " + " | ".join(
            f"{sum(v[index] for v in values) / len(values):.1%}" for index in range(4)) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pilot", type=int, default=100)
    parser.add_argument("--extra", type=int, default=200)
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--pilots", type=int, default=4)
    parser.add_argument("--var", action="append", default=[], metavar="NAME=VALUE",
                        help="a dbt var for the correction models (and the plan), e.g. ppi_machine_mean=unlabeled")
    parser.add_argument("--selection", action="append", default=None, choices=sorted(NATURAL_SELECTIONS),
                        help="only these natural selections (default: all)")
    parser.add_argument("--objective", choices=OBJECTIVES, default=PlanSettings.objective,
                        help="what the optimal allocation minimises over the selected cells (lfh.audit.plan)")
    parser.add_argument("--prior-units", type=float, default=PlanSettings.prior_units,
                        help="pseudo-units of the confusion-matrix prediction in each stratum's residual moments")
    parser.add_argument("--min-per-stratum", type=int, default=3,
                        help="audit-sample's floor per stratum for the extra stories (30 strata: 3 fixes 90 of 200)")
    parser.add_argument("--no-ceiling", action="store_true",
                        help="skip the plan's per-cell ceilings (the slowest part; they do not depend on --objective)")
    parser.add_argument("--oracle", action="store_true",
                        help="only the plan's oracle figures (every hand label known; no SQL run): oracle_report")
    parser.add_argument("--strata", choices=STRATA, default=STRATA[0],
                        help="the sampling strata of the extra stories: machine_label_class splits each by the "
                             "machine labels' class (the estimator too; the pilots stay today's)")
    parser.add_argument("--min-labeled", type=int, default=2,
                        help="with --strata machine_label_class: hand-labeled stories every stratum has at least")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--reuse", action="store_true", help="reuse the warehouse already in --workdir")
    options = parser.parse_args()
    if not WORKBOOK.is_file():
        print(f"{WORKBOOK} not present (docs/DATA.md): nothing to measure")
        return
    workdir = options.workdir or Path(tempfile.mkdtemp(prefix="bench_audit_allocation_"))
    warehouse = workdir / "lfh.duckdb"
    if not (options.reuse and warehouse.is_file()):
        build_dev_audit(WORKBOOK, warehouse, BIASED_RULE)
    dbt_vars = {**BIASED_RULE, **{name: parse_var_text(value) for name, _, value in
                                  (text.partition("=") for text in options.var)}}
    started = time.perf_counter()
    settings = PlanSettings.from_vars({**project_var_defaults(), **dbt_vars}, objective=options.objective,
                                      prior_units=options.prior_units)
    selections = {name: NATURAL_SELECTIONS[name] for name in (options.selection or NATURAL_SELECTIONS)}
    fine = options.strata != STRATA[0]
    min_labeled = options.min_labeled if fine else 0
    if options.oracle:
        lines = oracle_report(warehouse, selections, settings, options.pilot, options.extra, options.pilots,
                              options.min_per_stratum, options.strata, min_labeled)
        print(f"oracle: strata {options.strata} (at least {min_labeled} hand-labeled), "
              f"pilot {options.pilot} + {options.extra} stories, {options.pilots} pilots, objective "
              f"{options.objective}, at least {options.min_per_stratum} per stratum, "
              f"{time.perf_counter() - started:.0f} s")
        print("\n".join(lines))
        return
    queries = compiled_correction_sql(warehouse, workdir / "target", dbt_vars)
    if fine:
        fine_queries = compiled_machine_class_sql(warehouse, workdir / "target_by_class", dbt_vars)
        runs = compare_machine_label_strata(warehouse, queries, fine_queries, options.pilot, options.extra,
                                            options.draws, selections, options.pilots, options.min_per_stratum,
                                            min_labeled, settings=settings)
    else:
        compare = compare_selections_without_ceilings if options.no_ceiling else compare_selections
        runs = compare(warehouse, queries, options.pilot, options.extra, options.draws, selections, options.pilots,
                       options.min_per_stratum, settings=settings)
    print(f"pilot {options.pilot} + {options.extra} stories, {options.pilots} pilots x {options.draws} draws per "
          f"allocation, vars {dbt_vars}, objective {options.objective}, prior units {options.prior_units}, at least "
          f"{options.min_per_stratum} per stratum, strata {options.strata} (at least {min_labeled} hand-labeled), "
          f"{time.perf_counter() - started:.0f} s")
    print("\n".join(report(runs, selections)))
    if "proportional today" in runs:
        print("\n".join(today_report(runs, selections)))


if __name__ == "__main__":
    main()
