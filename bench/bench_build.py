"""`lfh build` (dbt build of the whole project) on one simulated corpus, against the floor and, optionally, against
a baseline commit, measured in the same run (absolute times on a shared machine move 10-20% between sittings;
ratios measured side by side hold).

`lfh lexicon`, `lfh simulate --stories-per-prompt N --samples S` and `lfh ingest` make the warehouse (skipped with
--reuse when the work folder already holds one); its raw tables are kept in a copy so every build starts from the
same raw-only warehouse. Each round then runs, each stage as its own process (wall time, CPU time and peak memory,
max RSS from wait4, are its own), alternating:
- the floor: one DuckDB process scanning raw.label_responses (every column, the request texts included) and
  raw.stories once with a simple aggregate;
- with --baseline REV: `lfh build` of that commit (checked out into a scratch git worktree under the work folder,
  run with this environment's Python and dbt), then its models' SQL alone, then `lfh build` again with nothing new;
- `lfh build` of this checkout, then its models' SQL alone, then `lfh build` again with nothing new.
The SQL alone (bench.sql_alone) runs each model's compiled SQL from that build in DuckDB, in dependency order, on a
copy of the warehouse the build made, under the build's memory limit: the rules' own cost, without dbt around it.
Printed: each stage's wall, CPU and peak, its ratio to the floor of its round and the candidate's ratio to the
baseline; dbt's time by node type and the time outside dbt's run (start-up, parse, lfh's checks and
bookkeeping: the build's wall time less dbt's elapsed time); each model's time (dbt's run_results) for both.
--record appends the figures and the machine's load to the dated results file bench/results/build-<date>.md.

Run: .venv/bin/python -m bench.bench_build [--stories-per-prompt 1667] [--samples 5] [--workdir DIR] [--reuse]
     [--rounds 1] [--baseline REV] [--record] [--models 25]
The demo's corpus: --stories-per-prompt 12 --samples 3. The study's scale, one response each: 1667 --samples 1.
Takes minutes; not part of `make test`.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from bench.stages import Stage, load
from bench.stages import run_stage as run_child_stage

PROJECT_ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = PROJECT_ROOT / "bench" / "results"

FLOOR_SCRIPT = """
import sys, duckdb
connection = duckdb.connect(sys.argv[1], read_only=True)
print("label_responses", connection.execute(
    "select count(*), sum(length(request_text)), sum(length(response_text)), count(distinct story_id), "
    "max(sample_index), count(distinct labeler_model) from raw.label_responses").fetchone())
print("stories", connection.execute(
    "select count(*), sum(length(story_text)), sum(length(query)), count(distinct model) from raw.stories").fetchone())
"""
# the lfh command line of another checkout: its package first on the path, so lfh.paths.project_root() is that
# checkout (its models, macros, target/) while Python, dbt and DuckDB are this environment's
LFH_OF_CHECKOUT = "import sys; from lfh.cli import main; sys.argv[0] = 'lfh'; main()"


@dataclass
class Variant:
    """One code base under test: this checkout, or a baseline commit in a scratch worktree."""
    name: str
    root: Path
    command: list[str]
    environment: dict[str, str] = field(default_factory=dict)
    target: Path = PROJECT_ROOT / "target"  # dbt's target folder (DBT_TARGET_PATH): its own per variant
    builds: list[Stage] = field(default_factory=list)
    again: list[Stage] = field(default_factory=list)
    sql_alone: list[Stage] = field(default_factory=list)
    results: dict = field(default_factory=dict)  # the last full build's run_results.json

    def round_stages(self, index: int) -> list[Stage]:
        """This variant's stages of one round, in the order the table lists them."""
        return [self.builds[index], self.sql_alone[index], self.again[index]]


def run_stage(name: str, command: list[str], environment: dict[str, str], cwd: Path = PROJECT_ROOT) -> Stage:
    return run_child_stage(name, command, environment, cwd=cwd)


def make_warehouse(workdir: Path, stories_per_prompt: int, samples: int, environment: dict[str, str]) -> None:
    lfh = str(Path(sys.executable).parent / "lfh")
    landing = workdir / "landing"
    run_stage("setup: lfh lexicon", [lfh, "lexicon"], environment)
    run_stage("setup: lfh simulate", [lfh, "simulate", "--out", str(landing), "--stories-per-prompt",
                                      str(stories_per_prompt), "--samples", str(samples)], environment)
    run_stage("setup: lfh ingest", [lfh, "ingest", str(landing / "stories"), str(landing / "labels")], environment)
    shutil.rmtree(landing, ignore_errors=True)


