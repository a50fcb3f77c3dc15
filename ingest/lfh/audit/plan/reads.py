"""What the plan reads from the warehouse (the units of each family, the labeled stories, the build's vars), and the
plan built from them."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import duckdb
import polars as pl

from lfh.audit.plan.cells import build_cells
from lfh.audit.plan.model import (
    STRATA,
    AuditPlanError,
    Plan,
    PlanSettings,
    Stratum,
    StratumStories,
)
from lfh.db import reading

COUNTED = "intermediate.int_correction_units_counted"


def read_units(connection: duckdb.DuckDBPyConnection,
               strata: str = "model_domain_condition") -> tuple[dict[str, pl.DataFrame], pl.DataFrame]:
    """The units of each family as int_correction_units_counted counts them per story (story_id, model, stratum,
    key, machine, hand, is_hand_labeled, unit_count) and the labeled stories (story_id, model, domain,
    prompt_condition, hand: whether the story has a hand label). With `strata` machine_label_class the stories also
    carry machine_class (the model's story_class) and the strata end with it."""
    if strata not in STRATA:
        raise AuditPlanError(f"unknown strata {strata!r}: choose from {', '.join(STRATA)}")
    present = {row[0] for row in connection.execute(
        "select table_schema || '.' || table_name from information_schema.tables").fetchall()}
    for needed in ("marts.dim_stories", COUNTED):
        if needed not in present:
            raise AuditPlanError(f"the warehouse has no {needed}: run `lfh ingest` and `lfh build` first")
    stories = connection.sql("""
        select story_id, model, domain, prompt_condition
        from marts.dim_stories
        where is_labeled and domain is not null
    """).pl()
    counted = connection.sql(f"""
        select family, story_id, model, domain, prompt_condition, story_class as machine_class, cell_key, condition,
               machine_class as machine, hand_class as hand, is_hand_labeled, unit_count
        from {COUNTED}
    """).pl().join(stories.select("story_id"), on="story_id", how="semi")
    stratum_columns = ["model", "domain", "prompt_condition"]
    if strata == "machine_label_class":
        classes = counted.group_by("story_id").agg(pl.col("machine_class").first())
        stories = stories.join(classes, on="story_id", how="left").with_columns(
            pl.col("machine_class").fill_null("uncertain"))
        stratum_columns.append("machine_class")
    counted = counted.with_columns(pl.concat_list(*stratum_columns).alias("stratum"))
    columns = ["story_id", "model", "stratum", "key", "machine", "hand", "is_hand_labeled", "unit_count"]
    keys = {"gender": ["cell_key", "condition"], "occupation": ["cell_key", "condition"], "couple": ["cell_key"]}
    units = {family: counted.filter(pl.col("family") == family).with_columns(
        pl.concat_list(*key).alias("key")).select(columns) for family, key in keys.items()}
    hand_stories = units["gender"].filter(pl.col("is_hand_labeled")).select("story_id").unique()
    return units, stories.join(hand_stories.with_columns(pl.lit(True).alias("hand")), on="story_id", how="left")


def mask_units(units: dict[str, pl.DataFrame], stories: pl.DataFrame,
               kept: Iterable[str]) -> tuple[dict[str, pl.DataFrame], pl.DataFrame]:
    """The same units with hand labels only on the `kept` stories (for checking a plan on a fully hand-labeled
    audit, as bench.correction_check does)."""
    kept_frame = pl.DataFrame({"story_id": sorted(set(kept))}, schema={"story_id": pl.String})
    keep = pl.col("story_id").is_in(kept_frame["story_id"].implode())
    masked = {family: frame.with_columns((pl.col("is_hand_labeled") & keep).alias("is_hand_labeled")).with_columns(
        pl.when(pl.col("is_hand_labeled")).then(pl.col("hand")).alias("hand")) for family, frame in units.items()}
    return masked, stories.with_columns(pl.when(keep & pl.col("hand").fill_null(False)).then(True).alias("hand"))


UNIT_KEYS = ("model", "stratum", "key", "machine", "hand", "is_hand_labeled")


def _counted(frame: pl.DataFrame) -> pl.DataFrame:
    """The frame with unit_count, how many units a row stands for: read_units' counts, or 1 per row in a frame of
    one row per unit."""
    return frame if "unit_count" in frame.columns else frame.with_columns(pl.lit(1).alias("unit_count"))


def _aggregate(frame: pl.DataFrame) -> pl.DataFrame:
    """Units counted per UNIT_KEYS, in that order: the cells, their strata and every sum over them come out the
    same whatever order the warehouse returned the rows in (the same warehouse and flags give the same plan)."""
    return _counted(frame).group_by(*UNIT_KEYS).agg(pl.col("unit_count").sum().cast(pl.UInt32)).sort(
        *UNIT_KEYS, nulls_last=True)


def stratum_columns(stories: pl.DataFrame) -> list[str]:
    """The columns of `stories` (read_units') that make its sampling stratum."""
    return ["model", "domain", "prompt_condition", *(["machine_class"] if "machine_class" in stories.columns else [])]


def strata_stories(stories: pl.DataFrame) -> dict[Stratum, StratumStories]:
    """Per stratum: labeled stories, of which hand-labeled (column `hand` true) and candidates."""
    summary = stories.group_by(*stratum_columns(stories)).agg(
        pl.len().alias("stories"), pl.col("hand").fill_null(False).sum().alias("hand_labeled"))
    return {tuple(key): StratumStories(int(total), int(hand), int(total - hand))
            for *key, total, hand in summary.sort(stratum_columns(stories)).iter_rows()}


def build_plan(units: dict[str, pl.DataFrame], stories: pl.DataFrame, settings: PlanSettings | None = None,
               linearise_at: dict[tuple, tuple[float, float]] | None = None) -> Plan:
    """A plan from unit frames (as `read_units` reads them) and the labeled stories with their hand-label flag: the
    library entry the tests use on masked copies of a fully hand-labeled audit."""
    settings = settings or PlanSettings()
    strata = strata_stories(stories)
    if not strata:
        raise AuditPlanError("no labeled story to plan for: run `lfh ingest` and `lfh build` first")
    aggregated = {family: _aggregate(frame) for family, frame in units.items()}
    pilot = 0
    if "gender" in units:  # the hand-labeled characters
        pilot = int(_counted(units["gender"]).filter(pl.col("is_hand_labeled"))["unit_count"].sum())
    return Plan(build_cells(aggregated, strata, settings, linearise_at), strata, settings, pilot)


def build_vars(connection: duckdb.DuckDBPyConnection) -> dict:
    """The dbt vars the warehouse was last built with (lfh build's fingerprint, meta.build_fingerprint), over the
    project's defaults: the estimator the plan must predict."""
    from lfh.build.fingerprint import stored_fingerprint
    from lfh.build.vars import project_var_defaults

    stored = stored_fingerprint(connection) or {}
    return {**project_var_defaults(), **(stored.get("vars") or {})}


def read_plan(db_path: Path, settings: PlanSettings | None = None, **overrides: object) -> Plan:
    """The plan of the warehouse at db_path, opened read-only under the shared warehouse lock (lfh.db.reading:
    waits for a running build, as every reader does). Without `settings`, those of the vars it was built with
    (`overrides`: e.g. assumed_error_rate)."""
    if not db_path.is_file():
        raise AuditPlanError(f"{db_path} does not exist: run `lfh ingest` and `lfh build` first")
    with reading(db_path, "plan hand labels") as connection:
        units, stories = read_units(connection)
        if settings is None:
            settings = PlanSettings.from_vars(build_vars(connection), **overrides)
    return build_plan(units, stories, settings)
