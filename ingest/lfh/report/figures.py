"""The report's figures (matplotlib, no display needed): one function per figure, each returning a Figure or
None when the marts hold nothing to draw."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, NullLocator, PercentFormatter  # noqa: E402

from lfh.categories import (  # noqa: E402
    ALL_MODEL_LEVEL,
    GENDERS,
    PER_MODEL_LEVEL,
    RACIALIZED_GENDERS,
    all_models_label,
)

ALL_MODELS = all_models_label()  # the model of the rows over every model (the project's var all_models_label)
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
# Ticks a reader can read on a log ratio axis: symmetric around parity (0.5 and 2 are equally far from 1).
LOG_TICKS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)

plt.rcParams.update({
    "svg.fonttype": "none", "svg.hashsalt": "lfh-report", "font.size": 9, "axes.titlesize": 10,
    "axes.spines.top": False, "axes.spines.right": False, "figure.dpi": 100,
    # model names, names and labels are text, never math: a `$` in a model name must print as a `$`
    "text.parse_math": False,
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
                 value: str, lower: str | None, upper: str | None, colors: dict[str, str]) -> list[float]:
    """Dot-and-interval rows on a log x axis, one row per group, one dot per model. Returns every x drawn."""
    drawn: list[float] = [1.0]
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
        drawn.extend(xs + lows + highs)
        x = np.array(xs)
        error = np.vstack([np.clip(x - np.array(lows), 0, None), np.clip(np.array(highs) - x, 0, None)])
        ax.errorbar(x, ys, xerr=error, fmt="o", markersize=3.5, color=colors[model], ecolor=colors[model],
                    elinewidth=1, capsize=0, label=model)
    ax.axvline(1.0, color="#888888", linewidth=0.8, linestyle="--")
    ax.set_yticks(range(len(groups)), [label for _code, label in groups])
    ax.set_ylim(len(groups) - 0.5, -0.5)
    ax.grid(axis="x", which="major", color="#eeeeee")
    return drawn


def _plain_number(value: float, _position: int | None = None) -> str:
    return f"{value:g}"


def log_ratio_axis(axes: list[plt.Axes], drawn: list[float]) -> None:
    """One log x range for every panel of a figure (so panels compare at a glance), ticks as plain numbers
    (0.1, 0.5, 1, 2, 10, as the captions say) and only as many as fit."""
    low, high = min(drawn), max(drawn)
    low, high = low / 1.25, high * 1.25
    decades = np.log10(high / low)
    # as many ticks as fit a narrow panel: every nice value on a short range, decades and 0.5/2 on a middle one,
    # decades only on a wide one
    shown = LOG_TICKS if decades <= 1.6 else (0.01, 0.1, 0.5, 1.0, 2.0, 10.0, 100.0) if decades <= 2.6 \
        else (0.01, 0.1, 1.0, 10.0, 100.0)
    ticks = [tick for tick in shown if low <= tick <= high]
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlim(low, high)
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_major_formatter(FuncFormatter(_plain_number))
        ax.xaxis.set_minor_locator(NullLocator())


def _faceted(frame: pl.DataFrame, groups: list[tuple[str, str]], group_column: str, value: str,
             lower: str | None, upper: str | None, xlabel: str, height: float) -> Figure | None:
    if frame.is_empty():
        return None
    colors = model_colors(frame["model"].unique().to_list())
    domains = [domain for domain in DOMAINS if domain in set(frame["domain"].to_list())]
    figure, axes = plt.subplots(1, len(domains), figsize=(3.3 * len(domains) + 1.4, height), sharey=True,
                                squeeze=False, layout="constrained")
    drawn: list[float] = []
    for ax, domain in zip(axes[0], domains, strict=True):
        drawn += _ratio_panel(ax, frame.filter(pl.col("domain") == domain), groups, group_column, value, lower,
                              upper, colors)
        ax.set_title(domain.capitalize())
    log_ratio_axis(list(axes[0]), drawn)
    figure.supxlabel(xlabel, fontsize=plt.rcParams["font.size"])  # once: one label per panel would collide
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
            for race in RACES for gender in RACIALIZED_GENDERS]


def omission_race_gender(representation: pl.DataFrame) -> Figure | None:
    if representation.is_empty():  # an absent mart comes as a frame without columns
        return None
    frame = representation.filter((pl.col("condition") == "baseline") & pl.col("race").is_in(RACES)
                                  & pl.col("gender").is_in(RACIALIZED_GENDERS)) \
        .with_columns(pl.concat_str("race", pl.lit("|"), "gender").alias("group"))
    return _faceted(frame, _race_gender_groups(), "group", "representation_ratio", "ci_lower", "ci_upper",
                    "representation ratio (log)", 4.6)


def couple_types(orientation: pl.DataFrame) -> Figure | None:
    if orientation.is_empty():
        return None
    colors = model_colors(orientation["model"].unique().to_list())
    figure, ax = plt.subplots(figsize=(7.5, 2.8), layout="constrained")
    log_ratio_axis([ax], _ratio_panel(ax, orientation, list(COUPLE_LABELS.items()), "couple_type",
                                      "representation_ratio", "ci_lower", "ci_upper", colors))
    ax.set_xlabel("representation ratio (log)")
    ax.set_title("Romantic couples (Love, both conditions)")
    figure.legend(*ax.get_legend_handles_labels(), loc="outside right center", frameon=False, title="model")
    return figure


def subordination(subordination_ratios: pl.DataFrame) -> Figure | None:
    if subordination_ratios.is_empty():  # an absent mart comes as a frame without columns
        return None
    frame = subordination_ratios.filter(pl.col("race").is_in(RACES) & pl.col("gender").is_in(RACIALIZED_GENDERS)) \
        .with_columns(pl.concat_str("race", pl.lit("|"), "gender").alias("group"))
    return _faceted(frame, _race_gender_groups(), "group", "subordination_ratio", "ci_lower", "ci_upper",
                    "subordination ratio (log)", 4.6)


def median_racialized(median: pl.DataFrame) -> Figure | None:
    if median.is_empty():  # an absent mart comes as a frame without columns
        return None
    frame = median.filter(pl.col("race").is_in(RACES) & pl.col("gender").is_in(RACIALIZED_GENDERS)) \
        .with_columns(pl.concat_str("race", pl.lit("|"), "gender").alias("group"))
    return _faceted(frame, _race_gender_groups(), "group", "median_subordination_ratio", None, None,
                    "median subordination ratio over thresholds (log)", 4.6)


def top_names(names: pl.DataFrame, per_group: int = 5) -> Figure | None:
    """Per race, the commonest names of female and of male characters. Bar length is the name's share of the
    group's characters of that gender (counts differ by orders of magnitude between groups; shares compare)."""
    if names.is_empty():
        return None
    totals = names.filter(pl.col("gender").is_in(RACIALIZED_GENDERS)) \
        .group_by("race", "gender", "first_name").agg(pl.col("characters").sum()) \
        .with_columns((pl.col("characters") / pl.col("characters").sum().over("race", "gender")).alias("share")) \
        .sort(["characters", "first_name"], descending=[True, False])
    races = [race for race in RACES if race in set(totals["race"].to_list())]
    if not races:
        return None
    columns = 4
    rows = (len(races) + columns - 1) // columns
    figure, axes = plt.subplots(rows, columns, figsize=(11, 2.4 * rows), squeeze=False, layout="constrained",
                                sharex=True)
    gender_colors = {"female": "#d1495b", "male": "#1b6ca8"}
    for ax, race in zip(axes.flat, races, strict=False):
        picked = pl.concat([totals.filter((pl.col("race") == race) & (pl.col("gender") == gender)).head(per_group)
                            for gender in RACIALIZED_GENDERS])
        labels = picked["first_name"].to_list()
        ax.barh(range(len(labels)), picked["share"].to_list(),
                color=[gender_colors[gender] for gender in picked["gender"].to_list()])
        ax.set_yticks(range(len(labels)), labels)
        ax.set_ylim(len(labels) - 0.5, -0.5)
        ax.set_title(RACE_LABELS[race])
        ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _position: f"{value:.0%}"))
        ax.tick_params(axis="x", labelbottom=True)
    for ax in list(axes.flat)[len(races):]:
        ax.axis("off")
    figure.supxlabel("share of the group's characters of that gender", fontsize=plt.rcParams["font.size"])
    handles = [plt.Rectangle((0, 0), 1, 1, color=color) for color in gender_colors.values()]
    figure.legend(handles, ["female characters", "male characters"], loc="outside right center", frameon=False,
                  title="character's gender")
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


