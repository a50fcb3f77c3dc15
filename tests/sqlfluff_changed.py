"""sqlfluff for the developer's loop (`make check`): lint only the models whose lint result could have changed since
they last passed. `make test` and `make sqllint` still lint every model.

What decides a model's lint result is the SQL sqlfluff's dbt templater gives it (dbt's compiled SQL), its source
text, the sqlfluff configuration and the tools' versions; each model's key is a hash of exactly those, its
compiled SQL taken from one `dbt compile` of the models (a few seconds, against minutes for sqlfluff's own compile
and parse of every model: the correction models compile to about 100 KB each). A model whose key is in the cache
passed with that very input, so linting it again would give the same answer; the others are linted, and the ones
that pass join the cache (target/sqlfluff-passed.json). Delete that file, or run `make sqllint`, to lint all.

Usage: python tests/sqlfluff_changed.py [--all]  (LFH_DB names a scratch DuckDB file for the dbt templater, never
the warehouse; the Makefile sets it). --all lints every model (`make test`) and fills the cache with those that
passed. Exit status: sqlfluff's, 0 when nothing needs linting.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "target" / "sqlfluff-passed.json"
COMPILE_TARGET = "target/sqlfluff-compile"  # under the project root
# what else decides a lint result besides a model's own SQL: sqlfluff's configuration and the tools' versions
CONFIG_FILES = (".sqlfluff", ".sqlfluffignore")
TOOLS = ("sqlfluff", "sqlfluff-templater-dbt", "dbt-core", "dbt-duckdb")
PROJECT_NAME_FALLBACK = "laissez_faire"


def shared_key(root: Path) -> str:
    """The hash of everything every model's lint result depends on besides its own SQL."""
    digest = hashlib.sha256()
    for name in CONFIG_FILES:
        path = root / name
        digest.update(name.encode() + b"\0" + (path.read_bytes() if path.is_file() else b"") + b"\0")
    for tool in TOOLS:
        try:
            digest.update(f"{tool}=={version(tool)}\0".encode())
        except Exception:  # noqa: BLE001 (a tool not installed: its absence is part of the key)
            digest.update(f"{tool} absent\0".encode())
    return digest.hexdigest()


def model_key(shared: str, source: bytes, compiled: bytes | None) -> str:
    """One model's key: the shared key, its source text and dbt's compiled SQL (None: dbt compiled nothing for it,
    e.g. a disabled model, so its key never matches a clean lint of compiled SQL)."""
    digest = hashlib.sha256(shared.encode() + b"\0" + source + b"\0")
    digest.update(b"no compiled sql" if compiled is None else compiled)
    return digest.hexdigest()


def _project_name(root: Path) -> str:
    for line in (root / "dbt_project.yml").read_text(encoding="utf-8").splitlines():
        if line.startswith("name:"):
            return line.split(":", 1)[1].strip().strip("'\"")
    return PROJECT_NAME_FALLBACK


def compile_models(root: Path) -> Path:
    """dbt compile of every model into COMPILE_TARGET (a target folder of its own, so dbt's partial parsing makes
    the next run cheap); returns the folder holding the compiled models."""
    binary = Path(sys.executable).parent / "dbt"
    command = [str(binary), "compile", "--select", "resource_type:model", "--project-dir", str(root),
               "--profiles-dir", str(root), "--target-path", str(root / COMPILE_TARGET), "--quiet"]
    environment = {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
                   "DBT_LOG_PATH": str(root / COMPILE_TARGET / "logs")}
    environment.setdefault("LFH_DB", str(root / "target" / "sqlfluff.duckdb"))
    result = subprocess.run(command, cwd=root, env=environment, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"dbt compile failed, so sqlfluff cannot lint either:\n{result.stdout}{result.stderr}")
    return root / COMPILE_TARGET / "compiled" / _project_name(root) / "models"


def model_keys(root: Path, compiled_root: Path | None = None) -> dict[str, str]:
    """Every model file (relative path) and its key."""
    compiled_root = compiled_root if compiled_root is not None else compile_models(root)
    shared = shared_key(root)
    keys = {}
    for path in sorted((root / "models").rglob("*.sql")):
        relative = path.relative_to(root / "models")
        compiled = compiled_root / relative
        keys[str(path.relative_to(root))] = model_key(shared, path.read_bytes(),
                                                      compiled.read_bytes() if compiled.is_file() else None)
    return keys


def read_cache(path: Path) -> dict[str, str]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def lint(files: list[str], root: Path) -> tuple[int, set[str]]:
    """sqlfluff lint of the files, each violation printed as path:line:column: code description; returns sqlfluff's
    exit status and the files that passed."""
    report = root / "target" / "sqlfluff-changed.json"
    report.unlink(missing_ok=True)
    binary = Path(sys.executable).parent / "sqlfluff"
    environment = {**os.environ}
    environment.setdefault("LFH_DB", str(root / "target" / "sqlfluff.duckdb"))
    status = subprocess.run([str(binary), "lint", "--format", "json", "--write-output", str(report), *files],
                            cwd=root, env=environment, check=False).returncode
    try:
        results = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return status or 1, set()
    for item in results:  # the JSON report replaces sqlfluff's own human one: print it the same way
        for violation in item["violations"]:
            print(f"{item['filepath']}:{violation.get('start_line_no')}:{violation.get('start_line_pos')}: "
                  f"{violation.get('code')} {violation.get('description')}")
    passed = {str(Path(item["filepath"]).resolve().relative_to(root)) for item in results if not item["violations"]}
    return status, passed & set(files)


def main(arguments: list[str]) -> int:
    root, cache_file = ROOT, CACHE
    keys = model_keys(root)
    cache = {} if "--all" in arguments else read_cache(cache_file)
    stale = [path for path, key in keys.items() if cache.get(path) != key]
    if not stale:
        print(f"sqlfluff: all {len(keys)} models unchanged since they last passed ({cache_file.name})")
        return 0
    print(f"sqlfluff: linting {len(stale)} of {len(keys)} models (the rest unchanged since they last passed)")
    status, passed = lint(stale, root)
    kept = {path: key for path, key in cache.items() if keys.get(path) == key}
    kept.update({path: keys[path] for path in passed})
    cache_file.parent.mkdir(parents=True, exist_ok=True)
    cache_file.write_text(json.dumps(kept, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"sqlfluff: {len(passed)} of the {len(stale)} linted models passed")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
