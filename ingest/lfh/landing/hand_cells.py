"""Every hand-label cell understood or rejected with its reason: a gender outside the workbook's
drop-down (after trimming and case-folding), a formula cell without a saved value, and an object label on a story
without an object character each become a raw.rejects row naming the column and the value; the character's label
is then not landed at all (a half-understood label would replace a good earlier one: labels have a history and the
latest load wins)."""

from __future__ import annotations

import csv
from functools import cache

import polars as pl

from lfh.audit.sample import HAND_GENDER_VALUES
from lfh.landing.read_xlsx import formula_column
from lfh.paths import seeds_dir

# role -> the workbook's cells of that role's label, gender cell first (None: the workbook has no gender cell)
CellsByRole = dict[str, tuple[str | None, ...]]
REJECTION_SCHEMA = {"source_row": pl.Int64, "reason": pl.String, "detail": pl.String}
_CHOICES = {value.casefold(): value for value in HAND_GENDER_VALUES}


def gender_choice(value: str | None) -> str | None:
    """The drop-down value a cell means (trimmed, case-folded: ' female' -> 'Female'), or None when it means none."""
    return _CHOICES.get(value.strip().casefold()) if value is not None else None


@cache
def _object_domains_categories() -> frozenset[str]:
    """Role categories (and domain names, which `lfh audit-sample` writes when a story has no role category) whose
    stories always have an object character: Love, both partners (docs/METHOD.md §2;
    seeds/role_category_domains.csv)."""
    with (seeds_dir() / "role_category_domains.csv").open(encoding="utf-8", newline="") as handle:
        categories = {row["role_category"].strip().casefold() for row in csv.DictReader(handle)
                      if row["domain"].strip() == "love"}
    return frozenset(categories | {"love"})


@cache
def _catalog_prompts() -> dict[str, bool]:
    """The prompt catalog's queries (whitespace normalised, as int_stories_placed matches them) -> whether the
    prompt has an object character: power-laden prompts and Love (docs/METHOD.md §2, int_story_roles_assigned)."""
    with (seeds_dir() / "prompt_catalog.csv").open(encoding="utf-8", newline="") as handle:
        return {_normalised(row["query"]): row["prompt_condition"] == "power_laden" or row["domain"] == "love"
                for row in csv.DictReader(handle)}


def _normalised(text: str) -> str:
    return " ".join(text.split())


def has_object_character(role_category: str | None, object_text: str | None,
                         query: str | None = None) -> bool | None:
    """A power-laden prompt names its object (the Object cell); a Love prompt has two partners; a power-neutral
    Learning or Labor prompt has no object character. The prompt catalog decides when it holds the query; else the
    row's Object and Role Category; None (unknown: no check) when neither can tell."""
    placed = _catalog_prompts().get(_normalised(query)) if query else None
    if placed is not None:
        return placed
    if object_text is not None and object_text.strip():
        return True
    if role_category is None or not role_category.strip():
        return None
    return role_category.strip().casefold() in _object_domains_categories()


def _has_content(label: dict) -> bool:
    return label["gender"] is not None or label["name"] is not None or bool(label.get("reference_words"))