CONDITION_LABELS = {"baseline": "Baseline", "dominant": "Dominant", "subordinate": "Subordinate"}


def _corrected_rows(representation: pl.DataFrame, orientation: pl.DataFrame) -> list[dict]:
    """The all-models rows that carry a corrected ratio: gender rows by domain and condition, then couple types."""
    rows = []
    if "corrected_ratio" in representation.columns:
        gender = representation.filter((pl.col("model") == ALL_MODELS) & pl.col("race").is_null()
                                       & pl.col("corrected_ratio").is_not_null())
        order = {domain: index for index, domain in enumerate(DOMAINS)}
        for row in sorted(gender.iter_rows(named=True), key=lambda r: (
                order.get(r["domain"], 9), list(CONDITION_LABELS).index(r["condition"])
                if r["condition"] in CONDITION_LABELS else 9, list(GENDER_LABELS).index(r["gender"]))):
            rows.append({**row, "label": f"{row['domain'].title()} · {CONDITION_LABELS.get(row['condition'], '')}"
                                          f" · {GENDER_LABELS.get(row['gender'], row['gender'])}"})
    if "corrected_ratio" in orientation.columns:
        couples = orientation.filter((pl.col("model") == ALL_MODELS) & pl.col("corrected_ratio").is_not_null())
        for row in sorted(couples.iter_rows(named=True), key=lambda r: list(COUPLE_LABELS).index(r["couple_type"])):
            rows.append({**row, "label": f"Couples · {COUPLE_LABELS.get(row['couple_type'], row['couple_type'])}"})
    return rows


