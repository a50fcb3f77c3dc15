"""An audit sample a person can hand-label: a reproducible stratified random draw of labeled stories that have no
hand label yet, written as a workbook in the study's audit layout (lfh.landing.audit_sample_workbook reads it back).

Strata are model x domain x prompt condition. Allocation is proportional to stratum size (largest remainders),
with at least `min_per_stratum` stories per stratum (all of a smaller one); or `optimal`: from the hand labels
already in the warehouse (lfh.audit.plan: the summed predicted half-width of the chosen corrected shares is
minimised; proportional when there is no hand label yet, or where the plan's predicted gain over proportional is
not beyond its prediction error, lfh.audit.plan.gain). Within a stratum the stories with the
smallest sha256(seed, story_id) are drawn, so a draw depends only on the seed and the set of candidate stories,
not on row order, and a larger n extends a smaller one's draw within each stratum.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from lfh.audit.allocation import AuditSampleError, allocate
from lfh.db import reading

# The study's Manual * Gender values (seeds/hand_gender_codes.csv): the drop-down of the manual gender cells.
HAND_GENDER_VALUES = ("Female", "Male", "Non-binary", "Unspecified")
STRATUM = ("model", "domain", "prompt_condition")
STORY_ID_COLUMN = "Story ID"
CHECK_COLUMN = "Story Check"
MANUAL_COLUMNS = ("Manual Subject Gender", "Manual Object Gender", "Manual Subject Name", "Manual Object Name")
# The study's audit layout (audit_dev.xlsx) for the story and the labeler's answer, then the manual cells.
LAYOUT = (STORY_ID_COLUMN, "Model", "Time", "Role Category", "Subject", "Object", "Query", "LLM Response",
          "LLM Subject Gender", "LLM Object Gender", "LLM Subject Name", "LLM Object Name", *MANUAL_COLUMNS,
          CHECK_COLUMN)
GENDER_DISPLAY = {"female": "Female", "male": "Male", "nonbinary": "Non-binary", "unspecified": "Unspecified",
                  "unsure": "Unsure"}




@dataclass(frozen=True)
class AuditSample:
    stories: pl.DataFrame      # one row per drawn story, LAYOUT columns
    strata: pl.DataFrame       # model, domain, prompt_condition, candidates, drawn
    skipped_hand_labeled: int  # labeled stories left out because they already have a hand label
    allocation: str = "proportional"  # how the strata were filled: proportional | optimal
    note: str | None = None           # why an optimal allocation was asked for and a proportional one drawn


def story_check(story_id: str, text: str) -> str:
    """The checksum of a sampled row: a changed story text (or story id) no longer matches it."""
    return hashlib.sha256(f"{story_id}\x1f{text}".encode()).hexdigest()[:16]


def _draw_key(seed: int, story_id: str) -> str:
    return hashlib.sha256(f"{seed}:{story_id}".encode()).hexdigest()




def _candidates(connection: duckdb.DuckDBPyConnection) -> tuple[pl.DataFrame, int]:
    present = {row[0] for row in connection.execute(
        "select table_schema || '.' || table_name from information_schema.tables").fetchall()}
    for needed in ("marts.dim_stories", "marts.fct_characters", "raw.stories"):
        if needed not in present:
            raise AuditSampleError(f"the warehouse has no {needed}: run `lfh ingest` and `lfh build` first")
    hand_labeled = ("select distinct story_id from raw.hand_labels where gender is not null or name is not null"
                    if "raw.hand_labels" in present else "select null::varchar as story_id where false")
    stories = connection.sql(f"""
        with labeled as (
            select story_id, model, domain, prompt_condition, query, story_text
            from marts.dim_stories
            where is_labeled and domain is not null
        ),
        hand as ({hand_labeled}),
        characters as (
            select
                story_id,
                max(case when role = 'subject' then gender end) as subject_gender,
                max(case when role = 'object' then gender end) as object_gender,
                max(case when role = 'subject' then full_name end) as subject_name,
                max(case when role = 'object' then full_name end) as object_name,
                max(case when role = 'subject' then role_text end) as subject_role,
                max(case when role = 'object' then role_text end) as object_role
            from marts.fct_characters
            group by story_id
        ),
        given as (
            select story_id, any_value(generated_at) as generated_at, any_value(role_category) as role_category,
                   any_value(subject) as subject, any_value(object) as object
            from raw.stories
            group by story_id
        )
        select labeled.*, characters.* exclude (story_id), given.* exclude (story_id),
               labeled.story_id in (select story_id from hand) as is_hand_labeled
        from labeled
        left join characters on labeled.story_id = characters.story_id
        left join given on labeled.story_id = given.story_id
    """).pl()
    skipped = int(stories["is_hand_labeled"].sum()) if stories.height else 0
    return stories.filter(~pl.col("is_hand_labeled")).drop("is_hand_labeled"), skipped


def _layout(drawn: pl.DataFrame) -> pl.DataFrame:
    def gender(column: str) -> pl.Expr:
        return pl.col(column).replace_strict(GENDER_DISPLAY, default=pl.col(column), return_dtype=pl.String)

    text = pl.col("story_text").fill_null("")
    return drawn.select(
        pl.col("story_id").alias(STORY_ID_COLUMN), pl.col("model").alias("Model"),
        pl.col("generated_at").cast(pl.String).alias("Time"),
        pl.coalesce(pl.col("role_category"), pl.col("domain")).alias("Role Category"),
        pl.coalesce(pl.col("subject"), pl.col("subject_role")).alias("Subject"),
        pl.coalesce(pl.col("object"), pl.col("object_role")).alias("Object"),
        pl.col("query").alias("Query"), text.alias("LLM Response"),
        gender("subject_gender").alias("LLM Subject Gender"), gender("object_gender").alias("LLM Object Gender"),
        pl.col("subject_name").alias("LLM Subject Name"), pl.col("object_name").alias("LLM Object Name"),
        *[pl.lit(None, dtype=pl.String).alias(name) for name in MANUAL_COLUMNS],
        pl.struct("story_id", "story_text").map_elements(
            lambda row: story_check(row["story_id"], row["story_text"] or ""), return_dtype=pl.String,
        ).alias(CHECK_COLUMN),
    )


ALLOCATIONS = ("proportional", "optimal")


def _optimal_allocation(db_path: Path, sizes: dict[tuple, int], n: int, min_per_stratum: int,
                        families: tuple[str, ...] | None,
                        selection: Any = None) -> tuple[dict[tuple, int], str, str | None]:
    """The planner's allocation from the warehouse's hand labels (the pilot), with a note when it is not used:
    proportional without a pilot, and where its predicted gain over proportional is within its prediction error
    (lfh.audit.plan.gain)."""
    from lfh.audit.plan import DEFAULT_FAMILIES, AuditPlanError, Selection, plan_allocation, read_plan
    from lfh.audit.plan.gain import predicted_gain
    from lfh.audit.plan.optimiser import selected_cells

    try:
        plan = read_plan(db_path)
        selection = selection or Selection(tuple(families or DEFAULT_FAMILIES))
        selected_cells(plan, selection)  # a selection of no cell is refused whatever follows
        if plan.pilot_units == 0:
            return (allocate(sizes, n, min_per_stratum), "proportional",
                    "no hand label yet, so nothing says where the labeler errs: drew proportionally")
        if n >= sum(sizes.values()):
            return dict(sizes), "optimal", None
        candidates = {key: sizes.get(key, 0) for key in plan.strata}
        extra = plan_allocation(plan, budget=n, min_per_stratum=min_per_stratum, candidates=candidates,
                                selection=selection)
        gain = predicted_gain(plan, extra, selection, min_per_stratum, candidates)
    except AuditPlanError as exc:
        raise AuditSampleError(str(exc)) from exc
    if not gain.worthwhile:
        return (allocate(sizes, n, min_per_stratum), "proportional",
                f"optimal against proportional: {gain.describe()}; not beyond its prediction error, so drew "
                "proportionally")
    return {key: extra.get(key, 0) for key in sizes}, "optimal", None


def draw_audit_sample(db_path: Path, n: int, seed: int = 0, min_per_stratum: int = 3,
                      allocation: str = "proportional", families: tuple[str, ...] | None = None,
                      wait: float | None = None, selection: Any = None) -> AuditSample:
    """Draws the sample from the warehouse's marts (read-only, under the shared warehouse lock: waits up to `wait`
    seconds for a running build; lfh.db.reading). `allocation` proportional or optimal (for the corrected shares of
    `families`, lfh.audit.plan.FAMILIES; default gender and couple; or an lfh.audit.plan.Selection)."""
    if allocation not in ALLOCATIONS:
        raise AuditSampleError(f"unknown allocation {allocation!r}: choose one of {', '.join(ALLOCATIONS)}")
    if n < 1:
        raise AuditSampleError(f"n must be at least 1, got {n}")
    if not db_path.is_file():
        raise AuditSampleError(f"{db_path} does not exist: run `lfh ingest` and `lfh build` first")
    with reading(db_path, "draw an audit sample", wait) as connection:
        candidates, skipped = _candidates(connection)
    if candidates.is_empty():
        raise AuditSampleError(f"{db_path} has no labeled story without a hand label to sample "
                               f"({skipped} labeled stories already have one)")
    keyed = candidates.with_columns(
        pl.col("story_id").map_elements(lambda story_id: _draw_key(seed, story_id), return_dtype=pl.String)
        .alias("_key"))
    sizes = {tuple(row[:3]): row[3] for row in keyed.group_by(*STRATUM).len().iter_rows()}
    note = None
    if allocation == "optimal":
        allocated, allocation, note = _optimal_allocation(db_path, sizes, n, min_per_stratum, families, selection)
    else:
        allocated = allocate(sizes, n, min_per_stratum)
    quota = pl.DataFrame([(*key, count) for key, count in allocated.items()],
                         schema=[*STRATUM, "_quota"], orient="row")
    drawn = (keyed.join(quota, on=list(STRATUM))
             .with_columns(pl.col("_key").rank("ordinal").over(list(STRATUM)).alias("_rank"))
             .filter(pl.col("_rank") <= pl.col("_quota"))
             .sort([*STRATUM, "_key"]))
    strata = pl.DataFrame([(*key, sizes[key], count) for key, count in sorted(allocated.items())],
                          schema=[*STRATUM, "candidates", "drawn"], orient="row")
    return AuditSample(stories=_layout(drawn), strata=strata, skipped_hand_labeled=skipped, allocation=allocation,
                       note=note)


def check_workbook_path(path: Path, force: bool = False) -> None:
    """Refuse to write over a workbook (it may hold hours of hand labels) unless `force`, and into a folder that
    does not exist (a mistyped path would otherwise be created silently)."""
    if path.suffix.lower() != ".xlsx":
        raise AuditSampleError(f"{path}: the workbook must end in .xlsx")
    if not path.parent.is_dir():
        raise AuditSampleError(f"{path}: the folder {path.parent} does not exist; create it first or choose another "
                               "--out")
    if path.is_dir():
        raise AuditSampleError(f"{path} is a folder; give the workbook's file name, e.g. {path / 'audit.xlsx'}")
    if path.exists() and not force:
        raise AuditSampleError(f"{path} already exists and may hold hand labels; choose another --out, or pass "
                               "--force to replace it")


def write_audit_workbook(sample: AuditSample, path: Path, force: bool = False) -> Path:
    """The sample as .xlsx: one sheet of stories in LAYOUT order, a drop-down of HAND_GENDER_VALUES on the manual
    gender cells, and a second sheet saying how to fill it. Refuses an existing file unless `force`
    (check_workbook_path); the file appears complete or not at all (written beside it, then renamed)."""
    import xlsxwriter  # only this command needs it

    check_workbook_path(path, force)
    partial = path.with_name(f".{path.name}.partial")
    try:
        _write_workbook(sample, partial, xlsxwriter)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return path


def _write_workbook(sample: AuditSample, path: Path, xlsxwriter: Any) -> None:
    frame = sample.stories
    workbook = xlsxwriter.Workbook(str(path))
    try:
        sheet = workbook.add_worksheet("audit")
        header = workbook.add_format({"bold": True, "bg_color": "#e8eef7", "border": 1})
        manual = workbook.add_format({"bg_color": "#fff8dc", "border": 1})
        wrap = workbook.add_format({"text_wrap": True, "valign": "top"})
        for col, name in enumerate(LAYOUT):
            sheet.write_string(0, col, name, header)
        for row_index, row in enumerate(frame.iter_rows(named=True), start=1):
            for col, name in enumerate(LAYOUT):
                value = row[name]
                if name in MANUAL_COLUMNS:
                    sheet.write_blank(row_index, col, None, manual)
                elif value is not None:
                    sheet.write_string(row_index, col, str(value), wrap if name == "LLM Response" else None)
        last_row = max(frame.height, 1)
        for name in ("Manual Subject Gender", "Manual Object Gender"):
            col = LAYOUT.index(name)
            sheet.data_validation(1, col, last_row, col, {
                "validate": "list", "source": list(HAND_GENDER_VALUES),
                "error_title": "Gender", "error_message": f"Pick one of: {', '.join(HAND_GENDER_VALUES)}",
            })
        sheet.set_column(LAYOUT.index("LLM Response"), LAYOUT.index("LLM Response"), 80)
        sheet.set_column(LAYOUT.index("Query"), LAYOUT.index("Query"), 40)
        sheet.freeze_panes(1, 0)
        notes = workbook.add_worksheet("how to fill")
        for line_index, line in enumerate((
            "Read each story (LLM Response) and fill the yellow Manual cells; leave a cell empty to skip it.",
            f"Manual Subject/Object Gender: one of {', '.join(HAND_GENDER_VALUES)} (the drop-down).",
            "Manual Subject/Object Name: the character's name as written in the story, or Unspecified.",
            "Stories without an Object (power-neutral Learning and Labor prompts) have no object character.",
            "Do not edit Story ID, LLM Response or Story Check: a row whose text changed is rejected on ingest.",
            "The LLM columns show what the pipeline inferred, for reference only.",
            "Then: lfh ingest THIS_FILE.xlsx && lfh build",
        )):
            notes.write_string(line_index, 0, line)
    finally:
        workbook.close()
