"""Where the project's files live. One place, so every command and the dbt profile agree."""

from __future__ import annotations

import os
from pathlib import Path

DB_ENV_VAR = "LFH_DB"


def project_root() -> Path:
    """The folder holding dbt_project.yml (the repository root in a checkout)."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "dbt_project.yml").is_file():
            return parent
    return Path.cwd()


def seeds_dir() -> Path:
    return project_root() / "seeds"


def database_path() -> Path:
    """The DuckDB file: $LFH_DB when set, else warehouse/lfh.duckdb under the project root. Always absolute."""
    configured = os.environ.get(DB_ENV_VAR)
    path = Path(configured) if configured else project_root() / "warehouse" / "lfh.duckdb"
    return path.expanduser().resolve()


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