def corrected_ratios(representation: pl.DataFrame, orientation: pl.DataFrame) -> Figure | None:
    """Uncorrected (machine labels, Wilson) and corrected (hand labels, PPI) representation ratios side by side,
    all models pooled, for every measure hand labels correct."""
    rows = _corrected_rows(representation, orientation)
    if not rows:
        return None
    figure, ax = plt.subplots(figsize=(7.5, 0.8 + 0.28 * len(rows)), layout="constrained")
    drawn: list[float] = [1.0]
    for offset, (value, lower, upper, color, label) in enumerate((
            ("representation_ratio", "ci_lower", "ci_upper", "#999999", "uncorrected (machine labels)"),
            ("corrected_ratio", "corrected_ci_lower", "corrected_ci_upper", "#d1495b",
             "corrected (hand labels, PPI)"))):
        ys = [index - 0.15 + 0.3 * offset for index in range(len(rows))]
        x = np.array([max(row[value], LOG_FLOOR) for row in rows])
        lows = np.array([max(row[lower], LOG_FLOOR) if row[lower] is not None else LOG_FLOOR for row in rows])
        highs = np.array([max(row[upper], LOG_FLOOR) if row[upper] is not None else LOG_FLOOR for row in rows])
        error = np.vstack([np.clip(x - lows, 0, None), np.clip(highs - x, 0, None)])
        ax.errorbar(x, ys, xerr=error, fmt="o", markersize=3.5, color=color, ecolor=color, elinewidth=1,
                    capsize=0, label=label)
        drawn += [*x, *lows, *highs]
    ax.axvline(1.0, color="#888888", linewidth=0.8, linestyle="--")
    log_ratio_axis([ax], drawn)
    ax.set_yticks(range(len(rows)), [row["label"] for row in rows])
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.grid(axis="x", which="major", color="#eeeeee")
    ax.set_xlabel("representation ratio (log scale), all models")
    figure.legend(loc="outside upper center", ncols=2, fontsize=8, frameon=False)
    return figure


OCCUPATION_GROUPS = (("female", "Female", "share female\n(among female and male)"),
                     ("black", "Black", "share Black"), ("asian", "Asian", "share Asian"),
                     ("latine", "Latine", "share Latine\n(vs Hispanic or Latino)"))
WORKFORCE_COLOR = "#111111"
WORKFORCE_LABEL = "US workforce (BLS CPS 2022)"
CORRECTED_LABEL = "corrected from hand labels (PPI)"


