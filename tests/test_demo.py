"""`lfh demo` end to end on a tiny simulated corpus (the lexicon is the small test one, already in the
warehouse, so the demo skips `lfh lexicon` and needs no network): it says the data are simulated, writes the
report, publishes when `lfh publish` exists, and the three SQL queries it prints run on the warehouse."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from fixtures_simulate import write_test_lexicon

from lfh.cli.demo import demo

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("demo")
    db_path = root / "warehouse" / "lfh.duckdb"
    write_test_lexicon(db_path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LFH_DB", str(db_path))
        outcome = CliRunner().invoke(demo, ["--stories-per-prompt", "2", "--landing", str(root / "landing"),
                                            "--reports", str(root / "reports")])
    assert outcome.exit_code == 0, f"{outcome.output[-4000:]}\n{outcome.exception!r}"
    return root, outcome.output


def test_demo_says_the_data_are_simulated_and_where_to_look(demo_run: tuple[Path, str]) -> None:
    root, output = demo_run
    assert "SIMULATED" in output
    assert "lexicon: already in" in output
    assert str(root / "reports" / "index.html") in output
    assert (root / "reports" / "index.html").stat().st_size > 50_000
    assert (root / "landing" / ".planted_truth.json").is_file()
    assert (root / "landing" / "SIMULATED.txt").is_file()  # `lfh ingest` skips the folder unless --simulated
    # the standalone figures carry the mark too, not only the page's banner
    assert "SIMULATED DATA" in (root / "reports" / "figures" / "omission-race.svg").read_text(encoding="utf-8")


def test_demo_publishes_when_publish_exists(demo_run: tuple[Path, str]) -> None:
    root, output = demo_run
    assert "published" in output
    assert any((root / "warehouse" / "published").rglob("marts.duckdb"))
    manifest = json.loads((root / "warehouse" / "published" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["simulated"] is True and manifest["simulated_stories"] > 0
    with duckdb.connect(str(root / "warehouse" / "published" / "marts.duckdb"), read_only=True) as copy:
        assert copy.execute("select bool_and(is_simulated) from marts.dim_stories").fetchone() == (True,)


def test_the_three_example_queries_run(demo_run: tuple[Path, str]) -> None:
    root, output = demo_run
    queries = re.findall(r"^-- .*?\n(select .*?);$", output, flags=re.MULTILINE | re.DOTALL)
    assert len(queries) == 3
    connection = duckdb.connect(str(root / "warehouse" / "lfh.duckdb"), read_only=True)
    try:
        rows = [connection.sql(query).fetchall() for query in queries]
    finally:
        connection.close()
    assert rows[0] and rows[2], "the omission and top-name queries return nothing"


def test_demo_refuses_a_warehouse_holding_other_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db_path = tmp_path / "lfh.duckdb"
    connection = duckdb.connect(str(db_path))
    connection.execute("create schema raw; create table raw.stories (source_file varchar)")
    connection.execute("insert into raw.stories values ('/data/ChatGPT3_5_Bias_Benchmark.xlsx')")
    connection.close()
    monkeypatch.setenv("LFH_DB", str(db_path))
    outcome = CliRunner().invoke(demo, ["--landing", str(tmp_path / "landing")])
    assert outcome.exit_code != 0
    assert "LFH_DB=warehouse/demo.duckdb" in outcome.output


def test_report_reads_the_published_copy(demo_run: tuple[Path, str]) -> None:
    from lfh.report.write import write_report

    root, _output = demo_run
    page = write_report(root / "warehouse" / "published" / "marts.duckdb", root / "reports-published")
    # the published copy gives the same figures as the demo's own report, built from the warehouse, but the
    # hand-label plan: it reads the warehouse's intermediate relations, which a published copy (marts only) lacks,
    # and says so in its empty note
    published = page.read_text(encoding="utf-8")
    figures = published.count('class="report-figure"')
    own = (root / "reports" / "index.html").read_text(encoding="utf-8")
    assert 'id="hand-label-plan"' in own and 'id="hand-label-plan"' in published
    assert figures == own.count('class="report-figure"') - 1
    assert figures >= 9  # the eight measure figures and the occupations against their workforce


def test_the_demo_does_not_load_the_openai_sdk() -> None:
    """Simulating and describing runs need no endpoint: the SDK (about 1 s of imports, more on a fresh venv, where
    each module is compiled on first import) loads only for the commands that call one."""
    script = "import sys, lfh.cli.demo; print(sorted({m.split('.')[0] for m in sys.modules} & {'openai', 'httpx2'}))"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]", result.stdout
