"""The repository stands on its own: a reader has only a clone.

No text under version control (code, SQL, docs, tests, configs, seeds) may cite an issue or pull-request number
(a clone has no issues), a private note, or an absolute path of a particular machine; the method is cited where it
is, docs/METHOD.md (not a bare "METHOD.md" or "METHOD §", which named a file outside the repository); and the folder
of the data from outside the repository (`../shared`) is named only where docs/DATA.md says it is (docs/DATA.md, the
README's commands, and tests/conftest.py, which reads it). Each finding names the file, line and what to write
instead.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from lfh.paths import project_root

ROOT = project_root()
THIS_FILE = Path(__file__).resolve().relative_to(ROOT).as_posix()
# Where the outside data folder may be named (docs/DATA.md names its files and their public origin).
SHARED_FOLDER_ALLOWED = {"docs/DATA.md", "README.md", "tests/conftest.py"}
BINARY_SUFFIXES = {".xlsx", ".parquet", ".duckdb", ".png", ".jpg", ".gz", ".zip", ".pkl", ".ico", ".woff", ".woff2"}
# Folders a checkout may hold that are not the project's text (fallback walk without git).
SKIPPED_DIRS = {".git", ".venv", "target", "logs", "warehouse", "data", "reports", ".cache", "dbt_packages",
                "__pycache__", ".pytest_cache", ".ruff_cache", "node_modules", "build", "dist"}

# (name, pattern, what to write instead). Built so that this file's own patterns do not match themselves.
RULES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("issue number", re.compile(r"\b(?:issues?|PR|pull request)\s?#?\d+", re.IGNORECASE),
     "say what the change or rule is, not which issue asked for it"),
    ("issue number", re.compile(r"(?:^|[\s(\[])#\d{1,5}\b"),
     "say what the change or rule is, not which issue asked for it"),
    ("private note", re.compile(r"\bnotes?/[\w.-]+\.(?:md|txt)\b|/team/|/coord/", re.IGNORECASE),
     "state the fact itself here or in a doc of the repository"),
    ("private note", re.compile(r"\(u\d{1,3}\)"),
     "state the fact itself here or in a doc of the repository"),
    ("machine path", re.compile(r"(?<![\w.~-])/(?:work|tmp|home|Users|scratch)/"),
     "use a path relative to the clone, or a placeholder such as DIR"),
    ("method citation", re.compile(r"(?<![\w/])METHOD(?:\.md)?\s*(?:§|section\b)|(?<!docs/)(?<![\w/])METHOD\.md\b"),
     "cite the method as docs/METHOD.md §N"),
)
SHARED_FOLDER = re.compile(r"\.\./shared\b")


def _tracked_files() -> list[str]:
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60)
        return [name for name in listed.stdout.decode("utf-8").split("\0") if name]
    except (OSError, subprocess.SubprocessError):
        found = []
        for path in ROOT.rglob("*"):
            relative = path.relative_to(ROOT)
            if path.is_file() and not SKIPPED_DIRS.intersection(relative.parts[:-1]):
                found.append(relative.as_posix())
        return found


def _texts() -> list[tuple[str, str]]:
    texts = []
    for name in _tracked_files():
        path = ROOT / name
        if name == THIS_FILE or path.suffix.lower() in BINARY_SUFFIXES or not path.is_file():
            continue
        try:
            texts.append((name, path.read_text(encoding="utf-8")))
        except UnicodeDecodeError:
            continue
    return texts


def findings(texts: list[tuple[str, str]]) -> list[str]:
    """Every line that breaks a rule, as 'file:line: what (advice): text'."""
    found = []
    for name, text in texts:
        for number, line in enumerate(text.splitlines(), start=1):
            for what, pattern, advice in RULES:
                if pattern.search(line):
                    found.append(f"{name}:{number}: {what} ({advice}): {line.strip()[:160]}")
            if name not in SHARED_FOLDER_ALLOWED and SHARED_FOLDER.search(line):
                found.append(f"{name}:{number}: the outside data folder (name docs/DATA.md instead): "
                             f"{line.strip()[:160]}")
    return found


def test_the_repository_cites_no_issue_note_or_machine_path() -> None:
    texts = _texts()
    assert len(texts) > 100, f"only {len(texts)} text files found under {ROOT.name}: is this a checkout?"
    problems = findings(texts)
    assert not problems, f"{len(problems)} line(s) a reader of a clone cannot follow:\n" + "\n".join(problems)


@pytest.mark.parametrize("line", [
    "# see issue 22 for the measurements",
    "Issue #7: the fix",
    "fixed in PR 12",
    "as planned in (#33)",
    "read /work/team/notes/formula.md first",
    "the compiled SQL (u22)",
    "LFH_DB=/tmp/x/lfh.duckdb lfh build",
    "the checkout is /home/alice/lfh",
    "tests read ../shared/data",
    "the rule of METHOD.md §4.4",
    "METHOD §9 exactly",
    "per METHOD.md section 1",
])
def test_each_kind_is_caught(line: str) -> None:
    assert findings([("docs/EXAMPLE.md", line)])


@pytest.mark.parametrize("line", [
    "color:#222;margin:0",
    "docs/METHOD.md §4.4 exactly",
    "[docs/METHOD.md](docs/METHOD.md); the METHOD comments read better",
    "tmp_path / 'lfh.duckdb'",
    "a path relative to the clone: warehouse/lfh.duckdb",
    "the 5 issues of the labeler",
])
def test_ordinary_text_passes(line: str) -> None:
    assert not findings([("docs/EXAMPLE.md", line)])


def test_the_outside_data_folder_is_allowed_where_it_is_documented() -> None:
    assert not findings([("docs/DATA.md", "put them in ../shared/data/")])
    assert "../shared/data/" in (ROOT / "docs" / "DATA.md").read_text(encoding="utf-8")


def method_sections() -> set[str]:
    """The section numbers of docs/METHOD.md's headings: '1'..'9' and the steps '4.1'..'4.6'."""
    method = (ROOT / "docs" / "METHOD.md").read_text(encoding="utf-8")
    return set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", method, flags=re.MULTILINE))


def missing_sections(texts: list[tuple[str, str]], sections: set[str]) -> list[str]:
    """Every citation 'docs/METHOD.md §N' whose section N has no heading, as 'file:line: §N'."""
    return sorted(f"{name}:{number}: §{section}" for name, text in texts
                  for number, line in enumerate(text.splitlines(), start=1)
                  for section in re.findall(r"docs/METHOD\.md §(\d+(?:\.\d+)?)", line)
                  if section not in sections)


def test_every_cited_method_section_exists() -> None:
    sections = method_sections()
    assert {"1", "4", "4.1", "4.6", "9"} <= sections, f"docs/METHOD.md's numbered headings not found: {sections}"
    missing = missing_sections(_texts(), sections)
    assert not missing, "citations of sections docs/METHOD.md does not have:\n" + "\n".join(missing)


def test_a_citation_of_a_missing_section_is_caught() -> None:
    texts = [("docs/EXAMPLE.md", "as docs/METHOD.md §4.4 says, and docs/METHOD.md §10 and §4.7")]
    assert missing_sections(texts, method_sections()) == ["docs/EXAMPLE.md:1: §10"]