def occupation_workforce(occupations: pl.DataFrame, condition: str = "baseline") -> Figure | None:
    """Per Labor occupation (rows, ordered by the workforce's female share), one panel per compared group: each
    model's share among the occupation holders with its 95% interval, and the occupation's workforce share
    (BLS) as a black bar. Occupations with no BLS percentage show the models' shares only. Where hand labels
    correct a female share (corrected_share, docs/CORRECTION.md), a hollow marker just below the model's shows it
    with its interval."""
    if occupations.is_empty():  # an absent mart comes as a frame without columns
        return None
    frame = occupations.filter(pl.col("condition") == condition) \
        .with_columns(pl.coalesce("gender", "race").alias("group"))
    if frame.is_empty():
        return None
    female = {row["occupation"]: row["workforce_share"] for row in
              frame.filter(pl.col("group") == "female").unique("occupation").iter_rows(named=True)}
    # highest female workforce share on top; occupations without a BLS percentage at the bottom
    order = sorted(female, key=lambda occupation: (female[occupation] is None, -(female[occupation] or 0),
                                                   occupation.lower()))
    labels = [occupation if female[occupation] is not None else f"{occupation}\n(no BLS percentages)"
              for occupation in order]
    colors = model_colors(frame["model"].unique().to_list())
    models = list(colors)
    groups = [group for group in OCCUPATION_GROUPS if group[0] in set(frame["group"].to_list())]
    figure, axes = plt.subplots(1, len(groups), figsize=(2.9 * len(groups) + 2.6, 0.42 * len(order) + 1.5),
                                sharey=True, squeeze=False, layout="constrained")
    step = 0.8 / max(len(models), 1)
    any_corrected = False
    for ax, (code, title, xlabel) in zip(axes[0], groups, strict=True):
        cells = {(row["model"], row["occupation"]): row for row in
                 frame.filter(pl.col("group") == code).iter_rows(named=True)}
        workforce = {occupation: share for (_model, occupation), share in
                     ((key, row["workforce_share"]) for key, row in cells.items()) if share is not None}
        for position, occupation in enumerate(order):
            if position % 2 == 0:  # banded rows: the eye follows one occupation across the four panels
                ax.axhspan(position - 0.5, position + 0.5, color="#f4f4f4", zorder=0, linewidth=0)
            if occupation in workforce:
                ax.plot([workforce[occupation]] * 2, [position - 0.45, position + 0.45], color=WORKFORCE_COLOR,
                        linewidth=2.2, solid_capstyle="butt", label=WORKFORCE_LABEL, zorder=2)
        top = 0.0
        for index, model in enumerate(models):
            ys, xs, lows, highs = [], [], [], []
            corrected: list[tuple[float, float, float, float]] = []
            for position, occupation in enumerate(order):
                row = cells.get((model, occupation))
                if row is None or row["observed_share"] is None:
                    continue
                ys.append(position - 0.4 + step * (index + 0.5))
                xs.append(row["observed_share"])
                lows.append(row["share_ci_lower"])
                highs.append(row["share_ci_upper"])
                if row.get("corrected_share") is not None:
                    corrected.append((ys[-1] + step * 0.4, row["corrected_share"], row["corrected_share_ci_lower"],
                                      row["corrected_share_ci_upper"]))
            if corrected:
                cy, cx, clow, chigh = (np.array(values) for values in zip(*corrected, strict=True))
                ax.errorbar(cx, cy, xerr=np.vstack([np.clip(cx - clow, 0, None), np.clip(chigh - cx, 0, None)]),
                            fmt="o", markersize=3.2, markerfacecolor="white", color=colors[model],
                            ecolor=colors[model], elinewidth=0.6, linestyle="none", capsize=0, zorder=3)
                any_corrected = True
            if not xs:
                continue
            x = np.array(xs)
            error = np.vstack([np.clip(x - np.array(lows), 0, None), np.clip(np.array(highs) - x, 0, None)])
            ax.errorbar(x, ys, xerr=error, fmt="o", markersize=3.2, color=colors[model], ecolor=colors[model],
                        elinewidth=0.9, capsize=0, label=model, zorder=3)
            top = max(top, max(highs))
        right = 1.0 if code == "female" else min(1.0, max([top, *workforce.values(), 0.1]) * 1.05)
        ax.set_xlim(0, right)
        # ticks kept off the right edge, where the next panel's 0% label would touch this panel's last one
        ticks = [tick for tick in MaxNLocator(nbins=4).tick_values(0, right) if 0 <= tick <= 0.85 * right]
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.grid(axis="x", color="#eeeeee")
        ax.set_yticks(range(len(order)), labels)
        ax.set_ylim(len(order) - 0.5, -0.5)
    handles, names = axes[0][0].get_legend_handles_labels()
    unique = dict(zip(names, handles, strict=True))  # the workforce bar once, then one entry per model
    if any_corrected:
        unique[CORRECTED_LABEL] = Line2D([], [], marker="o", markersize=3.2, markerfacecolor="white",
                                         color="#666666", linestyle="none")
    figure.legend(list(unique.values()), list(unique.keys()), loc="outside right center", frameon=False)
    return figure


