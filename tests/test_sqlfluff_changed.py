"""sqlfluff over the models (tests/sqlfluff_changed.py). The developer loop's cache (`make check`): a model is linted
again whenever its compiled SQL, its source, sqlfluff's configuration, the stand-ins, the script or a tool's version
changed, and skipped only when that very input passed before. The stand-ins: the lint project replaces exactly the
stood-in macro. dbt and sqlfluff are stood in for in the fast tests; the slow one plants violations in a copy of a
correction model and its macros and lints it for real, as `make test` does."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import sqlfluff_changed as cache

ROOT = Path(__file__).resolve().parent.parent


def _project(root: Path) -> Path:
    (root / "models" / "a").mkdir(parents=True)
    (root / "models" / "a" / "one.sql").write_text("select {{ var('x') }} as one\n")
    (root / "models" / "two.sql").write_text("select 2 as two\n")
    (root / ".sqlfluff").write_text("[sqlfluff]\ndialect = duckdb\n")
    compiled = root / "compiled"
    (compiled / "a").mkdir(parents=True)
    (compiled / "a" / "one.sql").write_text("select 1 as one\n")
    (compiled / "two.sql").write_text("select 2 as two\n")
    return compiled


def test_a_key_changes_with_compiled_sql_source_config_and_versions(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = _project(tmp_path)
    before = cache.model_keys(tmp_path, compiled)
    assert set(before) == {"models/a/one.sql", "models/two.sql"}
    assert cache.model_keys(tmp_path, compiled) == before  # stable

    (compiled / "a" / "one.sql").write_text("select 3 as one\n")  # a macro or var changed what dbt compiles
    assert cache.model_keys(tmp_path, compiled)["models/a/one.sql"] != before["models/a/one.sql"]
    (compiled / "a" / "one.sql").write_text("select 1 as one\n")

    (tmp_path / "models" / "two.sql").write_text("select 2 as two  \n")  # source only (Jinja spacing, comments)
    changed = cache.model_keys(tmp_path, compiled)
    assert changed["models/two.sql"] != before["models/two.sql"]
    assert changed["models/a/one.sql"] == before["models/a/one.sql"]
    (tmp_path / "models" / "two.sql").write_text("select 2 as two\n")

    (tmp_path / ".sqlfluff").write_text("[sqlfluff]\ndialect = duckdb\nmax_line_length = 80\n")
    assert all(cache.model_keys(tmp_path, compiled)[path] != key for path, key in before.items())
    (tmp_path / ".sqlfluff").write_text("[sqlfluff]\ndialect = duckdb\n")

    monkeypatch.setattr(cache, "version", lambda tool: "9.9" if tool == "sqlfluff" else "1.0")
    assert all(cache.model_keys(tmp_path, compiled)[path] != key for path, key in before.items())
    monkeypatch.undo()

    stand_ins = tmp_path / cache.STAND_INS
    stand_ins.mkdir(parents=True)
    (stand_ins / "big.sql").write_text("{% macro big(x) -%} select * from {{ x }} {%- endmacro %}\n")
    assert all(cache.model_keys(tmp_path, compiled)[path] != key for path, key in before.items())
    shutil.rmtree(stand_ins)
    assert cache.model_keys(tmp_path, compiled) == before

    (compiled / "two.sql").unlink()  # dbt compiled nothing for it (e.g. disabled): never taken as passed
    assert cache.model_key("s", b"x", None) != cache.model_key("s", b"x", b"")


def test_only_changed_or_failed_models_are_linted_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = _project(tmp_path)
    monkeypatch.setattr(cache, "ROOT", tmp_path)
    monkeypatch.setattr(cache, "CACHE", tmp_path / "target" / "passed.json")
    monkeypatch.setattr(cache, "compile_models", lambda root: compiled)
    linted: list[list[str]] = []
    failing = {"models/two.sql"}

    def lint(files: list[str], root: Path, lint_root: Path | None = None) -> tuple[int, set[str]]:
        assert root == tmp_path and lint_root is None  # no stand-ins in this project
        linted.append(sorted(files))
        return (1 if failing & set(files) else 0), set(files) - failing

    monkeypatch.setattr(cache, "lint", lint)
    assert cache.main([]) == 1  # first run: everything, one model fails
    assert cache.main([]) == 1  # the failing one again, the passing one not
    failing.clear()
    assert cache.main([]) == 0
    assert cache.main([]) == 0  # nothing changed: nothing linted
    (compiled / "a" / "one.sql").write_text("select 4 as one\n")
    assert cache.main([]) == 0
    assert cache.main(["--all"]) == 0  # make test: every model, whatever the cache says
    assert linted == [["models/a/one.sql", "models/two.sql"], ["models/two.sql"], ["models/two.sql"],
                      ["models/a/one.sql"], ["models/a/one.sql", "models/two.sql"]]


def _macro_project(root: Path) -> None:
    (root / "models").mkdir(parents=True)
    (root / "models" / "small.sql").write_text("select 1 as one\n")
    (root / "seeds").mkdir()
    (root / "macros" / "stats").mkdir(parents=True)
    (root / "macros" / "stats" / "big.sql").write_text(
        "{% macro helper() -%} 1 {%- endmacro %}\n\n"
        "{#- the real one -#}\n{% macro big(x, keys) -%}\n    select {{ helper() }} from {{ x }}\n{%- endmacro %}\n\n"
        "{% macro bigger(x) -%} {{ big(x, []) }} {%- endmacro %}\n")
    (root / "dbt_project.yml").write_text("name: demo\nmodel-paths: [models]\nseed-paths: [seeds]\n"
                                          "macro-paths: [macros]\n")
    (root / "profiles.yml").write_text("demo: {}\n")
    (root / cache.STAND_INS).mkdir(parents=True)
    (root / cache.STAND_INS / "big.sql").write_text("{#- lint only -#}\n{% macro big(x, keys) -%} select 0 "
                                                    "{%- endmacro %}\n")


def test_the_lint_project_replaces_exactly_the_stood_in_macro(tmp_path: Path) -> None:
    _macro_project(tmp_path)
    blocks = cache.stand_ins(tmp_path)
    assert blocks == {"big": "{% macro big(x, keys) -%} select 0 {%- endmacro %}"}
    lint_root = cache.build_lint_project(tmp_path, blocks)
    macros = (lint_root / "macros" / "stats" / "big.sql").read_text()
    assert "select 0" in macros and "select {{ helper() }}" not in macros
    assert "{% macro helper() -%} 1 {%- endmacro %}" in macros and "{{ big(x, []) }}" in macros  # the others kept
    assert (tmp_path / "macros" / "stats" / "big.sql").read_text().count("select {{ helper() }}") == 1  # untouched
    assert (lint_root / "models").resolve() == (tmp_path / "models").resolve()
    assert (lint_root / "models" / "small.sql").read_text() == "select 1 as one\n"
    assert (lint_root / "dbt_project.yml").resolve() == (tmp_path / "dbt_project.yml").resolve()
    assert "project_dir = ./" in (lint_root / "sqlfluff-project.cfg").read_text()

    (tmp_path / cache.STAND_INS / "gone.sql").write_text("{% macro gone() -%} 1 {%- endmacro %}\n")
    with pytest.raises(SystemExit, match="gone"):  # a stand-in for a macro the project no longer has
        cache.build_lint_project(tmp_path, cache.stand_ins(tmp_path))
    (tmp_path / cache.STAND_INS / "gone.sql").write_text("{% macro other() -%} 1 {%- endmacro %}\n")
    with pytest.raises(SystemExit, match="exactly one macro"):
        cache.stand_ins(tmp_path)


CORRECTION_MODEL = "models/intermediate/correction/int_gender_shares_corrected.sql"


@pytest.mark.slow
def test_a_correction_model_reports_what_the_full_lint_reported(tmp_path: Path) -> None:
    """A copy of the project with violations planted: (a) an upper-case keyword in the model's own text, reported
    by the full lint (line 14, CP01); (b) one in the stood-in macro's expansion, which the full lint did not report
    (a templated region); (c) a stray comma in that expansion: the full lint reported sqlfluff's parse error there,
    this lint does not parse expansions (the engines that run them judge them: tests/sqlfluff_changed.py), so
    only (a) is reported. What the full lint reports was measured on sqlfluff 4.4.0 by linting such copies with the
    full dbt-templated lint (`sqlfluff lint models`)."""
    project = tmp_path / "project"
    project.mkdir()
    for name in ("models", "macros", "seeds", "tests/dbt", cache.STAND_INS):
        shutil.copytree(ROOT / name, project / name)
    for name in ("dbt_project.yml", "profiles.yml", ".sqlfluff", "tests/sqlfluff_changed.py"):
        shutil.copy(ROOT / name, project / name)
    model = project / CORRECTION_MODEL
    source = model.read_text(encoding="utf-8")
    lines = source.splitlines(keepends=True)
    assert lines[13] == "    select\n"  # the units CTE's select
    lines[13] = "    SELECT\n"
    model.write_text("".join(lines), encoding="utf-8")
    macros = project / "macros" / "stats" / "ppi_composite.sql"
    text = macros.read_text(encoding="utf-8")
    planted = "        case when has_pool = 1 then 'composite' else 'cell' end as rectifier_source,\n"
    assert text.count(planted) == 1
    macros.write_text(text.replace(planted, planted.replace("case", "CASE").replace(",\n", ",,\n")),
                      encoding="utf-8")

    environment = {**os.environ, "LFH_DB": str(project / "target" / "sqlfluff.duckdb")}
    result = subprocess.run([sys.executable, "tests/sqlfluff_changed.py", CORRECTION_MODEL], cwd=project,
                            env=environment, capture_output=True, text=True, check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert f"{CORRECTION_MODEL}:14:5: CP01" in output  # (a)
    reported = [line for line in output.splitlines() if line.startswith(CORRECTION_MODEL)]
    assert len(reported) == 1, output  # (b) not reported, as before; (c) left to the engines
    assert not json.loads((project / "target" / "sqlfluff-passed.json").read_text())  # nothing passed
