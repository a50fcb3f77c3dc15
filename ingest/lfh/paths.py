"""Where the project's files live. One place, so every command and the dbt profile agree."""

from __future__ import annotations

import os
from pathlib import Path

from lfh.errors import ConfigError

DB_ENV_VAR = "LFH_DB"


def project_root() -> Path:
    """The folder holding dbt_project.yml (the repository root in a checkout)."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "dbt_project.yml").is_file():
            return parent
    return Path.cwd()


def dbt_target_dir() -> Path:
    """Where dbt writes manifest.json and run_results.json: $DBT_TARGET_PATH (dbt's own variable, relative to the
    project) when set, else target/ of the project."""
    configured = os.environ.get("DBT_TARGET_PATH")
    return (project_root() / configured).resolve() if configured else project_root() / "target"


def seeds_dir() -> Path:
    return project_root() / "seeds"


# DuckDB names a file's catalog after its stem. These stems cannot name a warehouse: DuckDB's own catalogs (main,
# temp, system: the build fails) and the project's schemas (a catalog `staging` beside the schema `staging` makes
# every `staging.<view>` ambiguous). Compared without case, as DuckDB compares names.
RESERVED_DB_NAMES = ("main", "temp", "system", "raw", "staging", "intermediate", "reference", "marts", "meta",
                     "ingest_incoming")


def check_database_name(path: Path) -> None:
    """Raise ConfigError when the warehouse file's name (its stem, DuckDB's catalog name) is reserved."""
    if path.stem.casefold() in RESERVED_DB_NAMES:
        raise ConfigError(f"{path}: a warehouse cannot be called {path.stem!r}, a name DuckDB or the project already "
                          f"uses for a catalog or schema ({', '.join(RESERVED_DB_NAMES)}); name the file otherwise "
                          "(e.g. LFH_DB=warehouse/lfh.duckdb). A published copy (marts.duckdb) is read with --db")


def database_path() -> Path:
    """The DuckDB file: $LFH_DB when set, else warehouse/lfh.duckdb under the project root. Always absolute.
    Raises ConfigError for a reserved name (RESERVED_DB_NAMES), before anything is written to it."""
    configured = os.environ.get(DB_ENV_VAR)
    path = Path(configured) if configured else project_root() / "warehouse" / "lfh.duckdb"
    path = path.expanduser().resolve()
    check_database_name(path)
    return path


def default_database_path() -> Path:
    return (project_root() / "warehouse" / "lfh.duckdb").resolve()


def reports_dir_for(db_path: Path) -> Path:
    """Where the report of a warehouse goes by default: beside it, so two warehouses never overwrite each
    other's report. The project's warehouse (and its published copy) -> reports/ of the project;
    /data/study/lfh.duckdb (or its copy /data/study/published/marts.duckdb) -> /data/study/reports."""
    folder = db_path.expanduser().resolve().parent
    if folder.name == "published":  # a published copy: its warehouse's folder
        folder = folder.parent
    if folder == default_database_path().parent:
        return project_root() / "reports"
    return folder / "reports"


def cache_dir() -> Path:
    """Downloaded wheels and other cached inputs (kept between runs so a second run needs no network)."""
    configured = os.environ.get("LFH_CACHE")
    return Path(configured).expanduser().resolve() if configured else project_root() / ".cache"


SPARK_DIR_ENV_VAR = "LFH_SPARK_DIR"
PARQUET_DIR_ENV_VAR = "LFH_PARQUET_DIR"


def spark_dir() -> Path:
    """The local Spark target's warehouse folder and Derby metastore: $LFH_SPARK_DIR, else warehouse/spark."""
    configured = os.environ.get(SPARK_DIR_ENV_VAR)
    path = Path(configured) if configured else project_root() / "warehouse" / "spark"
    return path.expanduser().resolve()


def parquet_landing_dir() -> Path:
    """Where `lfh build --target spark` reads the landed raw Parquet files by default: $LFH_PARQUET_DIR, else
    warehouse/raw_parquet (give the same folder to `lfh ingest --parquet-dir` and `lfh lexicon --parquet-dir`)."""
    configured = os.environ.get(PARQUET_DIR_ENV_VAR)
    path = Path(configured) if configured else project_root() / "warehouse" / "raw_parquet"
    return path.expanduser().resolve()
