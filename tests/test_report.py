"""`lfh report` on a small simulated pipeline: one self-contained HTML file whose every figure renders in
headless Chromium with no console message, the figures saved as PNG and SVG, and a screenshot."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from PIL import Image, ImageStat

from lfh.cli.report import report
from lfh.report import write as report_writer
from lfh.report.write import write_report

pytestmark = pytest.mark.slow
CHROMIUM = "/usr/bin/chromium"
FIGURES_WITH_DATA = ("omission-race", "omission-gender", "omission-race-gender", "couples", "occupations",
                     "subordination", "median-racialized", "top-names", "name-coverage", "race-sensitivity",
                     "model-rankings-learning", "model-rankings-labor", "model-rankings-love")
LABELER_FIGURES = ("labeler-agreement", "labeler-confusion", "labeler-couples")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars"]
# Test-only probe appended to a copy of the page: it measures what the browser actually laid out.
PROBE = """<script>
window.addEventListener('load', () => {
  const result = [...document.querySelectorAll('svg.report-figure')].map(svg => {
    const box = svg.getBoundingClientRect();
    const texts = [...svg.querySelectorAll('text')].map(text => [text.textContent, text.getBoundingClientRect()])
      .filter(([content, rect]) => content.trim() && rect.width > 0);
    const overlaps = [];
    texts.forEach(([a, ra], i) => texts.slice(i + 1).forEach(([b, rb]) => {
      const dx = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left);
      const dy = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top);
      if (dx > 1 && dy > 1) overlaps.push([a, b]);
    }));
    return {id: svg.id, width: box.width, height: box.height, drawn: svg.querySelectorAll('path,use,text').length,
            xticks: [...svg.querySelectorAll('g[id^="xtick"] text')].map(text => text.textContent),
            overlaps: overlaps};
  });
  const out = document.createElement('pre'); out.id = 'probe'; out.textContent = JSON.stringify(result);
  document.body.appendChild(out);
});
</script></body>"""


@pytest.fixture(scope="module")
def report_dir(simulated_build: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`lfh report` of the shared simulated corpus (tests/conftest.py's simulated_build), written to this module's
    own folder."""
    reports = tmp_path_factory.mktemp("report") / "reports"
    write_report(simulated_build / "warehouse" / "lfh.duckdb", reports)
    return reports


