"""sqlfluff over the models, for `make check` (only the models whose lint result could have changed since they last
passed), `make test` and `make sqllint` (--all: every model).

What decides a model's lint result is the SQL sqlfluff's dbt templater gives it (dbt's compiled SQL), its source
text, the sqlfluff configuration (with the stand-ins below and this script) and the tools' versions; each model's key
is a hash of exactly those, its compiled SQL taken from one `dbt compile` of the models (a few seconds). A model whose
key is in the cache passed with that very input, so linting it again would give the same answer; the others are
linted, and the ones that pass join the cache (target/sqlfluff-passed.json). Delete that file, or use --all, to lint
all.

Stand-ins (tests/sqlfluff_stand_ins/<macro>.sql, one lint-only macro each). A few macros expand to 60-75 KB of
SQL in the model that calls them (ppi_corrected_shares: the three correction models). That expansion is one templated
region of the model, and sqlfluff reports no style violation in a templated region (ignore_templated_areas, on by
default): a model is judged by its own text. Parsing and linting the expansion only to discard what it finds cost
about 110 s of CPU and 5 GB per model. So the models are linted in a copy of this dbt project whose macros are the
same except for the stood-in ones (target/sqlfluff-lint: models, seeds and configuration linked, macros copied, the
stood-in macro's block replaced): the models' own text is rendered and judged as before, against a small expansion
that keeps what their text can be judged by (it starts with `select` and reads the relation passed in). The one
thing sqlfluff reported inside an expansion, a parse error (PRS), said only whether sqlfluff's own grammar could read
the generated SQL (once, not at all: "maximum parse depth exceeded" on nested selects DuckDB and Spark run): whether
that SQL is valid is decided by the engines that run it, every build test on DuckDB and tests/test_spark.py on Spark,
and they do. Parsing the real expansions only for that cost about 48 s of CPU per model (145 s of `make test`), so
they are no longer parsed. The rules that judge templated regions (targets_templated: LT02 and LT05, excluded in
.sqlfluff; LT12/LT13, the file's end and start; JJ01, the source's Jinja tags; CV10, off for DuckDB) see the same
source and file ends. tests/test_sqlfluff_changed.py plants violations in a copy of a correction model and its macros
and checks that what sqlfluff reported in the model's own text is reported and nothing from the expansion.

Usage: python tests/sqlfluff_changed.py [--all] [models/...sql ...]  (LFH_DB names a scratch DuckDB file for the dbt
templater, never the warehouse; the Makefile sets it). --all lints every model (`make test`) and fills the cache with
those that passed; model paths given lint those, whatever the cache says. Exit status: 0 when every linted model
passed (or nothing needed linting), else sqlfluff's status (1 when a parse check alone failed).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "target" / "sqlfluff-passed.json"
COMPILE_TARGET = "target/sqlfluff-compile"  # under the project root
LINT_PROJECT = "target/sqlfluff-lint"  # the copy of the dbt project with the stand-ins, under the project root
STAND_INS = "tests/sqlfluff_stand_ins"
# what else decides a lint result besides a model's own SQL: sqlfluff's configuration and the tools' versions
CONFIG_FILES = (".sqlfluff", ".sqlfluffignore")
TOOLS = ("sqlfluff", "sqlfluff-templater-dbt", "dbt-core", "dbt-duckdb")
PROJECT_NAME_FALLBACK = "laissez_faire"
# dbt_project.yml's folders that the lint project links (macro-paths are copied, with the stand-ins)
LINKED_PATH_KEYS = ("model-paths", "seed-paths", "test-paths", "analysis-paths", "snapshot-paths", "docs-paths")


def stand_in_files(root: Path) -> list[Path]:
    folder = root / STAND_INS
    return sorted(folder.glob("*.sql")) if folder.is_dir() else []


def shared_key(root: Path) -> str:
    """The hash of everything every model's lint result depends on besides its own SQL: the sqlfluff configuration,
    the stand-ins, this script (how a model is linted) and the tools' versions."""
    digest = hashlib.sha256()
    for name in CONFIG_FILES:
        path = root / name
        digest.update(name.encode() + b"\0" + (path.read_bytes() if path.is_file() else b"") + b"\0")
    for path in stand_in_files(root):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(Path(__file__).read_bytes() + b"\0")
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
    the next run cheap); returns the folder holding the compiled models (the manifest is two levels up)."""
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


def macro_block(name: str) -> re.Pattern[str]:
    """A `{% macro name(...) %} ... {% endmacro %}` block, whitespace control included."""
    return re.compile(r"\{%-?\s*macro\s+" + re.escape(name) + r"\s*\(.*?\{%-?\s*endmacro\s*-?%\}", re.DOTALL)


def stand_ins(root: Path) -> dict[str, str]:
    """Each stood-in macro's name and its lint-only block (the file's one macro, named as the file)."""
    blocks = {}
    for path in stand_in_files(root):
        text = path.read_text(encoding="utf-8")
        found = macro_block(path.stem).findall(text)
        if len(found) != 1 or len(re.findall(r"\{%-?\s*macro\s", text)) != 1:
            raise SystemExit(f"{path}: a stand-in file defines exactly one macro, named as the file ({path.stem})")
        blocks[path.stem] = found[0]
    return blocks


def _project_paths(root: Path) -> dict[str, list[str]]:
    import yaml  # dbt's own dependency

    project = yaml.safe_load((root / "dbt_project.yml").read_text(encoding="utf-8"))
    defaults = {"model-paths": ["models"], "seed-paths": ["seeds"], "test-paths": ["tests"],
                "analysis-paths": ["analyses"], "snapshot-paths": ["snapshots"], "macro-paths": ["macros"]}
    return {key: list(project.get(key) or defaults.get(key, [])) for key in (*LINKED_PATH_KEYS, "macro-paths")}


def build_lint_project(root: Path, blocks: dict[str, str]) -> Path:
    """target/sqlfluff-lint: dbt_project.yml, profiles.yml and the project's folders linked, its macro folders copied
    with each stood-in macro's block replaced by its stand-in (each must be defined exactly once). Rebuilt every run;
    dbt's own target and logs of the lint project live inside it."""
    lint_root = root / LINT_PROJECT
    shutil.rmtree(lint_root, ignore_errors=True)
    lint_root.mkdir(parents=True)
    for name in ("dbt_project.yml", "profiles.yml", "packages.yml", "dependencies.yml", ".dbtignore"):
        if (root / name).exists():
            (lint_root / name).symlink_to(root / name)
    paths = _project_paths(root)
    for key in LINKED_PATH_KEYS:
        for folder in paths[key]:
            top = folder.split("/")[0]
            if (root / top).exists() and not (lint_root / top).exists():
                (lint_root / top).symlink_to(root / top)
    replaced = dict.fromkeys(blocks, 0)
    for folder in paths["macro-paths"]:
        if not (root / folder).is_dir():
            continue
        shutil.copytree(root / folder, lint_root / folder)
        for path in sorted((lint_root / folder).rglob("*.sql")):
            text = path.read_text(encoding="utf-8")
            new = text
            for name, block in blocks.items():
                new, count = macro_block(name).subn(lambda _match, block=block: block, new)
                replaced[name] += count
            if new != text:
                path.write_text(new, encoding="utf-8")
    wrong = {name: count for name, count in replaced.items() if count != 1}
    if wrong:
        raise SystemExit(f"{STAND_INS}: each stand-in replaces exactly one macro of the project's macro folders; "
                         f"found {wrong} definitions (a renamed or removed macro? remove or rename its stand-in)")
    # the dbt templater's project: this copy (paths in a sqlfluff config are relative to the file)
    (lint_root / "sqlfluff-project.cfg").write_text(
        "[sqlfluff:templater:dbt]\nproject_dir = ./\nprofiles_dir = ./\n", encoding="utf-8")
    return lint_root


