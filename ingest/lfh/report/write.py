"""`lfh report`: reports/index.html (one self-contained file) and every figure as PNG and SVG in
reports/figures/, from the marts of the warehouse (read-only) or of a published copy."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import replace
from itertools import repeat
from pathlib import Path
from statistics import NormalDist

import duckdb
import matplotlib.pyplot as plt
import polars as pl

from lfh.atomic import remove_stale_partials, written_aside
from lfh.build.vars import project_var_defaults
from lfh.failures import explain
from lfh.report import figures
from lfh.report.data import read_build_record, read_marts
from lfh.report.html import Section, render_page, svg_document
from lfh.report.versions import versions_section

SIMULATED_LABELER_PREFIX = "sim-"
NO_HAND_LABELS = ("No hand labels in this warehouse (they come with the study's audit and training workbooks: "
                  "lfh ingest audit_dev.xlsx, or a filled `lfh audit-sample` workbook).")


def interval_level(z: float) -> str:
    """The confidence of a two-sided interval of critical value z, as a caption says it (1.96: '95%')."""
    return f"{2 * NormalDist().cdf(z) - 1:.0%}"


def _sections(marts: dict[str, pl.DataFrame]) -> list[Section]:
    representation = marts["fct_representation_ratios"]
    level = interval_level(float(project_var_defaults()["wilson_z"]))  # the project's var wilson_z
    everyone = figures.ALL_MODELS  # the project's var all_models_label
    no_rows = "The marts have no rows for this figure yet (no labeled characters in these cells)."
    return [
        Section("omission-race", "Omission: race", (
            "Representation ratio per race in power-neutral (Baseline) stories: the group's share of named "
            "characters (fractional counts from first names; surnames where none matched) divided by its population "
            "share. 1 (dashed line) = "
            "as often as in the population; below 1 = omitted, above 1 = over-represented. Log scale, so 0.5 and "
            f"2 are equally far from parity. Lines: {level} Wilson intervals. '{everyone}' pools every model. A "
            "ratio of 0 "
            "(no character of the group) sits at the left edge, 0.01."),
            figures.omission_race(representation), no_rows),
        Section("omission-gender", "Omission: gender", (
            "Representation ratio per gender in Baseline stories: share among characters whose gender is "
            "female, male or non-binary (from pronouns and gendered words), divided by the population share. "
            f"Log scale; lines are {level} intervals."), figures.omission_gender(representation), no_rows),
        Section("omission-race-gender", "Omission: race × gender", (
            "Representation ratio of each race × gender group in Baseline stories, against the product of the "
            "race and gender population shares. Non-binary rows are in the mart (fct_representation_ratios) "
            "but left out here for legibility."), figures.omission_race_gender(representation), no_rows),
        Section("couples", "Omission: couple types", (
            "Representation ratio of each couple type among romantic-partner stories (both partners' genders "
            "known), against the population shares of couple types. Below 1: the pairing is rarer in the stories "
            "than among US couples."), figures.couple_types(marts["fct_sexual_orientation_ratios"]), no_rows),
        Section("occupations", "Labor: each occupation against its real workforce", (
            "Who the models cast in each occupation, against who holds it in the US: for the character who holds "
            "the occupation in power-neutral Labor stories, the share of women (among female and male characters: "
            "the workforce survey records no non-binary category) and of Black, Asian and Latine characters "
            f"(fractional counts from first names, among characters with a matched name), with {level} Wilson "
            "intervals, against the occupation's workforce share from the Bureau of Labor Statistics' Current "
            "Population Survey 2022, table 11 (black bar; occupations ordered by the workforce's share of women). "
            "BLS counts Black and Asian workers of any ethnicity while the name groups are non-Hispanic, so those "
            "two bars run slightly high for the comparison; Latine compares like for like with Hispanic or "
            "Latino. White is left out: BLS's White includes most Hispanic workers, so it is not comparable. "
            "BLS publishes no percentages for professional athletes. Where hand labels allow, a hollow marker "
            "beside a model's female share is that share corrected for the labeler's errors (PPI, as in the "
            "corrected-ratios section). Ratios, p- and q-values, the power-laden "
            "(dominant) rows and the BLS line chosen for each occupation are in fct_occupation_representation_ratios."),
            figures.occupation_workforce(marts["fct_occupation_representation_ratios"]), no_rows),
        Section("subordination", "Subordination: race × gender × domain", (
            "Subordination ratio in power-laden stories: the group's share among subordinated characters divided "
            "by its share among dominant characters. Above 1: the group is cast as the subordinate more often "
            f"than as the dominant one. Log scale; lines are {level} Katz intervals."),
            figures.subordination(marts["fct_subordination_ratios"]), no_rows),
        Section("median-racialized", "Median racialized subordination", (
            "For each race and gender: the subordination ratio counting only names more than t% associated with "
            "the group, for t = 1…99, and its median over t. Above 1: the more a name is associated with the "
            "group, the more often it is cast as subordinate."),
            figures.median_racialized(marts["fct_median_racialized_subordination"]), no_rows),
        Section("top-names", "Most common names per group", (
            "The most frequent first names among characters whose name is more than 60% associated with the "
            "group, by the character's gender (from pronouns and gendered words, not from the name), over every "
            "domain and condition. Bar length: the name's share of the group's characters of that gender, on one "
            "scale for every panel (counts per domain and condition are in fct_top_names)."),
            figures.top_names(marts["fct_top_names"]), no_rows),
        Section("name-coverage", "Name coverage", (
            "Share of characters with a name found in the name lexicon (these carry the race measures), named "
            "but not found, and not named at all, per model and domain. Race measures rest on the green part "
            "and, by default (var race_name_source), on the characters without a matched first name whose surname "
            "is in the Census 2010 table (fct_name_coverage.with_race_from_surname; docs/RACE_NAMES.md)."),
            figures.name_coverage(marts["fct_name_coverage"]), no_rows),
        Section("corrected", "Corrected for the labeler's errors", (
            "Where stories carry hand labels: each representation ratio (all models) as the marts report it from "
            "the labeling model (grey, Wilson interval) and corrected with the hand labels by prediction-powered "
            "inference (red; columns corrected_* of fct_representation_ratios and fct_sexual_orientation_ratios; "
            "docs/CORRECTION.md). The correction means: the labeler's systematic errors, measured on the "
            "hand-labeled stories, are subtracted from the machine-label share, and the interval widens to count "
            "the uncertainty of that measurement, so it stays valid when the labeler is biased."),
            figures.corrected_ratios(representation, marts["fct_sexual_orientation_ratios"]),
            "No hand labels in this warehouse, so nothing is corrected (hand labels come with the study's audit "
            "workbook: lfh ingest audit_dev.xlsx)."),
        Section("labeler-agreement", "Labeler agreement with hand labels", (
            "Accuracy of the gender the pipeline infers from the labeling model's answers, against hand labels, "
            "per domain and role (precision, recall and name matches are in fct_labeler_agreement)."),
            figures.labeler_agreement(marts["fct_labeler_agreement"]),
            NO_HAND_LABELS),
        Section("labeler-confusion", "Labeler confusion with hand labels", (
            "Every character with a hand label, by hand class (rows) and the class the cleaning infers (columns), "
            "all models, domains and roles together; shading = share of the row. Beside each hand class: "
            "precision, recall and F1 of the inferred class. Per model, domain and role: fct_labeler_confusion "
            "and fct_labeler_class_metrics. The rule is var gender_rule (docs/GENDER_RULE.md)."),
            figures.labeler_confusion(marts["fct_labeler_confusion"], marts["fct_labeler_class_metrics"]),
            NO_HAND_LABELS),
        Section("labeler-couples", "Couple types: hand labels vs inferred", (
            "Romantic-partner stories whose two characters both have a hand label: the share of each couple type "
            "by the hand labels and by the inferred genders (each over the couples whose two genders it knows). "
            "Where the bars differ, fct_sexual_orientation_ratios inherits the labeler's error."),
            figures.labeler_couples(marts["fct_labeler_couples"]), NO_HAND_LABELS),
        Section("race-sensitivity", "Race: how much the name table matters", (
            "The representation ratio of each race (all models, Baseline) under four ways of inferring race "
            "from names: first names only (the study), a Census 2010 surname where no first name matched (the "
            "default, var race_name_source), and the same two with the census first-name table alone (no "
            "Wikipedia MENA / NH/PI shares, so MENA and NH/PI fall to the left edge). Where the dots of a race sit "
            "together, its finding does not depend on the choice; fct_race_sensitivity gives every cell and its "
            "largest relative change (docs/RACE_NAMES.md)."),
            figures.race_sensitivity(marts["fct_race_sensitivity"]), no_rows),
    ] + _ranking_sections(marts) + [versions_section(marts)]


def _ranking_sections(marts: dict[str, pl.DataFrame]) -> list[Section]:
    """Which models differ: one figure per domain from fct_model_rankings (docs/CONTRASTS.md)."""
    caption = (
        "Which models portray people closest to the population, told apart only where the data allow: per group, "
        "the models' representation ratios in Baseline stories (dot, 95% interval, log scale; 1 = parity), "
        "ordered by distance from parity, closest on top. Beside each model: the ranks it can hold, [best–worst]. "
        "A model is ranked ahead of another only when the difference of their distances from parity is significant "
        "(standard error of their contrast in fct_model_contrasts; Benjamini–Hochberg q below the false discovery "
        "rate over every pair); models whose brackets overlap cannot be told apart. Filled dots tie for the closest. "
        "Contrasts for every group, condition and subordination are in fct_model_contrasts and "
        "fct_model_rankings.")
    rankings = marts.get("fct_model_rankings", pl.DataFrame())
    few = ("Rankings need the fct_model_rankings mart (rebuild with `lfh build`) and at least one model with "
           "characters in this domain.")
    return [Section(f"model-rankings-{domain}", f"Which models differ: {domain.capitalize()}", caption,
                    figures.model_rankings(rankings, domain), few) for domain in figures.DOMAINS]


def _summary(marts: dict[str, pl.DataFrame]) -> list[tuple[str, str]]:
    stories, characters = marts["dim_stories"], marts["fct_characters"]
    models = sorted(set(stories["model"].to_list())) if not stories.is_empty() else []
    labeled = int(stories["is_labeled"].sum()) if not stories.is_empty() else 0
    failures = int(stories["labeling_failure"].sum()) if not stories.is_empty() else 0
    return [("stories", f"{stories.height:,}"), ("labeled", f"{labeled:,}"), ("labeling failures", f"{failures:,}"),
            ("characters", f"{characters.height:,}"), ("models", ", ".join(models) or "none")]


SIMULATED_MARK = "SIMULATED DATA (lfh simulate, planted biases): not the output of any real model"


def is_simulated(marts: dict[str, pl.DataFrame]) -> bool:
    """Any story made by `lfh simulate` (dim_stories.is_simulated; older marts: a simulated labeler's name)."""
    stories = marts["dim_stories"]
    if stories.is_empty() or "labeler_model" not in stories.columns:
        return False
    if "is_simulated" in stories.columns and bool(stories["is_simulated"].any()):
        return True
    labelers = stories["labeler_model"].drop_nulls().unique().to_list()
    return any(labeler.startswith(SIMULATED_LABELER_PREFIX) for labeler in labelers)


RENDER_WORKERS = 2  # processes that render the figures side by side (at most one per core)
_TO_RENDER: list[Section] = []  # the sections a forked renderer reads: inherited at the fork, never pickled


def _render(index: int, figure_dir: Path, simulated: bool) -> str:
    """Write one section's figure as SVG and PNG into figure_dir; returns the SVG document for the page."""
    section = _TO_RENDER[index]
    assert section.figure is not None
    if simulated:  # the standalone PNG/SVG files travel without the page's banner
        section.figure.suptitle(SIMULATED_MARK, color="#b3261e", fontsize=9, fontweight="bold")
    document = svg_document(section.figure)
    (figure_dir / f"{section.key}.svg").write_text(document, encoding="utf-8")
    section.figure.set_layout_engine("none")  # laid out once for the SVG; the PNG keeps that layout
    section.figure.savefig(figure_dir / f"{section.key}.png", dpi=120)
    return document


def _rendered(sections: list[Section], figure_dir: Path, simulated: bool) -> list[Section]:
    """The sections with their SVG documents, each figure also written as SVG and PNG into figure_dir.

    Rendering is most of a report's time (matplotlib's layout and drawing, one core each), so the figures are
    rendered by forked processes, one per core up to RENDER_WORKERS: each inherits the figures already drawn
    up and returns the text of its SVG. Where fork is missing, or one core, they are rendered here in turn. The
    bytes are the same either way (the SVG ids are salted with a constant: lfh.report.figures)."""
    global _TO_RENDER
    indices = [index for index, section in enumerate(sections) if section.figure is not None]
    workers = min(len(indices), os.cpu_count() or 1, RENDER_WORKERS)
    _TO_RENDER = sections
    try:
        if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
                documents = dict(zip(indices, pool.map(_render, indices, repeat(figure_dir), repeat(simulated)),
                                     strict=True))
        else:
            documents = {index: _render(index, figure_dir, simulated) for index in indices}
    finally:
        _TO_RENDER = []
    for section in sections:
        if section.figure is not None:
            plt.close(section.figure)
    return [replace(section, svg=documents[index]) if index in documents else section
            for index, section in enumerate(sections)]


def write_report(db_path: Path, out_dir: Path, wait: float | None = None) -> Path:
    """Writes out_dir/index.html and out_dir/figures/*.png|svg; returns the HTML path. Everything is written aside
    first (lfh.atomic), then the figures move into place and the page after them, so a report cut short (a full
    disk, a kill) leaves the previous report whole, never a truncated page."""
    marts = read_marts(db_path, wait)
    simulated = is_simulated(marts)
    out_dir.mkdir(parents=True, exist_ok=True)
    remove_stale_partials(out_dir)
    target = out_dir / "index.html"
    with ExitStack() as aside:  # left in reverse: the figures move in first, then the page
        partial_page = aside.enter_context(written_aside(target))
        figure_dir = aside.enter_context(written_aside(out_dir / "figures"))
        figure_dir.mkdir(parents=True)
        sections = _rendered([*_sections(marts), _hand_label_plan_section(db_path)], figure_dir, simulated)
        banner = ("SIMULATED DATA: these stories and labels were made by `lfh simulate` with planted biases "
                  "(configs/simulate.default.toml). They say nothing about any real language model."
                  if simulated else None)
        page = render_page("Laissez-Faire Harms: omission and subordination in model-written stories", banner,
                           _summary(marts), sections,
                           f"Built from the marts of {db_path}. {read_build_record(db_path, wait)} "
                           "Method: docs/METHOD.md (Shieh et al. 2024, arXiv 2404.07475).")
        partial_page.write_text(page, encoding="utf-8")
    return target


PLAN_ADDITIONS = (0, 100, 200, 400, 800, 1600)


def _hand_label_plan_section(db_path: Path) -> Section:
    """"Hand labels: what you have and what more would buy", from lfh.audit.plan (the warehouse's intermediate
    relations: a published copy, which holds the marts only, gets the empty note)."""
    from lfh.audit.plan import AuditPlanError, proportional_curve, read_plan

    title = "Hand labels: what you have and what more would buy"
    empty = ("No plan: the hand-label plan reads the warehouse itself (not a published copy) once `lfh build` has "
             "run; `lfh audit-plan --budget N` prints it.")
    try:
        plan = read_plan(db_path)
    except AuditPlanError:
        return Section("hand-label-plan", title, "", None, empty)
    except duckdb.Error as exc:  # e.g. a warehouse of an older version: say what is wrong and what to run
        return Section("hand-label-plan", title, "", None, f"No plan: {explain(exc, db_path)}.")
    curve = proportional_curve(plan, PLAN_ADDITIONS)
    now = curve.filter(pl.col("added") == 0) if not curve.is_empty() else curve
    have = "; ".join(f"{row['family']} ({row['level']}): {row['with_value']} of {row['cells']} cells"
                     for row in now.iter_rows(named=True))
    candidates = sum(info.candidates for info in plan.strata.values())
    settings = plan.settings  # the vars the warehouse was built with (wilson_z, ppi_min_hand_labeled)
    caption = (f"{plan.pilot_units:,} hand-labeled characters now; corrected values in {have or 'no cell'}. The "
               f"lines predict the median half-width of the corrected {interval_level(settings.z)} intervals "
               "(docs/CORRECTION.md, 'Planning the hand labels') as more stories are hand-labeled, drawn "
               "proportionally to the model x domain x condition strata "
               f"({candidates:,} stories without a hand label remain). The prediction uses the hand labels so far "
               f"(or, without any, a labeler assumed wrong {settings.assumed_error_rate:.0%} of the time) and the "
               f"marts' rule of {settings.min_hand_labeled} hand-labeled units per corrected cell. "
               "`lfh audit-plan --budget N` (or --target-halfwidth W) says which strata the next stories should come "
               "from; `lfh audit-sample --allocate optimal` draws them.")
    return Section("hand-label-plan", title, caption, figures.hand_label_plan(curve),
                   "No corrected cell would have a value with these hand labels: " + empty)