CONFUSION_CLASSES = (*GENDERS, "unspecified", "unsure")
CONFUSION_LABELS = {**GENDER_LABELS, "unspecified": "Unspecified", "unsure": "Unsure", "unmapped": "Unmapped"}


def labeler_confusion(confusion: pl.DataFrame, class_metrics: pl.DataFrame) -> Figure | None:
    """Hand class (rows) x inferred class (columns) over every model, domain and role, counts in the cells and
    each row shaded by the share of its hand class; per-class precision / recall / F1 beside the rows."""
    if confusion.is_empty():
        return None
    cell = confusion.filter((pl.col("model") == ALL_MODELS) & (pl.col("domain") == "all") & (pl.col("role") == "all"))
    if cell.is_empty() or cell["characters"].sum() == 0:
        return None
    present = set(cell.filter(pl.col("characters") > 0)["hand_gender"].to_list())
    hand = [code for code in CONFUSION_CLASSES if code in present] + sorted(present - set(CONFUSION_CLASSES))
    inferred = list(CONFUSION_CLASSES) + sorted(set(cell["inferred_gender"].to_list()) - set(CONFUSION_CLASSES))
    counts = {(row["hand_gender"], row["inferred_gender"]): row["characters"] for row in cell.iter_rows(named=True)}
    matrix = np.array([[counts.get((h, i), 0) for i in inferred] for h in hand], dtype=float)
    shares = matrix / np.maximum(matrix.sum(axis=1, keepdims=True), 1)
    figure, ax = plt.subplots(figsize=(8, 0.5 * len(hand) + 1.6), layout="constrained")
    ax.imshow(shares, cmap="Blues", vmin=0, vmax=1, aspect="auto")
    for row, col in np.ndindex(matrix.shape):
        ax.text(col, row, f"{int(matrix[row, col]):,}", ha="center", va="center",
                color="white" if shares[row, col] > 0.6 else "#222")
    ax.set_xticks(range(len(inferred)), [CONFUSION_LABELS.get(code, code) for code in inferred])
    metrics = {}
    if not class_metrics.is_empty():
        overall = class_metrics.filter((pl.col("model") == ALL_MODELS) & (pl.col("domain") == "all")
                                       & (pl.col("role") == "all"))
        metrics = {row["class"]: row for row in overall.iter_rows(named=True)}

    def _label(code: str) -> str:
        row = metrics.get(code)
        if row is None:
            return CONFUSION_LABELS.get(code, code)
        parts = [f"{name} {value:.2f}" if value is not None else f"{name} –" for name, value in (
            ("P", row["class_precision"]), ("R", row["class_recall"]), ("F1", row["f1"]))]
        return f"{CONFUSION_LABELS.get(code, code)}  ({', '.join(parts)})"

    ax.set_yticks(range(len(hand)), [_label(code) for code in hand])
    ax.set_xlabel("inferred gender (cleaning rule)")
    ax.set_ylabel("hand label")
    ax.spines[:].set_visible(False)
    macro = metrics.get("macro")
    rule = cell["gender_rule"][0] if "gender_rule" in cell.columns else "?"
    ax.set_title(f"gender rule: {rule}" + (f" · macro-F1 {macro['f1']:.3f}" if macro and macro["f1"] is not None
                                            else ""))
    return figure