def lint(files: list[str], root: Path, lint_root: Path | None = None) -> tuple[int, set[str]]:
    """sqlfluff lint of the files in the lint project (lint_root; the project itself when None), each violation
    printed as path:line:column: code description; returns sqlfluff's exit status and the files that passed."""
    report = root / "target" / "sqlfluff-changed.json"
    report.unlink(missing_ok=True)
    binary = Path(sys.executable).parent / "sqlfluff"
    environment = {**os.environ}
    environment.setdefault("LFH_DB", str(root / "target" / "sqlfluff.duckdb"))
    command = [str(binary), "lint", "--format", "json", "--write-output", str(report)]
    if lint_root is not None:
        command += ["--config", str(lint_root / "sqlfluff-project.cfg")]
        command += [str((lint_root / path).relative_to(root)) for path in files]
    else:
        command += files
    status = subprocess.run(command, cwd=root, env=environment, check=False).returncode
    try:
        results = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return status or 1, set()
    passed = set()
    for item in results:  # the JSON report replaces sqlfluff's own human one: print it the same way
        # the lint project links the models folder: the real path is the link's target
        path = str((root / item["filepath"]).resolve().relative_to(root))
        for violation in item["violations"]:
            print(f"{path}:{violation.get('start_line_no')}:{violation.get('start_line_pos')}: "
                  f"{violation.get('code')} {violation.get('description')}")
        if not item["violations"]:
            passed.add(path)
    return status, passed & set(files)


def main(arguments: list[str]) -> int:
    root, cache_file = ROOT, CACHE
    compiled_root = compile_models(root)
    keys = model_keys(root, compiled_root)
    chosen = [argument for argument in arguments if not argument.startswith("--")]
    unknown = sorted(set(chosen) - set(keys))
    if unknown:
        raise SystemExit(f"not a model file: {', '.join(unknown)}")
    cache = {} if "--all" in arguments or chosen else read_cache(cache_file)
    stale = [path for path, key in keys.items() if cache.get(path) != key and (not chosen or path in chosen)]
    if not stale:
        print(f"sqlfluff: all {len(keys)} models unchanged since they last passed ({cache_file.name})")
        return 0
    print(f"sqlfluff: linting {len(stale)} of {len(keys)} models (the rest unchanged since they last passed)")
    blocks = stand_ins(root)
    lint_root = build_lint_project(root, blocks) if blocks else None
    status, passed = lint(stale, root, lint_root)
    kept = {path: key for path, key in cache.items() if keys.get(path) == key}
    kept.update({path: keys[path] for path in passed})
    cache_file.parent.mkdir(parents=True, exist_ok=True)
    cache_file.write_text(json.dumps(kept, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"sqlfluff: {len(passed)} of the {len(stale)} linted models passed")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
