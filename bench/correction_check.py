"""Checking the hand-label correction (docs/CORRECTION.md) by hiding hand labels: on a warehouse built with every
story hand-labeled, draw random splits into a hand-labeled part and a part whose hand labels are hidden, run the
correction models' own compiled SQL on each split, and count how often the corrected interval covers the share
the hand labels give on the whole set. The uncorrected (machine-label, Wilson) interval of the mart is the same
for every split: it covers that share or it does not.

One dbt compile, then one small query per split and model on the one warehouse: no dbt build per split. The
models are compiled with var correction_units_relation = UNITS (macro correction_units), so that they read their
units from UNITS; each split makes UNITS a copy of int_correction_units_counted with the hand labels of the hidden
stories taken off.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from lfh.build.dbt import run_dbt

COUNTED_MODEL = "int_correction_units_counted"
COUNTED = f"intermediate.{COUNTED_MODEL}"
# kind -> the correction model the check scores
CORRECTION_MODELS = {"gender": "int_gender_shares_corrected", "couple": "int_couple_shares_corrected"}
# the relation the checks' compiled correction SQL reads its units from (a temp table or view of the check's
# connection, with the columns of int_correction_units_counted), and the var that makes the models read it
UNITS = "ppi_check_units"
CHECK_VARS = {"correction_units_relation": UNITS}
KEPT_TABLE = "ppi_check_kept_stories"
KEPT_SPLITS = "ppi_check_kept_splits"  # (split, story_id): every split's hand-labeled stories
SPLIT_MARK = "#split"  # domain || SPLIT_MARK || split: one gender run scores every split


class CorrectionCheckError(RuntimeError):
    """The warehouse cannot be used for the check (not built, or not every story hand-labeled)."""


@dataclass
class CellCoverage:
    """One cell (model, domain, condition, group) over the splits."""

    truth: float
    uncorrected_covers: bool
    uncorrected_share: float
    splits: int = 0
    covered: int = 0
    widths: list[float] = field(default_factory=list)


def check_vars(dbt_vars: dict | None = None) -> dict:
    """`dbt_vars` with CHECK_VARS: what the checks compile the correction models with."""
    return {**(dbt_vars or {}), **CHECK_VARS}


def compiled_correction_sql(db_path: Path, target_path: Path, dbt_vars: dict | None = None) -> dict[str, str]:
    """The compiled SELECT of each correction model (with `dbt_vars` over the project's vars), reading its units
    from UNITS (check_vars)."""
    run_dbt(["compile", "--select", *CORRECTION_MODELS.values(), "--target-path", str(target_path)],
            db_path=db_path, dbt_vars=check_vars(dbt_vars), capture=True)
    return correction_sql_from_manifest(target_path)


# The gender and couple correction models with the story's machine-label class (int_correction_units_counted's
# story_class) as one more stratum key: the same macros as the models, for measuring stratified PPI over strata
# model x domain x condition x machine-label class before any model uses them (docs/CORRECTION.md, "Strata on the
# machine labels").
_GENDER_BY_CLASS = """
with units as (
    select model, domain, condition, story_class, machine_class, hand_class, is_hand_labeled, unit_count
    from {{ correction_units() }}
    where family = 'gender'
),
genders as ({{ codes_relation(measure_gender_codes(), 'gender') }}),
indicators as (
    select units.model, units.domain, units.condition, units.story_class, genders.gender, units.is_hand_labeled,
        units.unit_count,
        case when units.machine_class = genders.gender then 1.0 else 0.0 end as f_a,
        case when units.machine_class in {{ sql_in_list(measure_gender_codes()) }} then 1.0 else 0.0 end as f_b,
        case when units.hand_class = genders.gender then 1.0 else 0.0 end as y_a,
        case when units.hand_class in {{ sql_in_list(measure_gender_codes()) }} then 1.0 else 0.0 end as y_b
    from units cross join genders
)
{{ ppi_corrected_shares('indicators', ['domain', 'condition', 'gender'], stratum_keys=['story_class']) }}
"""
_COUPLE_BY_CLASS = """
with couples as (
    select model, prompt_condition, story_class, machine_class, hand_class, is_hand_labeled, unit_count
    from {{ correction_units() }}
    where family = 'couple'
),
couple_types as ({{ codes_relation(couple_type_codes(), 'couple_type') }}),
indicators as (
    select couples.model, couples.prompt_condition, couples.story_class, couple_types.couple_type,
        couples.is_hand_labeled, couples.unit_count,
        case when couples.machine_class = couple_types.couple_type then 1.0 else 0.0 end as f_a,
        case when couples.machine_class in {{ sql_in_list(couple_type_codes()) }} then 1.0 else 0.0 end as f_b,
        case when couples.hand_class = couple_types.couple_type then 1.0 else 0.0 end as y_a,
        case when couples.hand_class in {{ sql_in_list(couple_type_codes()) }} then 1.0 else 0.0 end as y_b
    from couples cross join couple_types
)
{{ ppi_corrected_shares('indicators', ['couple_type'], stratum_keys=['prompt_condition', 'story_class']) }}
"""
INLINE_MARK = "Compiled inline node is:"


def compiled_machine_class_sql(db_path: Path, target_path: Path, dbt_vars: dict | None = None) -> dict[str, str]:
    """compiled_correction_sql's queries with the machine-label class as a stratum key (_GENDER_BY_CLASS,
    _COUPLE_BY_CLASS, compiled inline by dbt with the project's macros and check_vars(`dbt_vars`)): they read UNITS
    as those do."""
    queries = {}
    for kind, text in (("gender", _GENDER_BY_CLASS), ("couple", _COUPLE_BY_CLASS)):
        outcome = run_dbt(["compile", "--inline", text, "--target-path", str(target_path)],
                          db_path=db_path, dbt_vars=check_vars(dbt_vars), capture=True)
        if INLINE_MARK not in outcome.stdout:
            raise CorrectionCheckError(f"dbt compile --inline gave no compiled SQL for the {kind} model")
        queries[kind] = outcome.stdout.split(INLINE_MARK, 1)[1].strip()
        if UNITS not in queries[kind]:
            raise CorrectionCheckError(f"the {kind} model by class does not read {UNITS}")
    return queries


def correction_sql_from_manifest(target_path: Path) -> dict[str, str]:
    """compiled_correction_sql's queries from the manifest a dbt compile of the correction models with check_vars
    left in `target_path`."""
    manifest = json.loads((target_path / "manifest.json").read_text())
    nodes = {node["name"]: node for node in manifest["nodes"].values() if node["resource_type"] == "model"}
    return {kind: checked_sql(model, nodes[model].get("compiled_code")) for kind, model in CORRECTION_MODELS.items()}


def checked_sql(model: str, code: str | None) -> str:
    """A correction model's compiled SQL, which must read UNITS (compiled with check_vars)."""
    if not code or UNITS not in code:
        raise CorrectionCheckError(f"{model}: no compiled SQL reading {UNITS}: compile it with check_vars()")
    return code


def _truths(connection: duckdb.DuckDBPyConnection) -> dict[tuple, tuple[float, float, bool]]:
    """Whole-set hand-label share per cell, with the mart's uncorrected share and whether its Wilson interval
    covers the hand-label share. Gender cells: (model, domain, condition, gender); couple cells: (model, type)."""
    truths = {}
    gender_rows = connection.execute(f"""
        with characters as (select * from {COUNTED} where family = 'gender'),
        cells as (
            select model, domain, condition, hand_class, unit_count from characters
            union all
            select 'All', domain, condition, hand_class, unit_count from characters
        ),
        shares as (
            select model, domain, condition, g.gender,
                   coalesce(sum(unit_count) filter (where hand_class = g.gender), 0)::double
                   / nullif(sum(unit_count) filter (where hand_class in ('female', 'male', 'nonbinary')), 0) as truth
            from cells cross join (select unnest(['female', 'male', 'nonbinary']) as gender) as g
            group by all
        )
        select shares.model, shares.domain, shares.condition, shares.gender, truth,
               r.observed_share, r.share_ci_lower, r.share_ci_upper
        from shares join marts.fct_representation_ratios as r
          on r.race is null and r.model = shares.model and r.domain = shares.domain
         and r.condition = shares.condition and r.gender = shares.gender
        where truth is not null and r.observed_share is not null
    """).fetchall()
    for model, domain, condition, gender, truth, share, lower, upper in gender_rows:
        truths[("gender", model, domain, condition, gender)] = (truth, share, lower <= truth <= upper)
    return truths


def _couple_truths(connection: duckdb.DuckDBPyConnection, couple_sql: str) -> dict[tuple, tuple[float, float, bool]]:
    """Whole-set hand-label couple shares: the couple model run with every hand label (lam = 0 cells) gives them."""
    connection.execute(f"create or replace temp table {UNITS} as select * from {COUNTED}")
    rows = connection.execute(f"""
        with full_set as ({couple_sql})
        select full_set.model, full_set.couple_type, full_set.corrected_share,
               o.observed_share, o.ci_lower * o.expected_share, o.ci_upper * o.expected_share,
               full_set.unlabeled_n
        from full_set join marts.fct_sexual_orientation_ratios as o
          on o.model = full_set.model and o.couple_type = full_set.couple_type
        where full_set.corrected_share is not null and o.observed_share is not null
    """).fetchall()
    truths = {}
    for model, couple_type, truth, share, lower, upper, unlabeled in rows:
        if unlabeled != 0:
            raise CorrectionCheckError("some romantic couples lack hand labels: the check needs every story labeled")
        truths[("couple", model, couple_type)] = (truth, share, lower <= truth <= upper)
    return truths


def run_splits(db_path: Path, target_path: Path, splits: int, labeled_fraction: float,
               seed: int = 20240101, dbt_vars: dict | None = None,
               queries: dict[str, str] | None = None) -> dict[tuple, CellCoverage]:
    """Coverage of every cell over `splits` random story-level splits, hand labels kept on `labeled_fraction`.
    `queries` (as compiled_correction_sql returns them) replaces the compile, e.g. to score another version's
    compiled SQL on the same splits."""
    queries = queries or compiled_correction_sql(db_path, target_path, dbt_vars)
    # read-only: the splits live in temp tables, so a warehouse that other tests read at the same time serves too
    connection = duckdb.connect(str(db_path), read_only=True)
    try:
        unlabeled = connection.execute(
            f"select coalesce(sum(unit_count) filter (where not is_hand_labeled), 0), coalesce(sum(unit_count), 0) "
            f"from {COUNTED} where family = 'gender'").fetchone()
        if unlabeled[1] == 0 or unlabeled[0] > 0:
            raise CorrectionCheckError(
                f"{db_path}: {unlabeled[0]} of {unlabeled[1]} characters without a hand label; the check needs a "
                "warehouse where every story is hand-labeled (e.g. audit_dev.xlsx ingested and built)")
        truths = _truths(connection) | _couple_truths(connection, queries["couple"])
        cells = {key: CellCoverage(truth, covers, share) for key, (truth, share, covers) in truths.items()}
        stories = connection.execute(
            f"select count(distinct story_id) from {COUNTED} where family = 'gender'").fetchone()[0]
        keep = max(1, round(labeled_fraction * stories))
        generator = random.Random(seed)  # noqa: S311 -- reproducible splits, not secrets
        # story-level splits: in each, the `keep` stories first in a seeded random order keep their hand labels
        connection.execute(f"create or replace temp table {KEPT_SPLITS} (split integer, story_id varchar)")
        for split in range(splits):
            connection.execute(f"""
                insert into {KEPT_SPLITS}
                select ?, story_id
                from (select distinct story_id from {COUNTED} where family = 'gender')
                order by hash(story_id || ?), story_id
                limit {keep}
            """, [split, str(generator.getrandbits(62))])
        _score_gender_splits(connection, queries, cells, splits)
        for split in range(splits):
            connection.execute(f"create or replace temp table {KEPT_TABLE} as "
                               f"select story_id from {KEPT_SPLITS} where split = ?", [split])
            _mask(connection, "couple")
            _score_rows(cells, [(("couple", model, couple_type), lower, upper)
                                for model, couple_type, lower, upper in _couple_rows(connection, queries)])
    finally:
        connection.close()
    return cells


def _score_gender_splits(connection: duckdb.DuckDBPyConnection, queries: dict[str, str],
                         cells: dict[tuple, CellCoverage], splits: int) -> None:
    """Every split of KEPT_SPLITS scored with ONE run of the gender model: each split's copy of the counted
    characters carries the split in `domain`. domain is a key of every gender cell and pool (a pool spans models, never
    domains) and the model's SQL reads no domain value, so the run gives each split's cells exactly what a run on
    that split alone gives; one query instead of one per split. (The couple model's pools span every key but the
    couple type, so it runs per split.)"""
    connection.execute(f"""
        create or replace temp table {UNITS} as
        select units.* replace (
            units.domain || '{SPLIT_MARK}' || cast(splits.split as varchar) as domain,
            units.cell_key || '{SPLIT_MARK}' || cast(splits.split as varchar) as cell_key,
            case when kept.story_id is not null then units.hand_class end as hand_class,
            units.is_hand_labeled and kept.story_id is not null as is_hand_labeled)
        from {COUNTED} as units
        cross join (select cast(range as integer) as split from range({splits})) as splits
        left join {KEPT_SPLITS} as kept on kept.split = splits.split and kept.story_id = units.story_id
        where units.family = 'gender'
    """)
    rows = connection.execute(
        f"select model, domain, condition, gender, corrected_share_ci_lower, corrected_share_ci_upper "
        f"from ({queries['gender']}) where corrected_share is not null").fetchall()
    _score_rows(cells, [(("gender", model, domain.rsplit(SPLIT_MARK, 1)[0], condition, gender), lower, upper)
                        for model, domain, condition, gender, lower, upper in rows])


def _couple_rows(connection: duckdb.DuckDBPyConnection, queries: dict[str, str]) -> list[tuple]:
    return connection.execute(
        f"select model, couple_type, corrected_share_ci_lower, corrected_share_ci_upper "
        f"from ({queries['couple']}) where corrected_share is not null").fetchall()


def _score_rows(cells: dict[tuple, CellCoverage], results: list[tuple]) -> None:
    """Count (cell key, lower, upper) results into their cells: one more split, covered or not, and its width."""
    for key, lower, upper in results:
        cell = cells.get(key)
        if cell is None:
            continue
        cell.splits += 1
        cell.covered += int(lower <= cell.truth + 1e-12 and cell.truth - 1e-12 <= upper)
        cell.widths.append(upper - lower)


def _score(connection: duckdb.DuckDBPyConnection, queries: dict[str, str], cells: dict[tuple, CellCoverage]) -> None:
    gender = connection.execute(
        f"select model, domain, condition, gender, corrected_share_ci_lower, corrected_share_ci_upper "
        f"from ({queries['gender']}) where corrected_share is not null").fetchall()
    results = [(("gender", *row[:4]), row[4], row[5]) for row in gender]
    results += [(("couple", *row[:2]), row[2], row[3]) for row in _couple_rows(connection, queries)]
    _score_rows(cells, results)


def summarize(cells: dict[tuple, CellCoverage], select: re.Pattern | None = None) -> dict[str, float]:
    """Pooled coverage over the chosen cells (key joined by '/', matched by `select`), with the mean width of the
    corrected interval over cell-splits and the count of zero-width corrected intervals."""
    chosen = [cell for key, cell in cells.items()
              if cell.splits and (select is None or select.search("/".join(map(str, key))))]
    evaluations = sum(cell.splits for cell in chosen)
    widths = [width for cell in chosen for width in cell.widths]
    return {
        "cells": len(chosen),
        "evaluations": evaluations,
        "corrected_coverage": sum(cell.covered for cell in chosen) / evaluations if evaluations else float("nan"),
        "uncorrected_coverage": (sum(cell.uncorrected_covers for cell in chosen) / len(chosen)
                                 if chosen else float("nan")),
        "mean_width": sum(widths) / len(widths) if widths else float("nan"),
        # below 1e-6: a zero variance that rounding left a hair above 0 is a zero-width interval too
        "zero_width": sum(1 for width in widths if width <= 1e-6),
    }


GROUPS = {
    "every cell": None,
    "all-model gender cells": r"^gender/All/",
    "per-model gender cells": r"^gender/(?!All/)",
    "all-model couple cells": r"^couple/All/",
    "per-model couple cells": r"^couple/(?!All/)",
    "Female-Male couples, all models": r"^couple/All/female_male$",
    "non-binary shares (characters and couples)": r"nonbinary",
}

GENDERS = ("female", "male", "nonbinary")
COUPLE_TYPES = ("female_male", "female_female", "male_male", "female_nonbinary", "male_nonbinary",
                "nonbinary_nonbinary")


def category_groups() -> dict[str, str]:
    """One group per category and level (docs/CORRECTION.md's per-category table): each gender share and each
    couple type, in the all-model cells and in the per-model cells."""
    groups = {}
    for gender in GENDERS:
        groups[f"{gender} share, all-model cells"] = rf"^gender/All/.*/{gender}$"
        groups[f"{gender} share, per-model cells"] = rf"^gender/(?!All/).*/{gender}$"
    for couple_type in COUPLE_TYPES:
        groups[f"{couple_type} couples, all models"] = rf"^couple/All/{couple_type}$"
        groups[f"{couple_type} couples, per model"] = rf"^couple/(?!All/).*/{couple_type}$"
    return groups


def report_lines(cells: dict[tuple, CellCoverage]) -> list[str]:
    """One line per group of cells: corrected coverage over cells x splits, uncorrected coverage over cells,
    and the same restricted to the cells whose uncorrected interval misses the hand-label share."""
    lines = []
    for label, pattern in GROUPS.items():
        summary = summarize(cells, re.compile(pattern) if pattern else None)
        missed = {key: cell for key, cell in cells.items() if not cell.uncorrected_covers}
        missed_summary = summarize(missed, re.compile(pattern) if pattern else None)
        lines.append(
            f"{label}: {summary['cells']} cells, corrected interval covers {summary['corrected_coverage']:.3f} "
            f"of {summary['evaluations']} cell-splits, uncorrected covers {summary['uncorrected_coverage']:.3f} of "
            f"cells; where the uncorrected misses ({missed_summary['cells']} cells) the corrected covers "
            f"{missed_summary['corrected_coverage']:.3f}")
    return lines


def category_table(cells: dict[tuple, CellCoverage]) -> list[str]:
    """A markdown table, one row per category and level: cells, cell-splits, corrected coverage, zero-width
    corrected intervals, mean corrected width, uncorrected (Wilson) coverage of cells."""
    lines = ["| cells | n cells | cell-splits | corrected covers | zero-width | mean width | uncorrected covers |",
             "|---|---|---|---|---|---|---|"]
    for label, pattern in {**GROUPS, **category_groups()}.items():
        summary = summarize(cells, re.compile(pattern) if pattern else None)
        if not summary["evaluations"]:
            continue
        lines.append(f"| {label} | {summary['cells']} | {summary['evaluations']} | "
                     f"{summary['corrected_coverage']:.1%} | {summary['zero_width']} | {summary['mean_width']:.4f} | "
                     f"{summary['uncorrected_coverage']:.1%} |")
    return lines


def _mask_kept_and_score(connection: duckdb.DuckDBPyConnection, queries: dict[str, str],
                         cells: dict[tuple, CellCoverage], kept: list[str]) -> None:
    """Hide every hand label but those of the `kept` stories, then score the correction models on the rest."""
    connection.execute(f"create or replace temp table {KEPT_TABLE} as select unnest(?::varchar[]) as story_id",
                       [kept])
    _mask_and_score(connection, queries, cells)


def _mask_and_score(connection: duckdb.DuckDBPyConnection, queries: dict[str, str],
                    cells: dict[tuple, CellCoverage]) -> None:
    """Hide the hand labels of every story not in KEPT_TABLE (its characters, and its couple: a couple keeps its
    hand type when its story keeps its hand labels), then score the correction models."""
    _mask(connection)
    _score(connection, queries, cells)


def _mask(connection: duckdb.DuckDBPyConnection, family: str | None = None) -> None:
    """UNITS: int_correction_units_counted (the units of `family`, or of every family) with hand labels kept only
    on the stories in KEPT_TABLE."""
    connection.execute(f"""
        create or replace temp table {UNITS} as
        select units.* replace (
            case when kept.story_id is not null then units.hand_class end as hand_class,
            units.is_hand_labeled and kept.story_id is not null as is_hand_labeled)
        from {COUNTED} as units
        left join {KEPT_TABLE} as kept on kept.story_id = units.story_id
        {f"where units.family = '{family}'" if family else ""}
    """)


def run_kept_sets(db_path: Path, queries: dict[str, str], kept_sets: list[list[str]]) -> dict[tuple, CellCoverage]:
    """Coverage and widths of every cell over given hand-labeled story sets (one run of the correction models per
    set, e.g. the draws of an audit-sample allocation), on a warehouse where every story is hand-labeled.
    `queries` from compiled_correction_sql()."""
    connection = duckdb.connect(str(db_path))
    try:
        truths = _truths(connection) | _couple_truths(connection, queries["couple"])
        cells = {key: CellCoverage(truth, covers, share) for key, (truth, share, covers) in truths.items()}
        for kept in kept_sets:
            _mask_kept_and_score(connection, queries, cells, list(kept))
    finally:
        connection.close()
    return cells


def mean_width(cells: dict[tuple, CellCoverage], keys: list[tuple]) -> float:
    """The mean over `keys` of each cell's mean interval width over its runs."""
    widths = [sum(cells[key].widths) / len(cells[key].widths) for key in keys]
    return sum(widths) / len(widths) if widths else float("nan")


@dataclass
class AllocationRun:
    """One allocation's runs of the correction models: the cells' coverage and widths, and the half-width the
    plan (lfh.audit.plan) predicted for each cell with that allocation; `ceiling`: the smallest half-width the plan
    sees for each cell if the budget served that cell alone (lfh.audit.plan.best_cell_half_width)."""

    cells: dict[tuple, CellCoverage]
    predicted: dict[tuple, float]
    ceiling: dict[tuple, float] = field(default_factory=dict)


def compare_allocations(db_path: Path, queries: dict[str, str], pilot_stories: int, extra_stories: int,
                        draws: int, pilots: int = 1, families: tuple[str, ...] = ("gender", "couple"),
                        min_per_stratum: int = 3, seed: int = 20, settings: object = None,
                        selection: object = None) -> dict[str, list[AllocationRun]]:
    """On a fully hand-labeled warehouse: for each of `pilots` random proportional pilots of `pilot_stories`
    stories, plan `extra_stories` more by `lfh audit-sample`'s optimal allocation (from the pilot's hand labels
    only) and by its proportional one, draw each `draws` times at random within the strata, and run the
    correction models on pilot + draw. Returns, per allocation, one AllocationRun per pilot. `settings`: the
    plan's (lfh.audit.plan.PlanSettings of the vars `queries` were compiled with); `selection`: the cells served
    (lfh.audit.plan.Selection; default every cell of `families`)."""
    from lfh.audit.plan import Selection

    chosen = selection or Selection(tuple(families))
    runs = compare_selections(db_path, queries, pilot_stories, extra_stories, draws, {"optimal": chosen}, pilots,
                              min_per_stratum, seed, settings)
    return {"optimal": runs["optimal"], "proportional": runs["proportional"]}


def compare_selections(db_path: Path, queries: dict[str, str], pilot_stories: int, extra_stories: int, draws: int,
                       selections: dict[str, object], pilots: int = 1, min_per_stratum: int = 3, seed: int = 20,
                       settings: object = None) -> dict[str, list[AllocationRun]]:
    """compare_allocations for several selections at once (name -> lfh.audit.plan.Selection): the same pilots and
    the same proportional draws (proportional allocation does not depend on the selection), one optimal allocation
    per selection. Returns runs under "proportional" and under each selection's name; predictions and ceilings for
    every gender and couple cell."""
    return _compare_selections(db_path, queries, pilot_stories, extra_stories, draws, selections, pilots,
                               min_per_stratum, seed, settings, ceilings=True)


def compare_selections_without_ceilings(db_path: Path, queries: dict[str, str], pilot_stories: int,
                                        extra_stories: int, draws: int, selections: dict[str, object],
                                        pilots: int = 1, min_per_stratum: int = 3, seed: int = 20,
                                        settings: object = None) -> dict[str, list[AllocationRun]]:
    """compare_selections without the plan's ceilings (best_cell_half_width for every cell: the most expensive part
    of a small comparison); the same pilots, draws and allocations."""
    return _compare_selections(db_path, queries, pilot_stories, extra_stories, draws, selections, pilots,
                               min_per_stratum, seed, settings, ceilings=False)


def _stories_by_stratum(stories: object, fine: bool = False) -> dict[tuple, list[str]]:
    """Story ids per stratum (model, domain, prompt condition; with `fine`, and machine_class), sorted: what the
    draws sample from."""
    columns = ["model", "domain", "prompt_condition", *(["machine_class"] if fine else [])]
    by_stratum: dict[tuple, list[str]] = {}
    for story_id, *key in sorted(stories.select("story_id", *columns).iter_rows()):
        by_stratum.setdefault(tuple(key), []).append(story_id)
    return by_stratum


def _stream(seed: int, *names: object) -> random.Random:
    # one stream per pilot and allocation: the same pilots and proportional draws whichever selections (and plan
    # settings) a run compares, so two runs differ only in what they change
    return random.Random("/".join(map(str, (seed, *names))))  # noqa: S311 -- reproducible draws, not secrets


def _draw(by_stratum: dict[tuple, list[str]], allocation: dict[tuple, int], taken: set[str],
          generator: random.Random) -> list[str]:
    drawn = []
    for stratum, count in sorted(allocation.items()):
        free = [story for story in by_stratum[stratum] if story not in taken]
        drawn += generator.sample(free, min(count, len(free)))
    return drawn


def _pilot(by_stratum: dict[tuple, list[str]], pilot_stories: int, seed: int, index: int) -> list[str]:
    from lfh.audit.allocation import allocate

    sizes = {key: len(value) for key, value in by_stratum.items()}
    return _draw(by_stratum, allocate(sizes, pilot_stories, 1), set(), _stream(seed, index, "pilot"))


def allocation_pilots(stories: object, pilot_stories: int, pilots: int, seed: int = 20) -> list[list[str]]:
    """The story ids of the proportional pilots compare_selections draws with these arguments (`stories`: the
    labeled stories lfh.audit.plan.read_units returns), e.g. to plan on them with other settings."""
    by_stratum = _stories_by_stratum(stories)
    return [_pilot(by_stratum, pilot_stories, seed, index) for index in range(pilots)]


def compare_machine_label_strata(db_path: Path, queries: dict[str, str], fine_queries: dict[str, str],
                                 pilot_stories: int, extra_stories: int, draws: int, selections: dict[str, object],
                                 pilots: int = 1, min_per_stratum: int = 0, min_labeled: int = 2, seed: int = 20,
                                 settings: object = None,
                                 today_min_per_stratum: int = 3) -> dict[str, list[AllocationRun]]:
    """compare_selections with the strata split by the machine-label class (lfh.audit.plan.MACHINE_CLASSES): the same
    pilots (drawn over model x domain x condition), then the extra stories allocated over the finer strata (at least
    `min_per_stratum` more each and `min_labeled` hand-labeled in all, lfh.audit.plan.stratum_floors) proportionally
    ("proportional") and optimally for each selection, all scored with `fine_queries` (compiled_machine_class_sql:
    the correction models' macros with the class as a stratum key); and, for reference, today's proportional
    allocation and estimator ("proportional today": the draws compare_selections makes, scored with `queries`)."""
    return _compare_selections(db_path, fine_queries, pilot_stories, extra_stories, draws, selections, pilots,
                               min_per_stratum, seed, settings, ceilings=False, fine=True, min_labeled=min_labeled,
                               today=(queries, today_min_per_stratum))


def _compare_selections(db_path: Path, queries: dict[str, str], pilot_stories: int, extra_stories: int, draws: int,
                        selections: dict[str, object], pilots: int, min_per_stratum: int, seed: int,
                        settings: object, ceilings: bool, fine: bool = False, min_labeled: int = 0,
                        today: tuple[dict[str, str], int] | None = None) -> dict[str, list[AllocationRun]]:
    from lfh.audit.allocation import allocate
    from lfh.audit.plan import (
        best_cell_half_width,
        build_plan,
        mask_units,
        plan_allocation,
        predicted_half_width,
        read_units,
        stratum_floors,
    )

    with duckdb.connect(str(db_path), read_only=True) as connection:
        units, stories = read_units(connection, "machine_label_class" if fine else "model_domain_condition")
    coarse = _stories_by_stratum(stories)  # the pilots are drawn over today's strata whatever the comparison
    by_stratum = _stories_by_stratum(stories, fine)
    runs: dict[str, list[AllocationRun]] = {"proportional": [], **{name: [] for name in selections}}
    if today is not None:
        runs["proportional today"] = []
    for index in range(pilots):
        pilot = _pilot(coarse, pilot_stories, seed, index)
        plan = build_plan(*mask_units(units, stories, pilot), settings)
        candidates = {key: len(value) - len(set(value) & set(pilot)) for key, value in by_stratum.items()}
        floors = stratum_floors(candidates, {key: len(value) - candidates[key] for key, value in by_stratum.items()},
                                min_per_stratum, min_labeled)
        allocations = {"proportional": allocate(candidates, extra_stories, min_per_stratum, floors)}
        for name, selection in selections.items():
            allocations[name] = plan_allocation(plan, budget=extra_stories, min_per_stratum=min_per_stratum,
                                                candidates=candidates, selection=selection, min_labeled=min_labeled)
        if today is not None:
            today_queries, today_floor = today
            today_candidates = {key: len(value) - len(set(value) & set(pilot)) for key, value in coarse.items()}
            today_allocation = allocate(today_candidates, extra_stories, today_floor)
            today_stream = _stream(seed, index, "proportional")
            kept_sets = [pilot + _draw(coarse, today_allocation, set(pilot), today_stream) for _ in range(draws)]
            runs["proportional today"].append(AllocationRun(run_kept_sets(db_path, today_queries, kept_sets), {}))
        ceiling = {}
        for cell in plan.cells if ceilings else ():
            if cell.family in ("gender", "couple"):
                width = best_cell_half_width(plan, cell, extra_stories, candidates)
                if width is not None:
                    ceiling[(cell.family, cell.model, *cell.key)] = width
        now = plan.labeled_now()
        for name, allocation in allocations.items():
            stream = _stream(seed, index, name)
            kept_sets = [pilot + _draw(by_stratum, allocation, set(pilot), stream) for _ in range(draws)]
            cells = run_kept_sets(db_path, queries, kept_sets)
            planned = {stratum: now[stratum] + allocation.get(stratum, 0) for stratum in now}
            predicted = {}
            for cell in plan.cells:
                width = predicted_half_width(cell, planned, plan.settings)
                if width is not None and cell.family in ("gender", "couple"):
                    predicted[(cell.family, cell.model, *cell.key)] = width
            runs[name].append(AllocationRun(cells, predicted, ceiling))
    return runs


def allocation_summary(runs: dict[str, list[AllocationRun]], select: re.Pattern) -> dict[str, float]:
    """Over the cells `select` matches that have a value in every run of both allocations: the mean interval width
    of each allocation and how much narrower the optimal one is; per allocation the pooled coverage and the mean
    predicted and realised half-widths (over the cells with a prediction and a value); the plan's predicted gain
    (predicted_narrower) and its ceiling (ceiling_narrower: every selected cell at the least half-width the budget
    could give it alone), over the cells with both predictions and a ceiling. `select`: a re.Pattern over cell
    names, or anything with its `search` (lfh.audit.plan.Selection)."""
    summary: dict[str, float] = {}
    widths = {"optimal": [], "proportional": []}
    for optimal, proportional in zip(runs["optimal"], runs["proportional"], strict=True):
        common = [key for key, cell in optimal.cells.items()
                  if select.search("/".join(map(str, key))) and cell.widths and proportional.cells[key].widths]
        widths["optimal"].append(mean_width(optimal.cells, common))
        widths["proportional"].append(mean_width(proportional.cells, common))
        summary["cells"] = float(len(common))
    for name, values in widths.items():
        summary[f"{name}_width"] = sum(values) / len(values)
    summary["narrower"] = 1 - summary["optimal_width"] / summary["proportional_width"]
    # what the plan expected: its predicted gain, and its ceiling (every cell at the least the budget could give it)
    planned = {"optimal": [], "proportional": [], "ceiling": [], "base": []}
    for optimal, proportional in zip(runs["optimal"], runs["proportional"], strict=True):
        for key in optimal.predicted.keys() & proportional.predicted.keys():
            if select.search("/".join(map(str, key))):
                planned["optimal"].append(optimal.predicted[key])
                planned["proportional"].append(proportional.predicted[key])
                if key in optimal.ceiling:  # runs without ceilings (compare_selections_without_ceilings) have none
                    planned["ceiling"].append(optimal.ceiling[key])
                    planned["base"].append(proportional.predicted[key])
    if planned["proportional"]:
        summary["predicted_narrower"] = 1 - sum(planned["optimal"]) / sum(planned["proportional"])
    if planned["base"]:
        summary["ceiling_narrower"] = 1 - sum(planned["ceiling"]) / sum(planned["base"])
    for name, allocation_runs in runs.items():
        covered = evaluations = 0
        predicted: list[float] = []
        realised: list[float] = []
        for run in allocation_runs:
            for key, cell in run.cells.items():
                if not select.search("/".join(map(str, key))) or not cell.widths:
                    continue
                covered += cell.covered
                evaluations += cell.splits
                if key in run.predicted:
                    predicted.append(run.predicted[key])
                    realised.append(sum(cell.widths) / len(cell.widths) / 2)
        summary[f"{name}_coverage"] = covered / evaluations if evaluations else float("nan")
        summary[f"{name}_predicted_half_width"] = sum(predicted) / len(predicted) if predicted else float("nan")
        summary[f"{name}_realised_half_width"] = sum(realised) / len(realised) if realised else float("nan")
    return summary


# The columns of a relation of characters that units_from_characters() reads (those of int_characters_hand_paired
# the gender family counts), in the order run_on_characters() takes them.
CHARACTER_COLUMNS = (("story_id", "varchar"), ("role", "varchar"), ("model", "varchar"), ("domain", "varchar"),
                     ("condition", "varchar"), ("prompt_id", "varchar"), ("role_text", "varchar"),
                     ("inferred_gender", "varchar"), ("hand_gender", "varchar"), ("is_hand_labeled", "boolean"))
# The columns of a relation of couples that units_from_couples() reads (two characters each).
COUPLE_COLUMNS = (("story_id", "varchar"), ("model", "varchar"), ("prompt_condition", "varchar"),
                  ("inferred_couple_type", "varchar"), ("hand_couple_type", "varchar"), ("is_hand_labeled", "boolean"))


def units_from_characters(connection: duckdb.DuckDBPyConnection, characters: str) -> None:
    """UNITS, for the checks' compiled correction SQL: the gender family of a relation of characters made by a test
    (CHARACTER_COLUMNS), one row per character, coded as int_correction_units_counted codes a character (no
    inferred gender: 'none'; no hand label: no hand class)."""
    connection.execute(f"""
        create or replace temp table {UNITS} as
        select 'gender' as family, story_id, model, domain, cast(null as varchar) as prompt_condition,
               cast(null as varchar) as story_class, domain as cell_key, condition,
               coalesce(inferred_gender, 'none') as machine_class,
               case when is_hand_labeled then hand_gender end as hand_class, is_hand_labeled, 1 as unit_count
        from {characters}""")


def units_from_couples(connection: duckdb.DuckDBPyConnection, couples: str) -> None:
    """UNITS: the couple family of a relation of romantic couples made by a test (COUPLE_COLUMNS), coded as
    int_correction_units_counted codes a couple (no type: 'untyped')."""
    connection.execute(f"""
        create or replace temp table {UNITS} as
        select 'couple' as family, story_id, model, 'love' as domain, prompt_condition,
               cast(null as varchar) as story_class, 'romantic' as cell_key, cast(null as varchar) as condition,
               coalesce(inferred_couple_type, 'untyped') as machine_class,
               case when is_hand_labeled then coalesce(hand_couple_type, 'untyped') end as hand_class,
               is_hand_labeled, 1 as unit_count
        from {couples}""")


def run_on_characters(query: str, rows: list[tuple], columns: str) -> list[tuple]:
    """The gender correction's compiled SQL (compiled_correction_sql()['gender']) run on the given characters
    (tuples in CHARACTER_COLUMNS order) in a fresh in-memory DuckDB: `select {columns}` from its rows."""
    connection = duckdb.connect()
    try:
        columns_sql = ", ".join(f"{name} {kind}" for name, kind in CHARACTER_COLUMNS)
        connection.execute(f"create table characters ({columns_sql})")
        connection.executemany(f"insert into characters values ({', '.join('?' for _ in CHARACTER_COLUMNS)})", rows)
        units_from_characters(connection, "characters")
        return connection.execute(f"select {columns} from ({query})").fetchall()
    finally:
        connection.close()


# The marts (and what they read) that the correction check needs from a built audit.
CHECK_SELECTION = ["+fct_representation_ratios", "+fct_sexual_orientation_ratios", "+dim_stories"]


def _ingest_fresh(workbook: Path, warehouse: Path) -> None:
    """The workbook ingested into a new warehouse file (replaced if it exists)."""
    from lfh.landing.ingest import ingest_paths

    warehouse.parent.mkdir(parents=True, exist_ok=True)
    warehouse.unlink(missing_ok=True)
    results, _ = ingest_paths([workbook], db_path=warehouse)
    failed = [result.summary() for result in results if result.error is not None]
    if failed or not results:
        raise CorrectionCheckError(f"{workbook}: could not be ingested: {'; '.join(failed) or 'not read'}")


def build_dev_audit(workbook: Path, warehouse: Path, dbt_vars: dict | None = None) -> Path:
    """A fully hand-labeled audit workbook (the study's audit_dev.xlsx) ingested into a new warehouse file and built
    as far as the correction check reads (CHECK_SELECTION), with `dbt_vars`: the warehouse the checks of this
    module run on. Replaces the file if it exists."""
    _ingest_fresh(workbook, warehouse)
    run_dbt(["build", "--select", *CHECK_SELECTION], db_path=warehouse, dbt_vars=dbt_vars, capture=True)
    return warehouse
