"""`lfh publish`: a read-only serving copy of the marts (DuckDB + Parquet + manifest), swapped in atomically.

BI tools open the published copy, never the build warehouse: DuckDB allows one writer or many readers per
file, so a tool holding the build file would block the next `lfh build`.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from lfh.lock import warehouse_lock
from lfh.paths import database_path, project_root
from lfh.serve.copy import copy_marts, describe_marts, export_parquet
from lfh.serve.provenance import dbt_provenance, recorded_provenance
from lfh.serve.swap import activate, make_read_only, new_build_dir, prune, publish_lock

MANIFEST_FORMAT = 1
SERVING_FILE = "marts.duckdb"
PARQUET_DIR = "parquet"
MANIFEST_FILE = "manifest.json"


@dataclass(frozen=True)
class Publication:
    destination: Path
    version_dir: Path
    manifest: dict[str, Any]

    @property
    def serving_db(self) -> Path:
        return self.destination / SERVING_FILE


def default_destination() -> Path:
    """warehouse/published beside the build warehouse (so LFH_DB=DIR/lfh.duckdb publishes to DIR/published)."""
    return database_path().parent / "published"


def _iso_mtime(path: Path) -> str:
    return datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat()


ROOT_NOTE = ("note: running as root. The copy is read-only by file mode, which root ignores: a read-write open of "
             "marts.duckdb by root locks every reader out. For shared use serve the marts with `lfh serve` "
             "(docs/SERVING.md, 'The limit of a file's read-only mode').")


def simulated_stories(serving_file: Path) -> int:
    """Stories of dim_stories made by `lfh simulate` (0 for a copy whose dim_stories lacks the flag)."""
    connection = duckdb.connect(str(serving_file), read_only=True)
    try:
        columns = connection.execute(
            "select column_name from information_schema.columns where table_name = 'dim_stories'").fetchall()
        if ("is_simulated",) not in columns:
            return 0
        row = connection.execute("select count(*) filter (where is_simulated) from marts.dim_stories").fetchone()
        return int(row[0]) if row else 0
    finally:
        connection.close()


def build_manifest(build_db: Path, version_dir: Path, target_dir: Path, warehouse_facts: dict[str, Any],
                   published_at: datetime, runs_from_target: bool = False) -> dict[str, Any]:
    """runs_from_target: read the dbt run from target_dir (a Spark build, which records nothing in a warehouse);
    otherwise from the warehouse's own record, whatever target_dir holds."""
    marts = describe_marts(version_dir / SERVING_FILE)
    names = [mart.name for mart in marts]
    dbt = (dbt_provenance(target_dir, project_root(), names, "marts") if runs_from_target
           else recorded_provenance(warehouse_facts.get("dbt_record"), project_root(), names))
    baseline_sets = warehouse_facts["baseline_sets"]
    if not baseline_sets and "baseline_set" in dbt["vars"]:
        # No mart carries the column: fall back to the var the run used, and say where it came from.
        baseline_sets = [{"name": dbt["vars"]["baseline_set"], "sources": [], "from": "dbt vars"}]
    simulated = simulated_stories(version_dir / SERVING_FILE)
    return {
        "format": MANIFEST_FORMAT,
        "published_at": published_at.isoformat(),
        # whether the marts were built (wholly or partly) from `lfh simulate`'s stories: they say nothing about
        # any real model then
        "simulated": simulated > 0,
        "simulated_stories": simulated,
        "source_database": str(build_db),
        "source_modified_at": _iso_mtime(build_db),
        "dbt": {key: value for key, value in dbt.items() if key != "marts"},
        "baseline_sets": baseline_sets,
        "lexicon": warehouse_facts["lexicon"],
        "marts": [
            {
                "mart": mart.name,
                "relation": f"marts.{mart.name}",
                "parquet": f"{PARQUET_DIR}/{mart.name}.parquet",
                "rows": mart.rows,
                "description": mart.description,
                "columns": [asdict(column) for column in mart.columns],
                "dbt": dbt["marts"][mart.name],
            }
            for mart in marts
        ],
    }


def publish_marts(build_db: Path, destination: Path, target_dir: Path, keep: int = 3,
                  wait: float | None = None, runs_from_target: bool = False) -> Publication:
    """Copy, export, describe, then flip `current`. On any failure the previous publication stays current."""
    build_db = build_db.resolve()
    destination = destination.resolve()
    # never mid-build marts: a reader of the warehouse (shared lock; waits up to `wait` seconds for a build); two
    # publications of one destination are kept apart by publish_lock. A missing warehouse is refused below
    # without leaving a lock file (or its folder)
    held = warehouse_lock(build_db, "publish", shared=True, wait=wait) if build_db.exists() \
        else contextlib.nullcontext()
    with held, publish_lock(destination):
        build_dir = new_build_dir(destination)
        try:
            published_at = datetime.now(UTC)
            names, warehouse_facts = copy_marts(build_db, build_dir / SERVING_FILE)
            export_parquet(build_dir / SERVING_FILE, build_dir / PARQUET_DIR, names)
            manifest = build_manifest(build_db, build_dir, target_dir, warehouse_facts, published_at,
                                      runs_from_target)
            (build_dir / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
            make_read_only(build_dir)
            version_dir = activate(destination, build_dir)
        except BaseException:
            shutil.rmtree(build_dir, ignore_errors=True)
            raise
        prune(destination, keep)
    return Publication(destination=destination, version_dir=version_dir, manifest=manifest)