def baseline_checkout(workdir: Path, revision: str) -> Path:
    """The baseline commit checked out (detached) into a scratch worktree under the work folder."""
    target = workdir / "baseline"
    commit = subprocess.run(["git", "-C", str(PROJECT_ROOT), "rev-parse", "--verify", f"{revision}^{{commit}}"],
                            capture_output=True, text=True, check=True).stdout.strip()
    if (target / ".git").exists():
        head = subprocess.run(["git", "-C", str(target), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
        if head == commit:
            return target
        subprocess.run(["git", "-C", str(PROJECT_ROOT), "worktree", "remove", "--force", str(target)], check=True)
    subprocess.run(["git", "-C", str(PROJECT_ROOT), "worktree", "add", "--detach", "--force", str(target), commit],
                   check=True, capture_output=True)
    return target


def remove_checkout(target: Path) -> None:
    subprocess.run(["git", "-C", str(PROJECT_ROOT), "worktree", "remove", "--force", str(target)], check=False,
                   capture_output=True)


def short_commit(root: Path) -> str:
    result = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            check=False)
    dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True, check=False).stdout.strip()
    return (result.stdout.strip() or "unknown") + ("+changes" if dirty else "")


def sql_alone_stage(variant: Variant, round_number: int, warehouse: Path, workdir: Path,
                    environment: dict[str, str]) -> Stage:
    """The variant's models as plain SQL (bench.sql_alone) on a copy of the warehouse it just built, under the
    build's memory limit: how much of the build is the rules' SQL and how much is dbt around it."""
    copy = workdir / "sql_alone" / warehouse.name
    shutil.rmtree(copy.parent, ignore_errors=True)
    copy.parent.mkdir(parents=True)
    shutil.copyfile(warehouse, copy)
    try:
        return run_stage(f"{variant.name}: its models' SQL alone, round {round_number}",
                         [sys.executable, "-m", "bench.sql_alone", str(variant.target), str(copy)], environment)
    finally:
        shutil.rmtree(copy.parent, ignore_errors=True)


def run_results(target: Path) -> dict:
    path = target / "run_results.json"
    return json.loads(path.read_text()) if path.exists() else {"results": [], "elapsed_time": 0.0}


def by_type(results: dict) -> str:
    totals: dict[str, tuple[int, float]] = {}
    for result in results["results"]:
        kind = result["unique_id"].split(".")[0]
        count, seconds = totals.get(kind, (0, 0.0))
        totals[kind] = (count + 1, seconds + result["execution_time"])
    kinds = ", ".join(f"{kind} {count} / {seconds:.1f} s" for kind, (count, seconds) in sorted(totals.items()))
    return f"dbt {results['elapsed_time']:.1f} s; node time by type: {kinds}"


def model_times(results: dict) -> dict[str, float]:
    return {result["unique_id"].split(".")[-1]: result["execution_time"] for result in results["results"]
            if result["unique_id"].startswith("model.")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stories-per-prompt", type=int, default=1667, help="x 100 prompts x 3 models")
    parser.add_argument("--samples", type=int, default=5, help="label responses per story")
    parser.add_argument("--workdir", type=Path, default=None, help="default: a temporary folder (deleted after)")
    parser.add_argument("--reuse", action="store_true", help="reuse the raw warehouse already in --workdir")
    parser.add_argument("--rounds", "--builds", type=int, default=1, help="rounds of floor, baseline, candidate")
    parser.add_argument("--baseline", default=None, help="a commit to compare with (e.g. main, d4413ac)")
    parser.add_argument("--record", action="store_true", help="append the figures to bench/results/build-<date>.md")
    parser.add_argument("--models", type=int, default=25, help="models listed (slowest first; all in --record)")
    options = parser.parse_args()

    workdir = (options.workdir or Path(tempfile.mkdtemp(prefix="lfh-bench-build-"))).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    warehouse = workdir / "warehouse" / "lfh.duckdb"
    raw_copy = workdir / "raw_only.duckdb"
    environment = {**os.environ, "LFH_DB": str(warehouse)}
    lfh = str(Path(sys.executable).parent / "lfh")
    print(f"work folder {workdir}; {os.cpu_count()} cores; load average {load()}", flush=True)
    # each variant's dbt writes its own target folder in the work folder (partial parse, run_results): two benches
    # of one checkout can run side by side, and both variants start from a full parse, as a fresh clone does
    target = workdir / "target-this"
    shutil.rmtree(target, ignore_errors=True)
    variants = [Variant(f"this checkout ({short_commit(PROJECT_ROOT)})", PROJECT_ROOT, [lfh],
                        {**environment, "DBT_TARGET_PATH": str(target), "DBT_LOG_PATH": str(target / "logs")}, target)]
    checkout = None
    try:
        if options.baseline:
            checkout = baseline_checkout(workdir, options.baseline)
            path = os.pathsep.join([str(checkout / "ingest"), *filter(None, [os.environ.get("PYTHONPATH")])])
            target = workdir / "target-baseline"
            shutil.rmtree(target, ignore_errors=True)
            variants.insert(0, Variant(f"baseline {options.baseline} ({short_commit(checkout)})", checkout,
                                       [sys.executable, "-c", LFH_OF_CHECKOUT],
                                       {**environment, "PYTHONPATH": path, "DBT_TARGET_PATH": str(target),
                                        "DBT_LOG_PATH": str(target / "logs")}, target))
        if not (options.reuse and raw_copy.exists()):
            warehouse.parent.mkdir(parents=True, exist_ok=True)
            warehouse.unlink(missing_ok=True)
            make_warehouse(workdir, options.stories_per_prompt, options.samples, environment)
            shutil.copyfile(warehouse, raw_copy)
        floors: list[Stage] = []
        loads: list[str] = []
        for round_number in range(1, options.rounds + 1):
            loads.append(load())
            shutil.copyfile(raw_copy, warehouse)
            floors.append(run_stage(f"floor, round {round_number}",
                                    [sys.executable, "-c", FLOOR_SCRIPT, str(warehouse)], environment))
            for variant in variants:
                shutil.rmtree(warehouse.parent, ignore_errors=True)
                warehouse.parent.mkdir(parents=True)
                shutil.copyfile(raw_copy, warehouse)
                variant.builds.append(run_stage(f"{variant.name}: lfh build, round {round_number}",
                                                [*variant.command, "build"], variant.environment, variant.root))
                variant.results = run_results(variant.target)
                variant.sql_alone.append(sql_alone_stage(variant, round_number, warehouse, workdir, environment))
                variant.again.append(run_stage(f"{variant.name}: again, nothing new, round {round_number}",
                                               [*variant.command, "build"], variant.environment, variant.root))
            loads[-1] += f" -> {load()}"
        lines = report(options, raw_copy, floors, variants, loads)
        print("\n".join(lines))
        if options.record:
            RESULTS_DIR.mkdir(exist_ok=True)
            recorded = RESULTS_DIR / f"build-{datetime.date.today().isoformat()}.md"
            with recorded.open("a", encoding="utf-8") as handle:
                handle.write("\n".join(lines) + "\n\n" + "\n".join(all_models(variants)) + "\n\n")
            print(f"\nappended to {recorded.relative_to(PROJECT_ROOT)}")
    finally:
        if checkout is not None and options.workdir is None:
            remove_checkout(checkout)
        if options.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)


