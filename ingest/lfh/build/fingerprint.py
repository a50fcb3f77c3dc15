"""When the incremental layer must be rebuilt in full: a fingerprint of everything that changes rows of stories
already built — the vars (except those configs/build_vars.toml marks marts_only), the seeds' contents, the
lexicon tables' contents and the SQL of models and macros. It is stored in the warehouse (meta.build_fingerprint) after
a complete build and cleared before each build starts, so a build that fails or stops half way is followed by a
full one. `lfh build` compares it before running dbt and passes --full-refresh when anything differs.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import duckdb

from lfh.build.vars import var_rules
from lfh.paths import project_root

LEXICON_TABLES = ("census_first_names", "wikipedia_first_names", "custom_first_names", "census_surnames")
UNIT_TESTS = "unit_tests"  # a part kept beside the others, never a reason for a full rebuild (differences skips it)


def _files_digest(root: Path, patterns: list[tuple[str, str]]) -> str:
    digest = hashlib.sha256()
    for folder, pattern in patterns:
        for path in sorted((root / folder).rglob(pattern)):
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _lexicon_contents(connection: duckdb.DuckDBPyConnection, parquet_dir: Path | None = None) -> dict[str, str]:
    """Row count and an order-free hash of each lexicon table's rows (a reload of the same names changes nothing):
    the warehouse's raw tables, or the landed Parquet files the build reads (parquet_dir)."""
    contents = {}
    for table in LEXICON_TABLES:
        relation = f"raw.{table}"
        if parquet_dir is not None:
            files = parquet_dir / table / "*.parquet"
            relation = f"read_parquet('{str(files).replace(chr(39), chr(39) * 2)}', union_by_name = true)"
            if not any((parquet_dir / table).glob("*.parquet")):
                contents[table] = "0:None"
                continue
        try:
            query = f"select count(*), bit_xor(hash(row)) from {relation} as row"
            count, digest = connection.execute(query).fetchone()
        except duckdb.CatalogException:
            count, digest = 0, None
        contents[table] = f"{count}:{digest}"
    return contents


def current_fingerprint(connection: duckdb.DuckDBPyConnection, dbt_vars: dict[str, Any],
                        root: Path | None = None, parquet_dir: Path | None = None) -> dict[str, Any]:
    """The parts (vars, seeds, lexicon, code) that, changed, leave already built story rows stale. parquet_dir: the
    build reads the raw tables from landed Parquet files there (lfh build --parquet-dir)."""
    root = root or project_root()
    rules = var_rules(root)
    effective = {name: dbt_vars.get(name, rule.default) for name, rule in sorted(rules.items()) if not rule.marts_only}
    return {
        "vars": effective,
        "seeds": _files_digest(root, [("seeds", "*.csv")]),
        "lexicon": _lexicon_contents(connection, parquet_dir),
        "code": _files_digest(root, [("models", "*.sql"), ("macros", "*.sql")]),
        UNIT_TESTS: unit_tests_digest(dbt_vars, root),
    }


def unit_tests_digest(dbt_vars: dict[str, Any], root: Path | None = None) -> str:
    """What the project's unit tests depend on: the SQL of models and macros, the yml that holds the tests and their
    fixtures, the generic tests, the seeds and every var (marts_only ones too). Not a reason for a full rebuild
    (a changed description rebuilds nothing); equal to the last complete build's, the unit tests passed on exactly
    this project then, and an incremental build need not run them again."""
    root = root or project_root()
    files = _files_digest(root, [("models", "*.sql"), ("models", "*.yml"), ("macros", "*.sql"), ("macros", "*.yml"),
                                 ("tests/dbt", "*.sql"), ("seeds", "*.csv")])
    project = hashlib.sha256((root / "dbt_project.yml").read_bytes()).hexdigest()[:16]  # the vars' defaults
    return f"{files}:{project}:{json.dumps(dbt_vars, sort_keys=True, default=str)}"


def unit_tests_unchanged(stored: dict[str, Any] | None, current: dict[str, Any]) -> bool:
    return stored is not None and stored.get(UNIT_TESTS) == current[UNIT_TESTS]


def stored_fingerprint(connection: duckdb.DuckDBPyConnection) -> dict[str, Any] | None:
    try:
        row = connection.execute("select parts from meta.build_fingerprint").fetchone()
    except duckdb.CatalogException:
        return None
    return json.loads(row[0]) if row else None


def clear_fingerprint(connection: duckdb.DuckDBPyConnection) -> None:
    connection.execute("create schema if not exists meta")
    connection.execute("create or replace table meta.build_fingerprint (parts varchar, built_at timestamptz)")


def store_fingerprint(connection: duckdb.DuckDBPyConnection, parts: dict[str, Any]) -> None:
    clear_fingerprint(connection)
    connection.execute("insert into meta.build_fingerprint values (?, now())", [json.dumps(parts, sort_keys=True)])


def differences(stored: dict[str, Any] | None, current: dict[str, Any]) -> list[str]:
    """What changed since the last complete build, for the user ([] when nothing did)."""
    if stored is None:
        return ["no complete build recorded in this warehouse"]
    changed = []
    old_vars, new_vars = stored.get("vars", {}), current["vars"]
    for name in sorted(set(old_vars) | set(new_vars)):
        if old_vars.get(name) != new_vars.get(name):
            changed.append(f"var {name}: {json.dumps(old_vars.get(name))} -> {json.dumps(new_vars.get(name))}")
    labels = {"seeds": "the seeds (seeds/*.csv)", "lexicon": "the lexicon (lfh lexicon)",
              "code": "the models' or macros' SQL"}
    changed += [f"{label} changed" for key, label in labels.items() if stored.get(key) != current[key]]
    return changed
