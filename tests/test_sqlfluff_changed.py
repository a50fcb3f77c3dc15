"""The developer loop's sqlfluff cache (tests/sqlfluff_changed.py, `make check`): a model is linted again whenever
its compiled SQL, its source, sqlfluff's configuration or a tool's version changed, and skipped only when that very
input passed before. dbt and sqlfluff are stood in for here; `make test` lints every model for real."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlfluff_changed as cache


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

    (compiled / "two.sql").unlink()  # dbt compiled nothing for it (e.g. disabled): never taken as passed
    assert cache.model_key("s", b"x", None) != cache.model_key("s", b"x", b"")


def test_only_changed_or_failed_models_are_linted_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = _project(tmp_path)
    monkeypatch.setattr(cache, "ROOT", tmp_path)
    monkeypatch.setattr(cache, "CACHE", tmp_path / "target" / "passed.json")
    monkeypatch.setattr(cache, "compile_models", lambda root: compiled)
    linted: list[list[str]] = []
    failing = {"models/two.sql"}

    def lint(files: list[str], root: Path) -> tuple[int, set[str]]:
        assert root == tmp_path
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