def _chromium(user_dir: Path, *arguments: str) -> subprocess.CompletedProcess:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} missing: `make test` installs it (apt-get install -y chromium)")
    return subprocess.run([CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={user_dir}", *arguments],
                          capture_output=True, text=True, timeout=120, check=False)


def _laid_out(page: str, tmp_path: Path) -> dict[str, dict]:
    """What headless Chromium laid out for each figure of the page (PROBE), by figure id."""
    probe_page = tmp_path / "probe.html"
    probe_page.write_text(page.replace("</body>", PROBE), encoding="utf-8")
    dumped = _chromium(tmp_path / "profile-dom", "--virtual-time-budget=5000", "--dump-dom", probe_page.as_uri())
    match = re.search(r'<pre id="probe">(.*?)</pre>', dumped.stdout, flags=re.DOTALL)
    assert match, f"the probe did not run; chromium said:\n{dumped.stderr[-2000:]}"
    return {item["id"]: item for item in json.loads(match.group(1).replace("&quot;", '"'))}


def _console_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def test_report_is_one_self_contained_file(report_dir: Path) -> None:
    page = (report_dir / "index.html").read_text(encoding="utf-8")
    assert "<script" not in page and "<link" not in page and "<img" not in page
    # namespace declarations name a URI but fetch nothing; any other URL would need the network
    without_namespaces = re.sub(r'xmlns(:\w+)?="[^"]*"', "", page)
    assert not re.search(r"(https?:)?//[\w.-]+\.\w+/", without_namespaces.replace("file://", "")), \
        "the report refers to an external URL"
    assert "SIMULATED DATA" in page
    for key in FIGURES_WITH_DATA:
        assert f'id="fig-{key}"' in page, f"figure {key} missing from the page"
        assert (report_dir / "figures" / f"{key}.png").stat().st_size > 5_000
        assert (report_dir / "figures" / f"{key}.svg").read_text(encoding="utf-8").lstrip().startswith("<?xml")
    assert 'id="labeler-agreement"' in page and "No hand labels" in page
    assert 'id="corrected"' in page and 'id="fig-corrected"' not in page  # no hand labels: nothing corrected
    for key in ("labeler-confusion", "labeler-couples"):
        assert f'<section id="{key}">' in page and f'id="fig-{key}"' not in page


def test_every_figure_renders_in_headless_chromium(report_dir: Path, tmp_path: Path) -> None:
    laid_out = _laid_out((report_dir / "index.html").read_text(encoding="utf-8"), tmp_path)
    for key in FIGURES_WITH_DATA:
        figure = laid_out.get(f"fig-{key}")
        assert figure, f"figure {key} not in the rendered page"
        assert figure["width"] > 200 and figure["height"] > 100, f"figure {key} rendered at {figure}"
        assert figure["drawn"] > 20, f"figure {key} has almost nothing drawn: {figure}"
        assert len(figure["xticks"]) >= 2, f"figure {key} has no readable x tick labels: {figure['xticks']}"
        assert figure["overlaps"] == [], f"figure {key}: texts overlap in the browser: {figure['overlaps']}"
    ratio_ticks = set(laid_out["fig-omission-race"]["xticks"])
    assert "1" in ratio_ticks and ratio_ticks <= {"0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1", "2", "5", "10",
                                                  "20", "50", "100"}, ratio_ticks


def test_the_report_logs_no_console_message(report_dir: Path, tmp_path: Path) -> None:
    page = report_dir / "index.html"
    clean = _chromium(tmp_path / "profile-clean", "--enable-logging=stderr", "--v=0",
                      "--virtual-time-budget=3000", "--dump-dom", page.as_uri())
    assert _console_lines(clean.stderr) == []
    # control: the same capture does see a console error when a page makes one
    noisy = tmp_path / "noisy.html"
    noisy.write_text(page.read_text(encoding="utf-8").replace(
        "</body>", '<script>console.error("probe-error-42")</script></body>'), encoding="utf-8")
    control = _chromium(tmp_path / "profile-noisy", "--enable-logging=stderr", "--v=0",
                        "--virtual-time-budget=3000", "--dump-dom", noisy.as_uri())
    assert any("probe-error-42" in line for line in _console_lines(control.stderr))


def test_screenshot_shows_the_report(report_dir: Path, tmp_path: Path) -> None:
    screenshot = report_dir / "screenshot.png"
    _chromium(tmp_path / "profile-shot", "--window-size=1280,2400", f"--screenshot={screenshot}",
              (report_dir / "index.html").as_uri())
    assert screenshot.is_file(), "chromium wrote no screenshot"
    with Image.open(screenshot) as image:
        assert image.size == (1280, 2400)
        spread = ImageStat.Stat(image.convert("L")).stddev[0]
    assert spread > 10, f"the screenshot is nearly blank (grey-level spread {spread:.1f})"
    keep = Path(shutil.os.environ.get("LFH_KEEP_SCREENSHOT", "")) if shutil.os.environ.get(
        "LFH_KEEP_SCREENSHOT") else None
    if keep:
        shutil.copy(screenshot, keep)


def test_figures_rendered_side_by_side_are_the_bytes_rendered_in_turn(report_dir: Path, simulated_build: Path,
                                                                       tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The report renders its figures in forked processes (lfh.report.write._rendered); one process, in turn,
    must write the same files."""
    monkeypatch.setattr(report_writer, "RENDER_WORKERS", 1)
    in_turn = write_report(simulated_build / "warehouse" / "lfh.duckdb", tmp_path / "reports").parent
    written = sorted(path.relative_to(in_turn) for path in in_turn.rglob("*") if path.is_file())
    side_by_side = sorted(path.relative_to(report_dir) for path in (report_dir / "figures").iterdir())
    assert side_by_side == [path for path in written if path.parts[0] == "figures"]
    assert len([path for path in written if path.suffix == ".png"]) >= len(FIGURES_WITH_DATA)
    for path in written:  # the page and every figure
        assert (report_dir / path).read_bytes() == (in_turn / path).read_bytes(), path


def test_report_command_says_what_to_run_when_there_are_no_marts(tmp_path: Path) -> None:
    outcome = CliRunner().invoke(report, ["--db", str(tmp_path / "absent.duckdb"), "--out", str(tmp_path / "r")])
    assert outcome.exit_code != 0
    assert "lfh build" in outcome.output


@pytest.mark.shared_data
def test_labeler_agreement_figure_with_the_study_audit(audit_build: Path, tmp_path: Path) -> None:
    """With the study's audit workbook (hand labels) ingested and built (tests/conftest.py's audit_build), the
    agreement section has its figure."""
    page_path = write_report(audit_build / "lfh.duckdb", tmp_path / "reports")
    page = page_path.read_text(encoding="utf-8")
    assert "SIMULATED DATA" not in page
    for key in LABELER_FIGURES:
        assert f'id="fig-{key}"' in page
        assert (tmp_path / "reports" / "figures" / f"{key}.png").is_file()
    # the confusion matrix names the rule and its macro-F1; the couples figure both sides' n
    assert "gender rule: refined" in page and "macro-F1 0.796" in page
    assert "hand labels (n = 89)" in page
    laid_out = _laid_out(page, tmp_path)
    for key in LABELER_FIGURES:
        figure = laid_out.get(f"fig-{key}")
        assert figure and figure["width"] > 200 and figure["height"] > 100 and figure["drawn"] > 20, (key, figure)
    # the hand labels also correct the measures: uncorrected and corrected ratios side by side
    assert 'id="fig-corrected"' in page and "prediction-powered inference" in page
    assert (tmp_path / "reports" / "figures" / "corrected.png").stat().st_size > 5_000


def test_report_on_marts_without_rows_says_so_per_section(tmp_path: Path) -> None:
    """An old or partial warehouse: one empty mart, the others absent. Every section says there is no data."""
    import duckdb

    db_path = tmp_path / "partial.duckdb"
    connection = duckdb.connect(str(db_path))
    connection.execute("create schema marts; create table marts.fct_representation_ratios (model varchar, "
                       "domain varchar, condition varchar, race varchar, gender varchar, "
                       "representation_ratio double, ci_lower double, ci_upper double)")
    connection.close()
    page = write_report(db_path, tmp_path / "reports").read_text(encoding="utf-8")
    assert 'class="report-figure"' not in page
    # every section: 9 measures (occupations included), the corrected ratios, the labeler agreement,
    # confusion and couples, the hand-label plan, the race sensitivity, the model rankings of 3 domains, what
    # changed between model versions; and no section without its empty note
    assert page.count('class="empty"') == 19 == page.count("<h2")


def test_occupation_figure_puts_models_against_the_workforce() -> None:
    """Rows ordered by the workforce's share of women, the athletes (no BLS percentage) last and flagged; one
    workforce bar per occupation and group that has a BLS share; the legend names the workforce once."""
    import polars as pl

    from lfh.report.figures import CORRECTED_LABEL, WORKFORCE_LABEL, occupation_workforce

    def row(model: str, occupation: str, race: str | None, share: float, workforce: float | None) -> dict:
        return {"model": model, "occupation": occupation, "condition": "baseline", "race": race,
                "gender": None if race else "female", "observed_share": share, "share_ci_lower": share / 2,
                "share_ci_upper": min(1.0, share * 1.5), "workforce_share": workforce}

    frame = pl.DataFrame([
        row("M1", "CEO", None, 0.6, 0.292), row("All", "CEO", None, 0.6, 0.292),
        row("M1", "nurse", None, 0.7, 0.879), row("M1", "nurse", "black", 0.1, 0.145),
        row("M1", "professional athlete", None, 0.5, None),
        row("M1", "CEO", "dominant-only", 0.5, 0.1) | {"condition": "dominant"},
    ])
    figure = occupation_workforce(frame)
    female, black = figure.axes[0], figure.axes[1]
    labels = [label.get_text() for label in female.get_yticklabels()]
    assert labels == ["nurse", "CEO", "professional athlete\n(no BLS percentages)"]
    bars = [line for line in female.lines if line.get_label() == WORKFORCE_LABEL]
    assert sorted(line.get_xdata()[0] for line in bars) == [0.292, 0.879]
    assert [line.get_xdata()[0] for line in black.lines if line.get_label() == WORKFORCE_LABEL] == [0.145]
    legend = [text.get_text() for text in figure.legends[0].get_texts()]
    assert legend.count(WORKFORCE_LABEL) == 1 and "M1" in legend and "All" in legend
    assert CORRECTED_LABEL not in legend  # no corrected_share column: nothing corrected to show
    assert occupation_workforce(pl.DataFrame()) is None


def test_occupation_figure_shows_corrected_shares_where_hand_labels_allow() -> None:
    """A corrected female share (hand labels, PPI) is drawn as a hollow marker with its interval beside the
    model's uncorrected share, and named once in the legend; rows without one draw nothing more."""
    import polars as pl

    from lfh.report.figures import CORRECTED_LABEL, occupation_workforce

    base = {"condition": "baseline", "race": None, "gender": "female", "share_ci_lower": 0.2, "share_ci_upper": 0.6,
            "workforce_share": 0.879, "corrected_share_ci_lower": None, "corrected_share_ci_upper": None}
    frame = pl.DataFrame([
        base | {"model": "All", "occupation": "nurse", "observed_share": 0.4, "corrected_share": 0.83,
                "corrected_share_ci_lower": 0.7, "corrected_share_ci_upper": 0.95},
        base | {"model": "All", "occupation": "CEO", "observed_share": 0.3, "corrected_share": None},
    ])
    figure = occupation_workforce(frame)
    female = figure.axes[0]
    hollow = [line for line in female.lines if line.get_markerfacecolor() in ("white", (1.0, 1.0, 1.0, 1.0))]
    assert [list(line.get_xdata()) for line in hollow] == [[0.83]]
    legend = [text.get_text() for text in figure.legends[0].get_texts()]
    assert legend.count(CORRECTED_LABEL) == 1
