"""The report's figures (matplotlib, no display needed): one function per figure, each returning a Figure or
None when the marts hold nothing to draw."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import NullFormatter  # noqa: E402

ALL_MODELS = "All"
DOMAINS = ("learning", "labor", "love")
RACES = ("aian", "asian", "black", "latine", "mena", "nhpi", "white")
RACE_LABELS = {"aian": "AI/AN", "asian": "Asian", "black": "Black", "latine": "Latine", "mena": "MENA",
               "nhpi": "NH/PI", "white": "White", "multiracial": "Multiracial"}
GENDER_LABELS = {"female": "Female", "male": "Male", "nonbinary": "Non-binary"}
COUPLE_LABELS = {"female_male": "Female–Male", "female_female": "Female–Female", "male_male": "Male–Male",
                 "female_nonbinary": "Female–Non-binary", "male_nonbinary": "Male–Non-binary",
                 "nonbinary_nonbinary": "Non-binary–Non-binary"}
PALETTE = ("#1b6ca8", "#d1495b", "#2e933c", "#edae49", "#7b4b94", "#00798c", "#8d6a4f", "#c8553d")
LOG_FLOOR = 0.01  # ratios of 0 (no character of the group) are drawn at this floor of the log axis

plt.rcParams.update({
    "svg.fonttype": "none", "svg.hashsalt": "lfh-report", "font.size": 9, "axes.titlesize": 10,
    "axes.spines.top": False, "axes.spines.right": False, "figure.dpi": 100,
})


def model_order(models: list[str]) -> list[str]:
    """Models alphabetically, the all-models aggregate last."""
    named = sorted({model for model in models if model != ALL_MODELS})
    return named + ([ALL_MODELS] if ALL_MODELS in models else [])


def model_colors(models: list[str]) -> dict[str, str]:
    ordered = model_order(models)
    return {model: ("#222222" if model == ALL_MODELS else PALETTE[index % len(PALETTE)])
            for index, model in enumerate(ordered)}


def _ratio_panel(ax: plt.Axes, frame: pl.DataFrame, groups: list[tuple[str, str]], group_column: str,
                 value: str, lower: str | None, upper: str | None, colors: dict[str, str]) -> None:
    """Dot-and-interval rows on a log x axis, one row per group, one dot per model."""
    models = [model for model in colors if model in set(frame["model"].to_list())]
    step = 0.8 / max(len(models), 1)
    for index, model in enumerate(models):
        rows = frame.filter(pl.col("model") == model)
        lookup = {row[group_column]: row for row in rows.iter_rows(named=True)}
        ys, xs, lows, highs = [], [], [], []
        for position, (code, _label) in enumerate(groups):
            row = lookup.get(code)
            if row is None or row[value] is None:
                continue
            ys.append(position - 0.4 + step * (index + 0.5))
            xs.append(max(row[value], LOG_FLOOR))
            lows.append(max(row[lower], LOG_FLOOR) if lower and row[lower] is not None else xs[-1])
            highs.append(max(row[upper], LOG_FLOOR) if upper and row[upper] is not None else xs[-1])
        if not xs:
            continue
        x = np.array(xs)
        error = np.vstack([np.clip(x - np.array(lows), 0, None), np.clip(np.array(highs) - x, 0, None)])
        ax.errorbar(x, ys, xerr=error, fmt="o", markersize=3.5, color=colors[model], ecolor=colors[model],
                    elinewidth=1, capsize=0, label=model)
    ax.axvline(1.0, color="#888888", linewidth=0.8, linestyle="--")
    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(NullFormatter())  # minor labels collide on short log ranges
    ax.set_yticks(range(len(groups)), [label for _code, label in groups])
    ax.set_ylim(len(groups) - 0.5, -0.5)
    ax.grid(axis="x", which="major", color="#eeeeee")


def _faceted(frame: pl.DataFrame, groups: list[tuple[str, str]], group_column: str, value: str,
             lower: str | None, upper: str | None, xlabel: str, height: float) -> Figure | None:
    if frame.is_empty():
        return None
    colors = model_colors(frame["model"].unique().to_list())
    domains = [domain for domain in DOMAINS if domain in set(frame["domain"].to_list())]
    figure, axes = plt.subplots(1, len(domains), figsize=(3.3 * len(domains) + 1.4, height), sharey=True,
                                squeeze=False, layout="constrained")
    for ax, domain in zip(axes[0], domains, strict=True):
        _ratio_panel(ax, frame.filter(pl.col("domain") == domain), groups, group_column, value, lower, upper,
                     colors)
        ax.set_title(domain.capitalize())
        ax.set_xlabel(xlabel)
    handles, labels = axes[0][0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside right center", frameon=False, title="model")
    return figure


def omission_race(representation: pl.DataFrame) -> Figure | None:
    if representation.is_empty():  # an absent mart comes as a frame without columns
        return None
    frame = representation.filter((pl.col("condition") == "baseline") & pl.col("gender").is_null()
                                  & pl.col("race").is_in(RACES))
    groups = [(race, RACE_LABELS[race]) for race in RACES]
    return _faceted(frame, groups, "race", "representation_ratio", "ci_lower", "ci_upper",
                    "representation ratio (log)", 3.0)


def omission_gender(representation: pl.DataFrame) -> Figure | None:
    if representation.is_empty():  # an absent mart comes as a frame without columns
        return None
    frame = representation.filter((pl.col("condition") == "baseline") & pl.col("race").is_null()
                                  & pl.col("gender").is_in(list(GENDER_LABELS)))
    return _faceted(frame, list(GENDER_LABELS.items()), "gender", "representation_ratio", "ci_lower", "ci_upper",
                    "representation ratio (log)", 1.9)


def _race_gender_groups() -> list[tuple[str, str]]:
    return [(f"{race}|{gender}", f"{RACE_LABELS[race]} {GENDER_LABELS[gender].lower()}")
            for race in RACES for gender in ("female", "male")]


def omission_race_gender(representation: pl.DataFrame) -> Figure | None:
    if representation.is_empty():  # an absent mart comes as a frame without columns
        return None
    frame = representation.filter((pl.col("condition") == "baseline") & pl.col("race").is_in(RACES)
                                  & pl.col("gender").is_in(["female", "male"])) \
        .with_columns(pl.concat_str("race", pl.lit("|"), "gender").alias("group"))
    return _faceted(frame, _race_gender_groups(), "group", "representation_ratio", "ci_lower", "ci_upper",
                    "representation ratio (log)", 4.6)


def couple_types(orientation: pl.DataFrame) -> Figure | None:
    if orientation.is_empty():
        return None
    colors = model_colors(orientation["model"].unique().to_list())
    figure, ax = plt.subplots(figsize=(7.5, 2.8), layout="constrained")
    _ratio_panel(ax, orientation, list(COUPLE_LABELS.items()), "couple_type", "representation_ratio",
                 "ci_lower", "ci_upper", colors)
    ax.set_xlabel("representation ratio (log)")
    ax.set_title("Romantic couples (Love, both conditions)")
    figure.legend(*ax.get_legend_handles_labels(), loc="outside right center", frameon=False, title="model")
    return figure


def subordination(subordination_ratios: pl.DataFrame) -> Figure | None:
    if subordination_ratios.is_empty():  # an absent mart comes as a frame without columns
        return None
    frame = subordination_ratios.filter(pl.col("race").is_in(RACES) & pl.col("gender").is_in(["female", "male"])) \
        .with_columns(pl.concat_str("race", pl.lit("|"), "gender").alias("group"))
    return _faceted(frame, _race_gender_groups(), "group", "subordination_ratio", "ci_lower", "ci_upper",
                    "subordination ratio (log)", 4.6)


def median_racialized(median: pl.DataFrame) -> Figure | None:
    if median.is_empty():  # an absent mart comes as a frame without columns
        return None
    frame = median.filter(pl.col("race").is_in(RACES) & pl.col("gender").is_in(["female", "male"])) \
        .with_columns(pl.concat_str("race", pl.lit("|"), "gender").alias("group"))
    return _faceted(frame, _race_gender_groups(), "group", "median_subordination_ratio", None, None,
                    "median subordination ratio over thresholds (log)", 4.6)


def top_names(names: pl.DataFrame, per_group: int = 5) -> Figure | None:
    if names.is_empty():
        return None
    totals = names.filter(pl.col("gender").is_in(["female", "male"])) \
        .group_by("race", "gender", "first_name").agg(pl.col("characters").sum()) \
        .sort("characters", descending=True)
    races = [race for race in RACES if race in set(totals["race"].to_list())]
    if not races:
        return None
    columns = 4
    rows = (len(races) + columns - 1) // columns
    figure, axes = plt.subplots(rows, columns, figsize=(11, 2.4 * rows), squeeze=False, layout="constrained")
    gender_colors = {"female": "#d1495b", "male": "#1b6ca8"}
    for ax, race in zip(axes.flat, races, strict=False):
        picked = pl.concat([totals.filter((pl.col("race") == race) & (pl.col("gender") == gender)).head(per_group)
                            for gender in ("female", "male")])
        labels = picked["first_name"].to_list()
        ax.barh(range(len(labels)), picked["characters"].to_list(),
                color=[gender_colors[gender] for gender in picked["gender"].to_list()])
        ax.set_yticks(range(len(labels)), labels)
        ax.invert_yaxis()
        ax.set_title(RACE_LABELS[race])
        ax.set_xlabel("characters")
    for ax in list(axes.flat)[len(races):]:
        ax.axis("off")
    handles = [plt.Rectangle((0, 0), 1, 1, color=color) for color in gender_colors.values()]
    figure.legend(handles, ["female", "male"], loc="outside right center", frameon=False)
    return figure


def name_coverage(coverage: pl.DataFrame) -> Figure | None:
    if coverage.is_empty():
        return None
    frame = coverage.filter(pl.col("model") != ALL_MODELS).group_by("model", "domain").agg(
        pl.col("characters").sum(), pl.col("with_name").sum(), pl.col("with_matched_name").sum())
    if frame.is_empty():
        return None
    order = model_order(frame["model"].unique().to_list())
    rows = [(model, domain) for model in order for domain in DOMAINS
            if not frame.filter((pl.col("model") == model) & (pl.col("domain") == domain)).is_empty()]
    figure, ax = plt.subplots(figsize=(8, 0.28 * len(rows) + 1.2), layout="constrained")
    lookup = {(row["model"], row["domain"]): row for row in frame.iter_rows(named=True)}
    matched = np.array([lookup[key]["with_matched_name"] / lookup[key]["characters"] for key in rows])
    named = np.array([lookup[key]["with_name"] / lookup[key]["characters"] for key in rows])
    positions = np.arange(len(rows))
    ax.barh(positions, matched, color="#2e933c", label="name found in the lexicon")
    ax.barh(positions, named - matched, left=matched, color="#edae49", label="named, not in the lexicon")
    ax.barh(positions, 1 - named, left=named, color="#cccccc", label="no name")
    ax.set_yticks(positions, [f"{model} · {domain}" for model, domain in rows])
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of characters")
    figure.legend(loc="outside right center", frameon=False)
    return figure


def labeler_agreement(agreement: pl.DataFrame) -> Figure | None:
    if agreement.is_empty():
        return None
    frame = agreement.filter((pl.col("metric") == "gender_accuracy") & (pl.col("domain") != "all"))
    if frame.is_empty():
        return None
    colors = model_colors(frame["model"].unique().to_list())
    groups = sorted({(row["domain"], row["role"]) for row in frame.iter_rows(named=True)})
    figure, ax = plt.subplots(figsize=(8, 0.4 * len(groups) + 1.3), layout="constrained")
    models = list(colors)
    step = 0.8 / max(len(models), 1)
    for index, model in enumerate(models):
        rows = {(row["domain"], row["role"]): row for row in frame.filter(pl.col("model") == model).iter_rows(
            named=True)}
        positions = [position - 0.4 + step * (index + 0.5) for position, key in enumerate(groups) if key in rows]
        values = [rows[key]["value"] for key in groups if key in rows]
        ax.barh(positions, values, height=step, color=colors[model], label=model)
    ax.set_yticks(range(len(groups)), [f"{domain} · {role}" for domain, role in groups])
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("gender accuracy against the hand labels")
    figure.legend(loc="outside right center", frameon=False, title="model")
    return figure