def report(options: argparse.Namespace, raw_copy: Path, floors: list[Stage], variants: list[Variant],
           loads: list[str]) -> list[str]:
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"## {now}: {options.stories_per_prompt} stories per prompt, {options.samples} label responses each",
             "", f"raw warehouse {raw_copy.stat().st_size / 2**20:,.0f} MiB; {os.cpu_count()} cores; "
             f"load average (1/5 min) per round, start -> end: {'; '.join(loads)}", "",
             f"| {'stage':58} | wall s | cpu s | peak MiB | wall/floor | wall/baseline |",
             f"|{'-' * 60}|-------:|------:|---------:|-----------:|--------------:|"]
    baseline = variants[0] if len(variants) > 1 else None
    for index, floor in enumerate(floors):
        rows = [(floor, None)]
        for variant in variants:
            own = variant.round_stages(index)
            compared = baseline.round_stages(index) if baseline and variant is not baseline else [None] * len(own)
            rows += list(zip(own, compared, strict=True))
        for stage, against in rows:
            versus = f"{stage.wall / against.wall:13.2f}" if against else f"{'':13}"
            lines.append(f"| {stage.name:58} | {stage.wall:6.1f} | {stage.cpu:5.1f} | {stage.peak_mib:8.0f} | "
                         f"{stage.wall / floor.wall:10.1f} | {versus} |")
    lines.append("")
    for variant in variants:
        outside = variant.builds[-1].wall - variant.results["elapsed_time"]
        lines.append(f"- {variant.name}: {by_type(variant.results)}; outside dbt's run (lfh's checks, dbt's "
                     f"start-up and parse, the bookkeeping) {outside:.1f} s")
    lines += ["", f"slowest models of the last full build (s){': baseline -> this checkout' if baseline else ''}:"]
    candidate = model_times(variants[-1].results)
    before = model_times(baseline.results) if baseline else {}
    for name, seconds in sorted(candidate.items(), key=lambda item: -item[1])[:options.models]:
        was = f"{before[name]:6.2f} -> " if name in before else ""
        lines.append(f"  {was}{seconds:6.2f}  {name}")
    return lines


def all_models(variants: list[Variant]) -> list[str]:
    """Every model's time in each variant's last full build, for the results file."""
    names = sorted({name for variant in variants for name in model_times(variant.results)})
    times = [model_times(variant.results) for variant in variants]
    lines = ["<details><summary>every model (s): " + " | ".join(variant.name for variant in variants) + "</summary>",
             ""]
    for name in names:
        lines.append(f"    {name:50} " + " ".join(f"{time.get(name, float('nan')):7.2f}" for time in times))
    return [*lines, "", "</details>"]


if __name__ == "__main__":
    main()