def labeler_couples(couples: pl.DataFrame) -> Figure | None:
    """Couple-type shares of romantic stories by hand labels and by inferred genders, over the same stories."""
    if couples.is_empty():
        return None
    overall = couples.filter(pl.col("model") == ALL_MODELS)
    if overall.is_empty() or (overall["hand_total"].max() or 0) == 0:
        return None
    types = [key for key in COUPLE_LABELS if key in set(overall["couple_type"].to_list())]
    rows = {row["couple_type"]: row for row in overall.iter_rows(named=True)}
    figure, ax = plt.subplots(figsize=(8, 0.45 * len(types) + 1.4), layout="constrained")
    positions = np.arange(len(types))
    hand_total, inferred_total = rows[types[0]]["hand_total"], rows[types[0]]["inferred_total"]
    for offset, column, color, label in (
            (-0.2, "hand_share", PALETTE[0], f"hand labels (n = {hand_total})"),
            (0.2, "inferred_share", PALETTE[1], f"inferred (n = {inferred_total})")):
        values = [rows[key][column] or 0.0 for key in types]
        ax.barh(positions + offset, values, height=0.38, color=color, label=label)
        for position, value in zip(positions + offset, values, strict=True):
            ax.text(value + 0.01, position, f"{value:.3f}", va="center", fontsize=8)
    ax.set_yticks(positions, [COUPLE_LABELS[key] for key in types])
    ax.invert_yaxis()
    ax.set_xlim(0, 1.1)
    ax.set_xlabel("share of romantic couples whose two genders are known")
    figure.legend(loc="outside right center", frameon=False)
    return figure


FAMILY_LABELS = {"gender": "gender shares", "couple": "couple types", "occupation": "occupations (female share)"}


def hand_label_plan(curve: pl.DataFrame) -> Figure | None:
    """The predicted median half-width of the corrected intervals per measure family (all models: solid; per model:
    dashed) against the hand-labeled stories added to those in the warehouse (lfh.audit.plan.proportional_curve);
    a point only where the family's cells have corrected values."""
    if curve.is_empty() or curve["median_half_width"].drop_nulls().is_empty():
        return None
    figure, ax = plt.subplots(figsize=(7.5, 3.4), layout="constrained")
    for index, family in enumerate(FAMILY_LABELS):
        for level, style, name in ((ALL_MODEL_LEVEL, "-", "all models"), (PER_MODEL_LEVEL, "--", "per model")):
            rows = curve.filter((pl.col("family") == family) & (pl.col("level") == level)).sort("added")
            rows = rows.filter(pl.col("median_half_width").is_not_null())
            if rows.is_empty():
                continue
            ax.plot(rows["added"].to_list(), rows["median_half_width"].to_list(), style, marker="o", markersize=3,
                    color=PALETTE[index], label=f"{FAMILY_LABELS[family]}, {name}")
    ax.set_xlabel("more hand-labeled stories (drawn proportionally to the strata)")
    ax.set_ylabel("median predicted half-width")
    ax.set_ylim(bottom=0)
    ax.grid(axis="y", color="#eeeeee")
    ax.legend(fontsize=7, frameon=False)
    return figure


SENSITIVITY_VARIANTS = {  # fct_race_sensitivity's variants, in the order the figure draws them
    "first_name": "first names (study)",
    "first_then_surname": "first names, then surnames",
    "census_first_name": "census first names only",
    "census_first_then_surname": "census first names, then surnames",
}