def checked_hand_labels(labels: pl.DataFrame, rows: pl.DataFrame,
                        cells: CellsByRole) -> tuple[pl.DataFrame, pl.DataFrame]:
    """labels (lfh.landing.study_labels.HAND_LABEL_COLUMNS, one per story, role and source) checked against the
    workbook rows they came from (source_row, the label cells, `<cell>:formula`, Role Category, Object): returns the
    labels kept (gender in its drop-down spelling) and the rejections (source_row, reason, detail)."""
    rejections: list[tuple[int, str, str]] = []
    dropped: set[tuple[int, str]] = set()
    # a formula without a saved value reads as an empty cell: its label (possibly none at all) is rejected
    for role, role_cells in cells.items():
        for cell in role_cells:
            if cell is None or formula_column(cell) not in rows.columns:
                continue
            for source_row, formula in rows.filter(pl.col(formula_column(cell)).is_not_null()).select(
                    "source_row", formula_column(cell)).iter_rows():
                rejections.append((source_row, "formula_without_value",
                                   f"the '{cell}' cell holds a formula with no saved value ({formula}): open the "
                                   "workbook in a spreadsheet and save it, or type the value; the "
                                   f"{role}'s hand label of this row was not landed"))
                dropped.add((source_row, role))
    # whether each row's story has an object character (None: cannot tell, no check)
    context = {}
    if {"Role Category", "Object", "Query"} & set(rows.columns):
        def cell(name: str) -> pl.Expr:
            return pl.col(name) if name in rows.columns else pl.lit(None, dtype=pl.String)

        context = {row[0]: has_object_character(row[1], row[2], row[3])
                   for row in rows.select("source_row", cell("Role Category"), cell("Object"), cell("Query"))
                   .iter_rows()}
    kept = []
    for label in labels.iter_rows(named=True):
        key = (label["source_row"], label["role"])
        if key in dropped:
            continue
        gender_cell = cells.get(label["role"], (None,))[0]
        if label["gender"] is not None and gender_cell is not None:
            choice = gender_choice(label["gender"])
            if choice is None:
                rejections.append((label["source_row"], "invalid_gender",
                                   f"the '{gender_cell}' cell is {label['gender']!r}, not one of the drop-down's "
                                   f"values: {', '.join(HAND_GENDER_VALUES)} (case and spaces do not matter); the "
                                   f"{label['role']}'s hand label of this row was not landed"))
                continue
            label = {**label, "gender": choice}
        if label["role"] == "object" and _has_content(label) and context.get(label["source_row"]) is False:
            filled = [cell for cell in cells.get("object", ()) if cell is not None]
            rejections.append((label["source_row"], "object_without_object",
                               f"the story has no object character (a power-neutral Learning or Labor prompt: no "
                               f"Object, Role Category not Love), so its {' / '.join(filled)} cells cannot label "
                               "one; they were not landed. Clear them, or check the row's Object and Role Category"))
            continue
        kept.append(label)
    kept_frame = pl.DataFrame(kept, schema=labels.schema) if labels.width else labels
    return kept_frame, pl.DataFrame(rejections, schema=REJECTION_SCHEMA, orient="row")


def without_conflicts(labels: pl.DataFrame, header_rows: int = 1) -> tuple[pl.DataFrame, pl.DataFrame]:
    """One character (story, role) labeled on several rows of one file: rows that agree (same gender and name) land
    once (the first row); rows that disagree are all rejected (conflicting_duplicate), each naming the other rows
    as the spreadsheet numbers them (header_rows above the data), since no row is more right than another."""
    if labels.height == 0:
        return labels, pl.DataFrame(schema=REJECTION_SCHEMA)
    key = ["story_id", "role", *(["label_source"] if "label_source" in labels.columns else [])]
    variants = labels.with_columns(pl.struct("gender", "name").n_unique().over(key).alias("_variants"))
    conflicting = variants.filter(pl.col("_variants") > 1).sort("source_row")
    rejections = []
    for (story_id, role, *_source), group in conflicting.group_by(key, maintain_order=True):
        rows = [row + header_rows for row in group["source_row"].to_list()]
        values = ", ".join(f"row {row}: {gender or '(no gender)'} / {name or '(no name)'}"
                           for row, gender, name in zip(rows, group["gender"], group["name"], strict=True))
        for source_row in group["source_row"].to_list():
            rejections.append((source_row, "conflicting_duplicate",
                               f"story {story_id} appears on several rows with different {role} labels ({values}): "
                               "none of them was landed. Keep one row for the story (delete or correct the others) "
                               "and ingest the workbook again"))
    kept = (variants.filter(pl.col("_variants") == 1).sort("source_row").unique(key, keep="first", maintain_order=True)
            .drop("_variants"))
    return kept, pl.DataFrame(rejections, schema=REJECTION_SCHEMA, orient="row")
