"""The models' SQL source stays within 120 columns, as the Python does (ruff). sqlfluff checks the rest of the style
(`make sqllint`), but its line-length rule judges the SQL as dbt renders it, where a macro call becomes one long
line, so the limit on the text people read and edit is checked here."""

from __future__ import annotations

import pytest

from lfh.paths import project_root

MAX_LINE_LENGTH = 120
SQL_FILES = sorted((project_root() / "models").rglob("*.sql"))


@pytest.mark.parametrize("path", SQL_FILES, ids=lambda path: str(path.relative_to(project_root())))
def test_sql_lines_fit_in_120_columns(path) -> None:
    long_lines = [number for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
                  if len(line) > MAX_LINE_LENGTH]
    assert not long_lines, f"{path.name}: lines {long_lines} are longer than {MAX_LINE_LENGTH} characters"