def race_sensitivity(sensitivity: pl.DataFrame, condition: str = "baseline") -> Figure | None:
    """The representation ratio of every race (all models, one condition) under each way of inferring race from
    names (fct_race_sensitivity): one dot per variant, so a reader sees whether a finding survives the name table."""
    if sensitivity.is_empty():
        return None
    cells = sensitivity.filter((pl.col("model") == ALL_MODELS) & (pl.col("condition") == condition)
                               & pl.col("race").is_in(RACES))
    if cells.is_empty():
        return None
    # one long frame with the variant in the "model" column, so the per-model dot rows draw one dot per variant
    frame = pl.concat([
        cells.select("domain", "race", pl.lit(label).alias("model"),
                     pl.col(f"representation_ratio_{variant}").alias("ratio"))
        for variant, label in SENSITIVITY_VARIANTS.items()])
    colors = {label: PALETTE[index] for index, label in enumerate(SENSITIVITY_VARIANTS.values())}
    domains = [domain for domain in DOMAINS if domain in set(frame["domain"].to_list())]
    groups = [(race, RACE_LABELS[race]) for race in RACES]
    figure, axes = plt.subplots(1, len(domains), figsize=(3.3 * len(domains) + 2.2, 3.2), sharey=True,
                                squeeze=False, layout="constrained")
    drawn: list[float] = []
    for ax, domain in zip(axes[0], domains, strict=True):
        drawn += _ratio_panel(ax, frame.filter(pl.col("domain") == domain), groups, "race", "ratio", None, None,
                              colors)
        ax.set_title(domain.capitalize())
    log_ratio_axis(list(axes[0]), drawn)
    figure.supxlabel(f"representation ratio (log), all models, {condition}", fontsize=plt.rcParams["font.size"])
    handles, labels = axes[0][0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside right center", frameon=False, title="race from")
    return figure


def _ranking_panel(ax: plt.Axes, rows: pl.DataFrame, colors: dict[str, str]) -> list[float]:
    """One group's models, closest to parity on top: dot and interval, filled when the model ties for the
    closest; the y label carries the model's rank range (a bracket [best–worst] when ties leave it open)."""
    rows = rows.sort("distance_rank")
    drawn: list[float] = [1.0]
    labels = []
    for position, row in enumerate(rows.iter_rows(named=True)):
        x = max(row["estimate"], LOG_FLOOR)
        low = max(row["ci_lower"], LOG_FLOOR) if row["ci_lower"] is not None else x
        high = max(row["ci_upper"], LOG_FLOOR) if row["ci_upper"] is not None else x
        drawn += [x, low, high]
        color = colors[row["model"]]
        ax.plot([low, high], [position, position], color=color, linewidth=1)
        ax.plot([x], [position], "o", markersize=4.5, color=color,
                markerfacecolor=color if row["among_closest"] else "white")
        best, worst = row["rank_best"], row["rank_worst"]
        labels.append(f"{row['model']}  {best}" if best == worst else f"{row['model']}  [{best}–{worst}]")
    ax.axvline(1.0, color="#888888", linewidth=0.8, linestyle="--")
    ax.set_yticks(range(len(labels)), labels)
    ax.set_ylim(len(labels) - 0.5, -0.5)
    ax.grid(axis="x", which="major", color="#eeeeee")
    return drawn


def model_rankings(rankings: pl.DataFrame, domain: str, condition: str = "baseline") -> Figure | None:
    """Per main group (genders, then races) of one domain, the models ordered by distance of their
    representation ratio from parity, each with its interval and the ranks it can hold at the chosen FDR
    (fct_model_rankings): a model whose bracket overlaps another's cannot be told apart from it."""
    if rankings.is_empty():
        return None
    frame = rankings.filter((pl.col("measure") == "representation") & (pl.col("domain") == domain)
                            & (pl.col("condition") == condition)
                            & (pl.col("race").is_null() | pl.col("gender").is_null()))
    groups = [(None, gender, label) for gender, label in GENDER_LABELS.items()] + \
        [(race, None, RACE_LABELS[race]) for race in RACES]
    panels = []
    for race, gender, label in groups:
        rows = frame.filter((pl.col("race") == race) if race else
                            (pl.col("race").is_null() & (pl.col("gender") == gender)))
        if not rows.is_empty():
            panels.append((label, rows))
    if not panels:
        return None
    colors = model_colors(frame["model"].unique().to_list())
    columns = min(5, len(panels))
    lines = (len(panels) + columns - 1) // columns
    models = frame["model"].n_unique()
    figure, axes = plt.subplots(lines, columns, figsize=(2.7 * columns + 0.8, (0.35 * models + 1.0) * lines),
                                squeeze=False, layout="constrained")
    drawn: list[float] = []
    used = []
    for ax, (label, rows) in zip(axes.flat, panels, strict=False):
        drawn += _ranking_panel(ax, rows, colors)
        ax.set_title(label)
        used.append(ax)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    log_ratio_axis(used, drawn)
    fdr = frame["fdr"][0]
    figure.supxlabel(f"representation ratio ({condition}), log scale; [a–b]: ranks the model can hold at FDR "
                     f"{fdr:g}; filled: ties for the closest to parity", fontsize=plt.rcParams["font.size"])
    return figure
