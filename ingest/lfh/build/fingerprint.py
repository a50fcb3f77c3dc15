"""When the incremental layer must be rebuilt in full: a fingerprint of everything that changes rows of stories
already built — the vars (except those configs/build_vars.toml marks marts_only), the seeds' contents, the
lexicon tables' contents, the SQL of models and macros, dbt_project.yml (but its vars, compared one by one above),
the configs in the YAML of models, seeds and sources (what is left of each file without descriptions, tests,
unit tests and docs: materializations, column types, contracts, source tables...) and the versions of the engine
(DuckDB, dbt-core, dbt-duckdb), whose upgrade may compute a function differently. It is stored in the warehouse
(meta.build_fingerprint) after a complete build and cleared before each build starts, so a build that fails or
stops half way is followed by a full one. `lfh build` compares it before running dbt and passes --full-refresh
when anything differs.
"""

from __future__ import annotations

import hashlib
import json
from importlib import metadata
from pathlib import Path
from typing import Any

import duckdb
import yaml

from lfh.build.vars import var_rules
from lfh.paths import project_root

LEXICON_TABLES = ("census_first_names", "wikipedia_first_names", "custom_first_names", "census_surnames")
UNIT_TESTS = "unit_tests"  # a part kept beside the others, never a reason for a full rebuild (differences skips it)
ENGINE_PACKAGES = ("duckdb", "dbt-core", "dbt-duckdb")
# YAML keys that cannot change a row: documentation and tests. Everything else in a properties file counts.
ROW_NEUTRAL_KEYS = frozenset({"description", "data_tests", "tests", "unit_tests", "meta", "docs", "doc_blocks",
                              "exposures", "macros", "version", "label"})
# libyaml's parser where PyYAML was built with it (the wheels are): the same documents, about ten times faster than
# the pure-Python one, which took 0.6 s of every fingerprint (every `lfh build`) for the project's YAML files.
# tests/test_build_fingerprint.py checks both parse the project's files alike.
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load_yaml(text: str) -> Any:
    return yaml.load(text, Loader=YAML_LOADER)  # noqa: S506 (a safe loader: CSafeLoader or SafeLoader)


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
        "project": _project_digest(root),
        "config": _config_digest(root),
        "engine": engine_versions(),
        UNIT_TESTS: unit_tests_digest(dbt_vars, root),
    }


def engine_versions() -> dict[str, str]:
    """The installed versions of the engine packages (the dbt that `lfh build` runs is this environment's)."""
    versions = {}
    for package in ENGINE_PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "absent"
    return versions


def _without_row_neutral(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _without_row_neutral(item) for key, item in value.items() if key not in ROW_NEUTRAL_KEYS}
    if isinstance(value, list):
        return [_without_row_neutral(item) for item in value]
    return value


def _yaml_digest(document: Any) -> str:
    text = json.dumps(_without_row_neutral(document), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _project_digest(root: Path) -> str:
    """dbt_project.yml without its vars (each var is compared by name and value) and without comments."""
    document = _load_yaml((root / "dbt_project.yml").read_text(encoding="utf-8")) or {}
    return _yaml_digest({key: value for key, value in document.items() if key != "vars"})


def _config_digest(root: Path) -> str:
    """The properties files of models, seeds and sources, as parsed YAML (comments and layout do not count) less
    descriptions, tests and docs: configs, column types and contracts, source schemas and tables."""
    digest = hashlib.sha256()
    for folder in ("models", "seeds"):
        for pattern in ("*.yml", "*.yaml"):
            for path in sorted((root / folder).rglob(pattern)):
                document = _load_yaml(path.read_text(encoding="utf-8"))
                digest.update(str(path.relative_to(root)).encode() + b"\0" + _yaml_digest(document).encode())
    return digest.hexdigest()[:16]


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


def story_sources(root: Path | None = None) -> list[str]:
    """Every source table of the project but the lexicon tables, as `source:<source>.<table>`: the raw rows that
    land between builds and the build's bookkeeping. A node that descends from none of them reads only the lexicon
    and the seeds, whose contents are in the fingerprint: with the fingerprint unchanged its rows are too."""
    root = root or project_root()
    found = []
    for path in sorted((root / "models").rglob("*.yml")):
        document = _load_yaml(path.read_text(encoding="utf-8")) or {}
        for source in document.get("sources") or []:
            for table in source.get("tables") or []:
                if table["name"] not in LEXICON_TABLES:
                    found.append(f"source:{source['name']}.{table['name']}")
    return found


def unit_tests_unchanged(stored: dict[str, Any] | None, current: dict[str, Any]) -> bool:
    return stored is not None and stored.get(UNIT_TESTS) == current[UNIT_TESTS]


def stored_fingerprint(connection: duckdb.DuckDBPyConnection) -> dict[str, Any] | None:
    try:
        row = connection.execute("select parts from meta.build_fingerprint").fetchone()
    except duckdb.CatalogException:
        return None
    return json.loads(row[0]) if row else None


def unfinished_build_note(connection: duckdb.DuckDBPyConnection) -> str | None:
    """A warning for a reader when the warehouse's last `lfh build` did not complete: the fingerprint table is there
    (lfh build made it) but empty (cleared at the start, stored only at the end), and marts exist. The marts may
    then hold rows of two builds. None otherwise, and for warehouses never built by `lfh build` (no table)."""
    try:
        built = connection.execute("select count(*) from meta.build_fingerprint").fetchone()[0]
        marts = connection.execute(
            "select count(*) from duckdb_tables() where schema_name = 'marts'").fetchone()[0]
    except duckdb.CatalogException:
        return None
    if built or not marts:
        return None
    return ("warning: the last build of this warehouse did not finish (it failed, was stopped, or built a "
            "selection): its marts may mix rows of two builds. Run `lfh build` to complete it.")


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
              "code": "the models' or macros' SQL", "project": "dbt_project.yml (besides its vars)",
              "config": "a model, seed or source config in the YAML files"}
    changed += [f"{label} changed" for key, label in labels.items() if stored.get(key) != current[key]]
    old_engine, new_engine = stored.get("engine") or {}, current["engine"]
    for package in sorted(set(old_engine) | set(new_engine)):
        if old_engine.get(package) != new_engine.get(package):
            changed.append(f"{package} {old_engine.get(package, 'unknown')} -> {new_engine.get(package, 'absent')}")
    return changed
