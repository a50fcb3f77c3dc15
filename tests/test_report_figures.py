"""The report's figures drawn from small hand-made marts (fast, no pipeline): text is never math, panels of a
figure share their x range, log axes carry plain-number ticks, and no two texts of a figure overlap."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import matplotlib.pyplot as plt
import polars as pl
import pytest
from click.testing import CliRunner
from matplotlib.figure import Figure
from matplotlib.text import Text

from lfh.cli.report import report
from lfh.paths import project_root, reports_dir_for
from lfh.report import figures
from lfh.report.html import svg_document

MODELS = ("gpt$^$turbo", "price $5 model", "All")  # `$` pairs that are not valid math, and one lone `$`


def _ratios(value_column: str, with_bounds: bool = True) -> pl.DataFrame:
    rows = []
    for model_index, model in enumerate(MODELS):
        for domain_index, domain in enumerate(figures.DOMAINS):
            for race_index, race in enumerate(figures.RACES):
                for gender in ("female", "male", None):
                    # domains with very different ranges: shared axes must still cover all of them
                    value = (0.3 + 0.4 * race_index + 0.1 * model_index) * (4.0 if domain_index == 2 else 1.0)
                    row = {"model": model, "domain": domain, "condition": "baseline", "race": race,
                           "gender": gender, value_column: value}
                    if with_bounds:
                        row |= {"ci_lower": value / 2, "ci_upper": value * 1.5}
                    rows.append(row)
    for model, domain, gender in itertools.product(MODELS, figures.DOMAINS, figures.GENDER_LABELS):
        rows.append({"model": model, "domain": domain, "condition": "baseline", "race": None, "gender": gender,
                     value_column: 0.8} | ({"ci_lower": 0.6, "ci_upper": 1.1} if with_bounds else {}))
    return pl.DataFrame(rows)


def _rankings() -> pl.DataFrame:
    """fct_model_rankings rows for the named models (never 'All'): told apart for White, tied elsewhere."""
    rows = []
    named = [model for model in MODELS if model != "All"]
    for domain in figures.DOMAINS:
        for race, gender in [(race, None) for race in figures.RACES] + [(None, g) for g in figures.GENDER_LABELS]:
            for rank, model in enumerate(named, start=1):
                value = 0.9 ** rank if race != "white" else 3.0 * rank
                rows.append({"measure": "representation", "domain": domain, "condition": "baseline", "race": race,
                             "gender": gender, "model": model, "estimate": value, "ci_lower": value / 1.5,
                             "ci_upper": value * 1.5, "distance_rank": rank,
                             "rank_best": rank if race == "white" else 1,
                             "rank_worst": rank if race == "white" else len(named), "among_closest": rank == 1,
                             "fdr": 0.05})
    return pl.DataFrame(rows)


def _all_figures() -> dict[str, Figure]:
    representation = _ratios("representation_ratio")
    couples = pl.DataFrame([{"model": model, "couple_type": couple, "representation_ratio": 0.2 + index,
                             "ci_lower": 0.1 + index, "ci_upper": 0.4 + index}
                            for model in MODELS for index, couple in enumerate(figures.COUPLE_LABELS)])
    names = pl.DataFrame([{"race": race, "gender": gender, "first_name": f"{race[:2].title()}{gender[0]}{i}",
                           "characters": (i + 1) * (50 if race == "white" else 1)}
                          for race in figures.RACES for gender in ("female", "male") for i in range(6)])
    drawn = {
        "omission-race": figures.omission_race(representation),
        "omission-gender": figures.omission_gender(representation),
        "omission-race-gender": figures.omission_race_gender(representation),
        "couples": figures.couple_types(couples),
        "subordination": figures.subordination(_ratios("subordination_ratio").drop("condition")),
        "median-racialized": figures.median_racialized(
            _ratios("median_subordination_ratio", with_bounds=False).drop("condition")),
        "top-names": figures.top_names(names),
        "race-sensitivity": figures.race_sensitivity(pl.DataFrame([
            {"model": "All", "domain": domain, "condition": "baseline", "race": race}
            | {f"representation_ratio_{variant}": (0.2 + 0.3 * race_index) * (1 + 0.1 * variant_index)
               for variant_index, variant in enumerate(figures.SENSITIVITY_VARIANTS)}
            for domain in figures.DOMAINS for race_index, race in enumerate(figures.RACES)])),
        "model-rankings": figures.model_rankings(_rankings(), "labor"),
    }
    assert all(figure is not None for figure in drawn.values())
    return drawn


@pytest.fixture(scope="module")
def drawn() -> dict[str, Figure]:
    result = _all_figures()
    for figure in result.values():
        figure.canvas.draw()
    yield result
    for figure in result.values():
        plt.close(figure)


def test_dollar_signs_in_model_names_are_printed_not_parsed(drawn: dict[str, Figure]) -> None:
    document = svg_document(drawn["omission-race"])  # raised matplotlib's ParseException when parsed as math
    for model in MODELS[:2]:
        assert model in document


def _visible_texts(figure: Figure) -> list[Text]:
    return [text for text in figure.findobj(Text) if text.get_visible() and text.get_text().strip()]


def test_panels_of_a_figure_share_their_x_range(drawn: dict[str, Figure]) -> None:
    for key, figure in drawn.items():
        ranges = {tuple(round(limit, 9) for limit in ax.get_xlim()) for ax in figure.axes if ax.axison}
        assert len(ranges) == 1, f"{key}: panels have x ranges {ranges}"


def test_log_axes_carry_plain_number_ticks(drawn: dict[str, Figure]) -> None:
    for key, figure in drawn.items():
        for ax in figure.axes:
            if ax.get_xscale() != "log":
                continue
            labels = [label.get_text() for label in ax.get_xticklabels() if label.get_text()]
            assert "1" in labels, f"{key}: no tick at parity: {labels}"
            assert all(re.fullmatch(r"\d+(\.\d+)?", label) for label in labels), f"{key}: ticks {labels}"
            low, high = ax.get_xlim()
            assert all(low <= float(label) <= high for label in labels)


def test_no_two_texts_of_a_figure_overlap(drawn: dict[str, Figure]) -> None:
    for key, figure in drawn.items():
        renderer = figure.canvas.get_renderer()
        boxes = [(text.get_text(), text.get_window_extent(renderer)) for text in _visible_texts(figure)]
        assert len(boxes) > 10, f"{key}: almost no text drawn"
        for (text_a, box_a), (text_b, box_b) in itertools.combinations(boxes, 2):
            overlap_x = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
            overlap_y = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
            assert overlap_x <= 1 or overlap_y <= 1, f"{key}: {text_a!r} overlaps {text_b!r}"


def test_top_names_legend_names_the_characters_gender(drawn: dict[str, Figure]) -> None:
    legend_texts = [text.get_text() for legend in drawn["top-names"].legends for text in legend.get_texts()]
    assert legend_texts == ["female characters", "male characters"]


def test_report_goes_beside_the_warehouse_it_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A study warehouse elsewhere never overwrites the project's (demo) report, and the command says where."""
    import duckdb

    study = tmp_path / "study" / "lfh.duckdb"
    study.parent.mkdir()
    connection = duckdb.connect(str(study))
    connection.execute("create schema marts; create table marts.fct_representation_ratios (model varchar)")
    connection.close()
    monkeypatch.setenv("LFH_DB", str(study))
    outcome = CliRunner().invoke(report, [])
    assert outcome.exit_code == 0, outcome.output
    written = tmp_path / "study" / "reports" / "index.html"
    assert written.is_file()
    assert f"written to {written}" in outcome.output
    assert reports_dir_for(tmp_path / "study" / "published" / "marts.duckdb") == tmp_path / "study" / "reports"
    assert reports_dir_for(project_root() / "warehouse" / "lfh.duckdb") == project_root() / "reports"


def test_model_rankings_show_models_in_rank_order_with_their_brackets(drawn: dict[str, Figure]) -> None:
    axes = [ax for ax in drawn["model-rankings"].axes if ax.get_visible()]
    assert len(axes) == len(figures.RACES) + len(figures.GENDER_LABELS)
    titles = [ax.get_title() for ax in axes]
    assert titles[:3] == list(figures.GENDER_LABELS.values())
    tied = [label.get_text() for label in axes[0].get_yticklabels()]
    assert tied == [f"{MODELS[0]}  [1–2]", f"{MODELS[1]}  [1–2]"]
    apart = [label.get_text() for label in axes[titles.index("White")].get_yticklabels()]
    assert apart == [f"{MODELS[0]}  1", f"{MODELS[1]}  2"]


def test_model_rankings_need_the_mart() -> None:
    assert figures.model_rankings(pl.DataFrame(), "labor") is None
    assert figures.model_rankings(_rankings(), "nowhere") is None
