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
