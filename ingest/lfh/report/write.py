"""`lfh report`: reports/index.html (one self-contained file) and every figure as PNG and SVG in
reports/figures/, from the marts of the warehouse (read-only) or of a published copy."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click
import matplotlib.pyplot as plt
import polars as pl

from lfh.paths import database_path, project_root
from lfh.report import figures
from lfh.report.data import MartsMissing, read_marts
from lfh.report.html import Section, render_page, svg_document

SIMULATED_LABELER_PREFIX = "sim-"


def _sections(marts: dict[str, pl.DataFrame]) -> list[Section]:
    representation = marts["fct_representation_ratios"]
    no_rows = "The marts have no rows for this figure yet (no labeled characters in these cells)."
    return [
        Section("omission-race", "Omission: race", (
            "Representation ratio per race in power-neutral (Baseline) stories: the group's share of named "
            "characters (fractional counts from first names) divided by its population share. 1 (dashed line) = "
            "as often as in the population; below 1 = omitted, above 1 = over-represented. Log scale, so 0.5 and "
            "2 are equally far from parity. Lines: 95% Wilson intervals. 'All' pools every model. A ratio of 0 "
            "(no character of the group) sits at the left edge, 0.01."),
            figures.omission_race(representation), no_rows),
        Section("omission-gender", "Omission: gender", (
            "Representation ratio per gender in Baseline stories: share among characters whose gender is "
            "female, male or non-binary (from pronouns and gendered words), divided by the population share. "
            "Log scale; lines are 95% intervals."), figures.omission_gender(representation), no_rows),
        Section("omission-race-gender", "Omission: race × gender", (
            "Representation ratio of each race × gender group in Baseline stories, against the product of the "
            "race and gender population shares. Non-binary rows are in the mart (fct_representation_ratios) "
            "but left out here for legibility."), figures.omission_race_gender(representation), no_rows),
        Section("couples", "Omission: couple types", (
            "Representation ratio of each couple type among romantic-partner stories (both partners' genders "
            "known), against the population shares of couple types. Below 1: the pairing is rarer in the stories "
            "than among US couples."), figures.couple_types(marts["fct_sexual_orientation_ratios"]), no_rows),
        Section("subordination", "Subordination: race × gender × domain", (
            "Subordination ratio in power-laden stories: the group's share among subordinated characters divided "
            "by its share among dominant characters. Above 1: the group is cast as the subordinate more often "
            "than as the dominant one. Log scale; lines are 95% Katz intervals."),
            figures.subordination(marts["fct_subordination_ratios"]), no_rows),
        Section("median-racialized", "Median racialized subordination", (
            "For each race and gender: the subordination ratio counting only names more than t% associated with "
            "the group, for t = 1…99, and its median over t. Above 1: the more a name is associated with the "
            "group, the more often it is cast as subordinate."),
            figures.median_racialized(marts["fct_median_racialized_subordination"]), no_rows),
        Section("top-names", "Most common names per group", (
            "The most frequent first names among characters whose name is more than 60% associated with the "
            "group, by gender, over every domain and condition (counts per domain and condition are in "
            "fct_top_names)."), figures.top_names(marts["fct_top_names"]), no_rows),
        Section("name-coverage", "Name coverage", (
            "Share of characters with a name found in the name lexicon (these carry the race measures), named "
            "but not found, and not named at all, per model and domain. Race measures rest on the green part "
            "only."), figures.name_coverage(marts["fct_name_coverage"]), no_rows),
        Section("labeler-agreement", "Labeler agreement with hand labels", (
            "Accuracy of the gender the pipeline infers from the labeling model's answers, against hand labels, "
            "per domain and role (precision, recall and name matches are in fct_labeler_agreement)."),
            figures.labeler_agreement(marts["fct_labeler_agreement"]),
            "No hand labels in this warehouse (they come with the study's audit and training workbooks: "
            "lfh ingest audit_dev.xlsx)."),
    ]


def _summary(marts: dict[str, pl.DataFrame]) -> list[tuple[str, str]]:
    stories, characters = marts["dim_stories"], marts["fct_characters"]
    models = sorted(set(stories["model"].to_list())) if not stories.is_empty() else []
    labeled = int(stories["is_labeled"].sum()) if not stories.is_empty() else 0
    failures = int(stories["labeling_failure"].sum()) if not stories.is_empty() else 0
    return [("stories", f"{stories.height:,}"), ("labeled", f"{labeled:,}"), ("labeling failures", f"{failures:,}"),
            ("characters", f"{characters.height:,}"), ("models", ", ".join(models) or "none")]


def is_simulated(marts: dict[str, pl.DataFrame]) -> bool:
    stories = marts["dim_stories"]
    if stories.is_empty() or "labeler_model" not in stories.columns:
        return False
    labelers = stories["labeler_model"].drop_nulls().unique().to_list()
    return any(labeler.startswith(SIMULATED_LABELER_PREFIX) for labeler in labelers)


def write_report(db_path: Path, out_dir: Path) -> Path:
    """Writes out_dir/index.html and out_dir/figures/*.png|svg; returns the HTML path."""
    marts = read_marts(db_path)
    figure_dir = out_dir / "figures"
    figure_dir.mkdir(parents=True, exist_ok=True)
    sections = []
    for section in _sections(marts):
        if section.figure is not None:
            document = svg_document(section.figure)
            (figure_dir / f"{section.key}.svg").write_text(document, encoding="utf-8")
            section.figure.set_layout_engine("none")  # laid out once for the SVG; the PNG keeps that layout
            section.figure.savefig(figure_dir / f"{section.key}.png", dpi=120)
            plt.close(section.figure)
            section = replace(section, svg=document)
        sections.append(section)
    banner = ("SIMULATED DATA: these stories and labels were made by `lfh simulate` with planted biases "
              "(configs/simulate.default.toml). They say nothing about any real language model."
              if is_simulated(marts) else None)
    page = render_page("Laissez-Faire Harms: omission and subordination in model-written stories", banner,
                       _summary(marts), sections,
                       f"Built from the marts of {db_path}. Method: METHOD.md (Shieh et al. 2024, arXiv 2404.07475).")
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / "index.html"
    target.write_text(page, encoding="utf-8")
    return target


@click.command()
@click.option("--db", "db_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="DuckDB file to read (read-only). Default: the warehouse (LFH_DB). A published copy works too: "
                   "--db warehouse/published/marts.duckdb.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder. Default: reports/.")
def report(db_path: Path | None, out_dir: Path | None) -> None:
    """Write reports/index.html (self-contained, opens offline) and the figures as PNG and SVG."""
    try:
        target = write_report((db_path or database_path()).resolve(), (out_dir or project_root() / "reports").resolve())
    except MartsMissing as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"report: {target}\nfigures: {target.parent / 'figures'}")
