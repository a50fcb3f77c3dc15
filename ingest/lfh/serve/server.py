"""Where `lfh serve` keeps its PostgreSQL cluster and the connection string it shows (the cluster itself is in
postgres_cluster, the load in postgres_load)."""

from __future__ import annotations

from pathlib import Path

from lfh.paths import database_path


def default_data_dir() -> Path:
    return database_path().parent / "postgres"


def reader_url(user: str, host: str, port: int, database: str) -> str:
    """The connection string users copy; it never carries the password."""
    shown_host = f"[{host}]" if ":" in host else host
    return f"postgresql://{user}@{shown_host}:{port}/{database}"
