"""`lfh build` as a command: vars refused before dbt runs, compact progress and a
short failure, one build at a time holding the warehouse lock, and no dbt left running when the build is killed.
dbt itself is replaced by tests/fake_dbt.py (LFH_DBT_EXECUTABLE) except where the real one is needed."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from lfh.build.dbt import build_warehouse
from lfh.build.runner import ParseAhead
from lfh.build.vars import BuildVarError, validate_vars, var_rules
from lfh.lock import WarehouseBusy, lock_path, warehouse_lock
from lfh.paths import project_root

LFH = str(Path(sys.executable).parent / "lfh")
FAKE_DBT = Path(__file__).parent / "fake_dbt.py"


def install_fake_dbt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Put the dbt stand-in where `lfh build` looks for dbt; returns its work folder (dbt.pid, calls.jsonl)."""
    workdir = tmp_path / "fake_dbt"
    workdir.mkdir()
    script = workdir / "dbt"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_DBT}" "$@"\n')
    script.chmod(0o755)
    monkeypatch.setenv("LFH_DBT_EXECUTABLE", str(script))
    monkeypatch.setenv("FAKE_DBT_DIR", str(workdir))
    return workdir


@pytest.fixture
def fake_dbt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A dbt stand-in; returns its work folder (dbt.pid, calls.jsonl)."""
    return install_fake_dbt(tmp_path, monkeypatch)


@pytest.fixture
def ready_warehouse(warehouse: Path) -> Path:
    """A warehouse holding one story: enough for `lfh build` to start dbt."""
    warehouse.parent.mkdir(parents=True)
    with duckdb.connect(str(warehouse)) as connection:
        connection.execute("create schema raw; create table raw.stories (story_id varchar); "
                           "insert into raw.stories values ('s1')")
    return warehouse


def run_lfh(*arguments: str, **environment: str) -> subprocess.CompletedProcess:
    return subprocess.run([LFH, *arguments], capture_output=True, text=True, env={**os.environ, **environment},
                          timeout=120, check=False)


def calls(workdir: Path) -> list[list[str]]:
    path = workdir / "calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def wait_for(predicate, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (dead, not yet reaped by its new parent) counts as ended
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


# item 4: vars are checked before dbt runs

@pytest.mark.parametrize(("assignment", "expected"), [
    ("vote_treshold=0.6", "did you mean vote_threshold"),
    ("vote_threshold=abc", "must be a number between 0.0 and 1.0"),
    ("vote_threshold=1.5", "must be between 0.0 and 1.0"),
    ("baseline_set=census_2030", "valid: census_2020_nonhispanic, census_2022"),
    ("drop_hallucinated_names=maybe", "true or false"),
    ("max_name_tokens=2.5", "a whole number"),
    ("name_rule=studdy", "valid: study, refined"),
    ("vote_threshold", "write NAME=VALUE"),
    # every statistics var has bounds
    ("ppi_lambda=2", "ppi_lambda=2.0: must be between 0.0 and 1.0"),
    ("ppi_lambda=-0.1", "must be between 0.0 and 1.0"),
    ("ppi_min_hand_labeled=-1", "ppi_min_hand_labeled=-1: must be between 1 and inf"),
    ("ppi_cell_min_hand_labeled=0", "must be between 1 and inf"),
    ("wilson_z=0", "wilson_z=0.0: must be greater than 0.0"),
    ("wilson_z=-1.96", "must be greater than 0.0"),
    ("top_name_share_threshold=1.2", "must be between 0.0 and 1.0"),
    ("top_names_per_group=0", "must be between 1 and inf"),
    ("racialized_threshold_max=100", "must be between 1 and 99"),
])
def test_bad_vars_are_refused_before_dbt_runs(ready_warehouse: Path, fake_dbt: Path, assignment: str,
                                              expected: str) -> None:
    result = run_lfh("build", "--var", assignment)
    assert result.returncode == 2, result.stdout + result.stderr
    error_lines = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(error_lines) == 1 and expected in error_lines[0], result.stderr
    assert calls(fake_dbt) == []


def test_ordered_vars_must_stay_ordered() -> None:
    with pytest.raises(BuildVarError, match="racialized_threshold_min=60 is above racialized_threshold_max=40"):
        validate_vars(["racialized_threshold_min=60", "racialized_threshold_max=40"])
    with pytest.raises(BuildVarError, match="racialized_threshold_min=50 is above racialized_threshold_max=30"):
        validate_vars(["racialized_threshold_max=30", "racialized_threshold_min=50"])
    assert validate_vars(["racialized_threshold_min=40", "racialized_threshold_max=60", "ppi_lambda=0",
                          "wilson_z=2.58", "ppi_min_hand_labeled=1"]) == {
        "racialized_threshold_min": 40, "racialized_threshold_max": 60, "ppi_lambda": 0.0, "wilson_z": 2.58,
        "ppi_min_hand_labeled": 1}


def test_good_vars_reach_dbt_typed(ready_warehouse: Path, fake_dbt: Path) -> None:
    result = run_lfh("build", "--var", "vote_threshold=0.6", "--var", "baseline_set=census_2020_nonhispanic",
                     "--var", "unreported_races=[multiracial, aian]", "--var", "labeling_labeler_model=gpt-4o")
    assert result.returncode == 0, result.stderr
    arguments = calls(fake_dbt)[-1]
    passed = json.loads(arguments[arguments.index("--vars") + 1])
    assert passed == {"vote_threshold": 0.6, "baseline_set": "census_2020_nonhispanic",
                      "unreported_races": ["multiracial", "aian"], "labeling_labeler_model": "gpt-4o"}


def test_a_var_added_to_dbt_project_is_known_without_code_changes(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / "configs").mkdir(parents=True)
    shutil.copytree(project_root() / "seeds", root / "seeds")
    shutil.copy(project_root() / "configs" / "build_vars.toml", root / "configs")
    text = (project_root() / "dbt_project.yml").read_text()
    (root / "dbt_project.yml").write_text(text.replace("vars:\n", "vars:\n  brand_new_rule: 0.25\n", 1))
    assert validate_vars(["brand_new_rule=0.3"], root) == {"brand_new_rule": 0.3}
    with pytest.raises(BuildVarError, match="a number"):
        validate_vars(["brand_new_rule=high"], root)
    assert "brand_new_rule" in var_rules(root)


# item 5: compact progress, short failures with the next step

def test_dbt_runs_in_the_warehouse_folder_with_its_bare_name(ready_warehouse: Path, fake_dbt: Path) -> None:
    """dbt's partial parse is kept only while the profile's settings stay the same, the DuckDB path among them: with
    the bare file name two warehouses of that name share one parse (lfh.build.runner)."""
    result = run_lfh("build", FAKE_DBT_NODES="3")
    assert result.returncode == 0, result.stderr
    started = json.loads((fake_dbt / "started_in.json").read_text())
    assert {key: started[key] for key in ("cwd", "LFH_DB")} == {"cwd": str(ready_warehouse.parent),
                                                               "LFH_DB": ready_warehouse.name}


def test_a_parse_ahead_is_started_as_the_build_will_be_and_can_be_stopped(
        ready_warehouse: Path, fake_dbt: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo parses the project while the lexicon downloads (lfh.build.runner.ParseAhead): dbt reuses that parse
    only if the build starts with the same folder, profile, vars and environment."""
    assert ParseAhead(ready_warehouse, {"vote_threshold": 0.6}).wait()
    build_warehouse(db_path=ready_warehouse, dbt_vars={"vote_threshold": 0.6}, unit_tests="never")
    parse, build = calls(fake_dbt)
    assert parse[0] == "parse" and build[0] == "build"
    assert parse[parse.index("--project-dir"):] == build[build.index("--project-dir"):]  # profile, target, vars
    started = [json.loads(line) for line in (fake_dbt / "started.jsonl").read_text().splitlines()]
    assert len(started) == 2 and started[0] == started[1] and started[0]["LFH_DB"] == ready_warehouse.name

    monkeypatch.setenv("FAKE_DBT_HOLD", str(fake_dbt / "never"))  # the stand-in waits for a file that never comes
    held = ParseAhead(ready_warehouse)
    assert wait_for(lambda: len(calls(fake_dbt)) == 3)
    assert held.process.poll() is None
    held.stop()
    assert held.process.poll() is not None


def test_dbt_logs_to_its_file_at_info_unless_the_user_asks_for_more(ready_warehouse: Path, fake_dbt: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """dbt's debug file log (every statement sent) costs about 8% of a build's CPU (lfh.build.runner): info by
    default, and dbt's own DBT_LOG_LEVEL_FILE, when the user sets it, wins."""
    monkeypatch.delenv("DBT_LOG_LEVEL_FILE", raising=False)
    assert run_lfh("build", FAKE_DBT_NODES="3").returncode == 0
    assert json.loads((fake_dbt / "started_in.json").read_text())["DBT_LOG_LEVEL_FILE"] == "info"
    assert run_lfh("build", "--force", FAKE_DBT_NODES="3", DBT_LOG_LEVEL_FILE="debug").returncode == 0
    assert json.loads((fake_dbt / "started_in.json").read_text())["DBT_LOG_LEVEL_FILE"] == "debug"


def test_progress_is_compact(ready_warehouse: Path, fake_dbt: Path) -> None:
    result = run_lfh("build", FAKE_DBT_NODES="200")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) <= 15, result.stdout
    assert "200/200" in result.stdout and "PASS=200" in lines[-1]


def test_failure_ends_with_the_cause_and_the_log(ready_warehouse: Path, fake_dbt: Path) -> None:
    cause = "Runtime Error in model fct_characters (models/marts/fct_characters.sql)\n  Binder Error: no column x"
    result = run_lfh("build", FAKE_DBT_NODES="100", FAKE_DBT_ERROR=cause)
    assert result.returncode == 1
    assert len(result.stdout.splitlines()) + len(result.stderr.splitlines()) <= 16
    assert "Binder Error: no column x" in result.stderr and "logs/dbt.log" in result.stderr


def test_build_before_any_ingest_says_to_ingest(warehouse: Path, fake_dbt: Path) -> None:
    result = run_lfh("build")
    assert result.returncode == 1
    assert "lfh ingest" in result.stderr and len(result.stderr.strip().splitlines()) <= 2, result.stderr
    assert calls(fake_dbt) == []


def test_build_while_another_process_has_the_file_names_it(ready_warehouse: Path, fake_dbt: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
                               "print('open', flush=True); time.sleep(60)", str(ready_warehouse)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        result = run_lfh("build")
    finally:
        holder.kill()
        holder.wait()
    assert result.returncode == 1
    assert f"pid {holder.pid}" in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert calls(fake_dbt) == []


def test_out_of_memory_says_how_to_raise_the_limit(ready_warehouse: Path, fake_dbt: Path) -> None:
    result = run_lfh("build", FAKE_DBT_NODES="3", LFH_MEMORY_LIMIT="512MiB",
                     FAKE_DBT_ERROR="Out of Memory Error: failed to allocate data of size 64.0 MiB (488.2 MiB/488.2 "
                                    "MiB used)")
    assert result.returncode == 1
    assert "LFH_MEMORY_LIMIT=512MiB" in result.stderr and "LFH_MEMORY_LIMIT=8GiB" in result.stderr


# The memory test's workload: 10,000 stories of about 10.7 kB each (the 35 stories of tests/fixtures/measures, each
# made unique and long), some 107 MB of story text. Measured under 64MiB with spilling off: 14,000 stories with
# 30 MB of text built to the end; 10,000 with 40 MB (and every size tried above) ran out of memory in
# int_stories_placed, the first model that holds every changed story's text at once.
OUT_OF_MEMORY_STORIES = 10_000
OUT_OF_MEMORY_TEXT_REPEATS = 320  # 33-character pieces appended to each story's text
OUT_OF_MEMORY_MODEL = "int_stories_placed"


def write_oversized_corpus(folder: Path) -> list[Path]:
    """Parquet files of OUT_OF_MEMORY_STORIES stories and their labels, written by DuckDB in about a second
    (`lfh ingest` reads Parquet in bounded memory; its JSON reader refuses lines this long under its own limit)."""
    folder.mkdir(parents=True)
    corpus = Path(__file__).parent / "fixtures" / "measures"
    numbered = "select *, row_number() over (order by story_id) - 1 as position from read_json('{}')"
    copies = f"from range({OUT_OF_MEMORY_STORIES}) as copies(i) join ({{}}) as original on original.position = i % 35"
    story_id = "'oom-' || lpad(i::varchar, 6, '0') as story_id"
    with duckdb.connect() as connection:
        connection.execute(
            f"copy (select {story_id}, original.* exclude (story_id, text, position), original.text || "
            f"repeat(' ' || md5(i::varchar), {OUT_OF_MEMORY_TEXT_REPEATS}) as text "
            f"{copies.format(numbered.format(corpus / 'stories.jsonl'))}) to '{folder / 'stories.parquet'}'")
        connection.execute(
            f"copy (select {story_id}, original.* exclude (story_id, position) "
            f"{copies.format(numbered.format(corpus / 'labels.jsonl'))}) to '{folder / 'labels.parquet'}'")
    return [folder / "stories.parquet", folder / "labels.parquet"]


@pytest.mark.slow  # real dbt
def test_a_real_build_over_its_memory_limit_stops_with_the_limit_and_how_to_raise_it(tmp_path: Path) -> None:
    """Real dbt and DuckDB, not the stand-in: a corpus known to need more than 64MiB (the lowest limit `lfh build`
    accepts) in its first story model, built with spilling turned off (LFH_MAX_SPILL=0KiB), runs out of memory
    every time; the build must end with the one-line cause and the next step, not a traceback. Only the model that
    runs out (OUT_OF_MEMORY_MODEL) and what it reads are built: the rest of the project would run beside the failed
    branch and check nothing more here."""
    from fixtures_simulate import write_test_lexicon

    from lfh.landing.ingest import ingest_paths

    warehouse = tmp_path / "w" / "lfh.duckdb"
    write_test_lexicon(warehouse)
    results, _skipped = ingest_paths(write_oversized_corpus(tmp_path / "landing"), warehouse)
    assert [result.error for result in results] == [None, None]
    # a target folder of its own: the limits are in dbt's profile, so dbt parses in full under them, and that parse
    # left in the worker's target folder made the next build there at the usual limits parse in full again
    result = subprocess.run([LFH, "build", "--select", f"+{OUT_OF_MEMORY_MODEL}"], capture_output=True, text=True,
                            timeout=600, check=False,
                            env={**os.environ, "LFH_DB": str(warehouse), "LFH_MEMORY_LIMIT": "64MiB",
                                 "LFH_MAX_SPILL": "0KiB", "DBT_TARGET_PATH": str(tmp_path / "target"),
                                 "DBT_LOG_PATH": str(tmp_path / "logs")})
    assert result.returncode != 0, ("the oversized corpus built under 64MiB without spilling: it no longer runs out "
                                    "of memory, so raise OUT_OF_MEMORY_TEXT_REPEATS")
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    assert "ran out of memory under its limit (LFH_MEMORY_LIMIT=64MiB)" in result.stderr, result.stderr[-2000:]
    assert "LFH_MEMORY_LIMIT=8GiB lfh build" in result.stderr and "Traceback" not in result.stderr


def test_unreadable_memory_limit_is_refused(ready_warehouse: Path, fake_dbt: Path) -> None:
    result = run_lfh("build", LFH_MEMORY_LIMIT="lots")
    assert result.returncode == 2 and "LFH_MEMORY_LIMIT='lots'" in result.stderr
    assert calls(fake_dbt) == []


@pytest.mark.slow  # real dbt
def test_dbt_gets_the_memory_limit_and_a_spill_folder_beside_the_warehouse(ready_warehouse: Path) -> None:
    """The real profile: DuckDB's settings inside dbt are the limit and <warehouse>.tmp. dbt runs in the warehouse's
    folder with its bare name (lfh.build.runner), so the spill folder is relative to that folder: `here` counts the
    files of the warehouse's name in the folder a relative path starts from, which must be the warehouse's."""
    import re

    from lfh.build.dbt import run_dbt
    from lfh.build.memory import memory_limit

    # lfh's limit as it stands (the computed default unless LFH_MEMORY_LIMIT is set: the profile the run's other
    # builds use, whose project parse dbt then reuses), as DuckDB shows it, and DuckDB's own default for contrast
    with duckdb.connect(config={"memory_limit": memory_limit()}) as connection:
        expected = connection.execute("select current_setting('memory_limit')").fetchone()[0]
    with duckdb.connect() as connection:
        assert connection.execute("select current_setting('memory_limit')").fetchone()[0] != expected
    query = ("select current_setting('memory_limit') as memory, current_setting('temp_directory') as spill, "
             f"(select count(*) from glob('{ready_warehouse.name}')) as here")
    result = run_dbt(["show", "--inline", query, "--output", "json"], ready_warehouse, capture=True)
    shown = re.search(r'\{\s*"show".*\}', result.stdout, flags=re.DOTALL)
    assert shown, result.stdout[-2000:]
    row = json.loads(shown.group(0))["show"][0]
    assert row["memory"] == expected, row
    if Path(row["spill"]).is_absolute():
        assert row["spill"] == f"{ready_warehouse}.tmp", row
    else:
        assert row["spill"] == f"{ready_warehouse.name}.tmp" and row["here"] == 1, row



def test_the_spill_folder_is_set_once_per_database_not_per_cursor(tmp_path: Path) -> None:
    """dbt-duckdb runs the profile's `settings` on every new cursor; DuckDB refuses to set temp_directory again once
    it has spilled there, which failed every build large enough to spill. The profile sets both limits when the
    database opens (config_options), and a cursor opened after a spill works."""
    import yaml

    output = yaml.safe_load((project_root() / "profiles.yml").read_text(encoding="utf-8"))["lfh"]["outputs"]["duckdb"]
    assert {"memory_limit", "temp_directory"} <= set(output["config_options"])
    assert not {"memory_limit", "temp_directory"} & set(output.get("settings") or {})

    spill = tmp_path / "w.duckdb.tmp"
    with duckdb.connect(str(tmp_path / "w.duckdb"), config={"memory_limit": "64MiB",
                                                           "temp_directory": str(spill)}) as connection:
        connection.execute("set threads = 1")
        connection.execute("create table t as select range as i, repeat('x', 100) || range as s from range(2000000)")
        connection.execute("select s, count(*) from t group by s order by s limit 1").fetchall()  # spills
        assert spill.exists()
        with pytest.raises(duckdb.Error, match="Cannot switch temporary directory"):
            connection.cursor().execute(f"set temp_directory = '{spill}'")  # what per-cursor settings did
        assert connection.cursor().execute("select count(*) from t").fetchone() == (2_000_000,)

# item 7: one build at a time, every writer respects it, no orphan dbt

def start_build(*extra: str, **environment: str) -> subprocess.Popen:
    return subprocess.Popen([LFH, "build", *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "FAKE_DBT_NODES": "1000", "FAKE_DBT_SLEEP": "0.05", **environment})


def test_writers_wait_for_a_running_build(ready_warehouse: Path, fake_dbt: Path, tmp_path: Path) -> None:
    build = start_build()
    try:
        assert wait_for(lambda: (fake_dbt / "dbt.pid").exists())
        landing = tmp_path / "stories.jsonl"
        landing.write_text('{"story_id": "x", "model": "m", "story_text": "t"}\n')
        # writers are refused at once; a reader told not to wait (publish --wait 0) is refused the same way
        for command in (["ingest", str(landing)], ["build"], ["publish", "--to", str(tmp_path / "pub"), "--wait", "0"],
                        ["lexicon", "--skip-census", "--skip-wikipedia", "--skip-surnames",
                         "--clear-custom"]):
            result = run_lfh(*command)
            assert result.returncode != 0, command
            assert f"in use by pid {build.pid}" in result.stderr, (command, result.stderr)
        assert len(calls(fake_dbt)) == 1  # the second build never started dbt
    finally:
        build.kill()
        build.wait()


@pytest.mark.slow
def test_readers_wait_for_a_running_build_then_read(ready_warehouse: Path, fake_dbt: Path, tmp_path: Path) -> None:
    """A reader (report, audit-sample, publish) that opened the file between two of dbt's connections would make the
    build fail; it waits, says so, and opens the warehouse only once the build is over. The build is held
    (FAKE_DBT_HOLD) until every reader has said it waits, so the test does not depend on how fast readers start."""
    release = tmp_path / "release"
    build = start_build(FAKE_DBT_NODES="30", FAKE_DBT_SLEEP="0.05", FAKE_DBT_HOLD=str(release))
    try:
        assert wait_for(lambda: (fake_dbt / "dbt.pid").exists())
        readers = [subprocess.Popen([LFH, *command], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                   for command in (["report", "--wait", "60", "--out", str(tmp_path / "report")],
                                   ["audit-sample", "--n", "5", "--out", str(tmp_path / "sample.xlsx")],
                                   ["publish", "--to", str(tmp_path / "pub")])]
        said: list[str] = []
        for reader in readers:  # each says it waits (or ends: then the assertions below say what it said)
            assert reader.stderr is not None
            lines = [reader.stderr.readline()]
            while lines[-1] and "waiting for pid" not in lines[-1]:
                lines.append(reader.stderr.readline())
            said.append("".join(lines))
            assert build.poll() is None, "the build ended before every reader asked for the warehouse"
        release.touch()
        outputs = []
        for reader, before in zip(readers, said, strict=True):
            _out, err = reader.communicate(timeout=120)
            outputs.append(before + err)
            assert build.poll() is not None, "a reader went on while the build ran"
        build.wait(timeout=60)
        assert build.returncode == 0, build.stderr.read() if build.stderr else ""
    finally:
        release.touch()
        build.kill()
        build.wait()
    for err in outputs:
        assert f"waiting for pid {build.pid}" in err and "Traceback" not in err, err
        # then it read the warehouse: this one has stories but no marts, which each reader reports in one line
        assert "marts" in err.splitlines()[-1] and len(err.strip().splitlines()) == 2, err


def test_readers_refused_by_a_foreign_process_say_so_in_one_line(ready_warehouse: Path, tmp_path: Path) -> None:
    """A notebook or BI tool holding the build file (not an lfh command, so not on the lock): each reader ends with
    one line naming the problem, never the IOException traceback the issue saw."""
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
                               "print('open', flush=True); time.sleep(60)", str(ready_warehouse)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        results = [run_lfh("audit-sample", "--n", "5", "--out", str(tmp_path / "a.xlsx")),
                   run_lfh("report", "--out", str(tmp_path / "report"))]
    finally:
        holder.kill()
        holder.wait()
    for result in results:
        assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and "published copy" in result.stderr, result.stderr


def test_a_reader_gives_up_after_its_wait(ready_warehouse: Path, fake_dbt: Path, tmp_path: Path) -> None:
    build = start_build()
    try:
        assert wait_for(lambda: (fake_dbt / "dbt.pid").exists())
        started = time.monotonic()
        result = run_lfh("report", "--wait", "1", "--out", str(tmp_path / "report"))
        assert 1 <= time.monotonic() - started < 30
    finally:
        build.kill()
        build.wait()
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"in use by pid {build.pid}" in result.stderr and "after waiting 1s" in result.stderr, result.stderr


def test_a_build_waits_for_readers_and_readers_cannot_starve_it(tmp_path: Path) -> None:
    """Library level: a writer finding only readers waits for them (never fails), and a reader arriving while the
    writer waits queues behind it."""
    db = tmp_path / "w.duckdb"
    hold = ("import sys, time; from pathlib import Path; from lfh.lock import warehouse_lock\n"
            "with warehouse_lock(Path(sys.argv[1]), 'read', shared=True, wait=30):\n"
            "    print('held', flush=True); time.sleep(float(sys.argv[2]))\n")
    first = subprocess.Popen([sys.executable, "-c", hold, str(db), "2"], stdout=subprocess.PIPE, text=True)
    assert first.stdout is not None and first.stdout.readline().strip() == "held"
    writer = subprocess.Popen([sys.executable, "-c", "import sys, time; from pathlib import Path\n"
                               "from lfh.lock import warehouse_lock\n"
                               "with warehouse_lock(Path(sys.argv[1]), 'build', wait=30):\n"
                               "    print('writing', time.monotonic(), flush=True); time.sleep(1)\n", str(db)],
                              stdout=subprocess.PIPE, text=True)
    assert wait_for(lambda: read_queue(db) is not None, 10), "the writer did not queue"
    late = subprocess.Popen([sys.executable, "-c", hold + "print('read', time.monotonic(), flush=True)\n",
                             str(db), "0"], stdout=subprocess.PIPE, text=True)
    writer_out, _ = writer.communicate(timeout=60)
    late_out, _ = late.communicate(timeout=60)
    first.wait(timeout=30)
    assert writer.returncode == 0 and late.returncode == 0
    written_at = float(writer_out.split()[-1])
    read_at = float(late_out.split()[-1])
    assert read_at > written_at + 0.9  # the late reader waited for the whole write


def read_queue(db: Path) -> str | None:
    from lfh.lock import queue_path

    path = queue_path(db.resolve())
    text = path.read_text() if path.exists() else ""
    return text or None


def test_killing_only_dbt_says_dbt_was_killed(ready_warehouse: Path, fake_dbt: Path) -> None:
    build = start_build()
    assert wait_for(lambda: (fake_dbt / "dbt.pid").exists())
    os.kill(int((fake_dbt / "dbt.pid").read_text()), signal.SIGKILL)
    _out, err = build.communicate(timeout=60)
    assert build.returncode == 1
    assert "dbt was killed by SIGKILL" in err and "semaphore" not in err and "Traceback" not in err, err


def test_killing_the_build_ends_dbt_and_frees_the_lock(ready_warehouse: Path, fake_dbt: Path) -> None:
    build = start_build()
    assert wait_for(lambda: (fake_dbt / "dbt.pid").exists())
    dbt_pid = int((fake_dbt / "dbt.pid").read_text())
    build.send_signal(signal.SIGKILL)
    build.wait()
    assert wait_for(lambda: not alive(dbt_pid), 10), "dbt ran on as an orphan"
    # the lock file still names the dead build: the next build takes over and says so
    assert json.loads(lock_path(ready_warehouse).read_text())["pid"] == build.pid
    result = run_lfh("build", FAKE_DBT_NODES="3")
    assert result.returncode == 0, result.stderr
    assert f"stale warehouse lock left by pid {build.pid}" in result.stdout


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupting_the_build_ends_dbt(ready_warehouse: Path, fake_dbt: Path, sig: int) -> None:
    build = start_build()
    assert wait_for(lambda: (fake_dbt / "dbt.pid").exists())
    dbt_pid = int((fake_dbt / "dbt.pid").read_text())
    time.sleep(0.5)
    build.send_signal(sig)
    _out, err = build.communicate(timeout=30)
    assert build.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert wait_for(lambda: not alive(dbt_pid), 10)
    with warehouse_lock(ready_warehouse, "check"):  # free again
        pass


def test_lock_is_reentrant_in_one_process_and_exclusive_across(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    with warehouse_lock(db, "outer"), warehouse_lock(db, "inner"):
        other = subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; "
                                "from lfh.lock import warehouse_lock\n"
                                "with warehouse_lock(Path(sys.argv[1]), 'ingest'): pass", str(db)],
                               capture_output=True, text=True, check=False)
        assert other.returncode != 0 and "WarehouseBusy" in other.stderr and f"pid {os.getpid()}" in other.stderr
    with warehouse_lock(db, "again"):
        pass
    assert issubclass(WarehouseBusy, Exception)


# `lfh build --target spark` (docs/SCALE_OUT.md) goes through the same entry point: the same var check, a lock (on
# the Spark folder, whose Derby metastore takes one process at a time), the landed Parquet files as raw tables

@pytest.fixture
def landed_parquet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Parquet landing folder holding one story, and LFH_SPARK_DIR pointing into tmp_path."""
    folder = tmp_path / "raw_parquet"
    (folder / "stories").mkdir(parents=True)
    duckdb.sql("select 's1' as story_id").write_parquet(str(folder / "stories" / "part-0.parquet"))
    monkeypatch.setenv("LFH_SPARK_DIR", str(tmp_path / "spark"))
    return folder


def test_spark_build_passes_target_and_landed_tables(landed_parquet: Path, fake_dbt: Path, tmp_path: Path) -> None:
    result = run_lfh("build", "--target", "spark", "--parquet-dir", str(landed_parquet), "--var",
                     "vote_threshold=0.6")
    assert result.returncode == 0, result.stderr
    arguments = calls(fake_dbt)[-1]
    assert arguments[0] == "build" and arguments[arguments.index("--target") + 1] == "spark"
    passed = json.loads(arguments[arguments.index("--vars") + 1])
    assert passed == {"raw_parquet_dir": str(landed_parquet), "raw_parquet_tables": ["stories"], "vote_threshold": 0.6}
    assert f"built {tmp_path / 'spark'}" in result.stdout


def test_spark_build_checks_vars_and_holds_the_spark_lock(landed_parquet: Path, fake_dbt: Path,
                                                          tmp_path: Path) -> None:
    result = run_lfh("build", "--target", "spark", "--parquet-dir", str(landed_parquet), "--var", "vote_treshold=1")
    assert result.returncode == 2 and "did you mean vote_threshold" in result.stderr, result.stderr
    assert calls(fake_dbt) == []
    build = start_build("--target", "spark", "--parquet-dir", str(landed_parquet))
    try:
        assert wait_for(lambda: (fake_dbt / "dbt.pid").exists())
        second = run_lfh("build", "--target", "spark", "--parquet-dir", str(landed_parquet))
        assert second.returncode != 0 and f"in use by pid {build.pid}" in second.stderr, second.stderr
        assert lock_path(tmp_path / "spark").exists()
        assert len(calls(fake_dbt)) == 1
    finally:
        build.kill()
        build.wait()


def test_duckdb_build_reads_landed_parquet_without_ingested_stories(landed_parquet: Path, fake_dbt: Path,
                                                                    warehouse: Path) -> None:
    empty = run_lfh("build")
    assert empty.returncode != 0 and "no stories" in empty.stderr
    result = run_lfh("build", "--parquet-dir", str(landed_parquet))
    assert result.returncode == 0, result.stderr
    arguments = calls(fake_dbt)[-1]
    assert arguments[arguments.index("--target") + 1] == "duckdb"
    assert json.loads(arguments[arguments.index("--vars") + 1])["raw_parquet_dir"] == str(landed_parquet)


def test_the_help_and_readme_state_the_memory_default_of_the_code() -> None:
    """lfh build --help writes the default from lfh.build.memory's constants; the README must say the same."""
    from click.testing import CliRunner

    from lfh.build import memory
    from lfh.cli import main

    shown = " ".join(CliRunner().invoke(main, ["build", "--help"]).output.split())
    assert f"default {memory.default_limit_text()})" in shown
    cap, floor = memory.DEFAULT_CAP_MIB / 1024, memory.DEFAULT_FLOOR_MIB / 1024
    assert f"{floor:g}-{cap:g} GiB" in shown and "1/8 of this machine" in shown
    readme = " ".join((project_root() / "README.md").read_text(encoding="utf-8").split())
    assert f"{floor:g}–{cap:g} GiB" in readme, "README's memory default differs from lfh.build.memory"


def test_progress_rewrites_one_line_through_an_echo_that_can() -> None:
    """On a terminal the CLI's echo can rewrite its line (lfh.cli.terminal): the progress is one line, ended once;
    the library writes nothing itself."""
    from lfh.build.runner import Progress

    lines: list[str] = []
    rewrites: list[str] = []

    class Echo:
        def __call__(self, text: str) -> None:
            lines.append(text)

        def rewrite(self, text: str) -> None:
            rewrites.append(text)

    progress = Progress(Echo(), "dbt build")
    for name in ("a", "b", "c"):
        progress.update(3, name, True)
    progress.close()
    assert len(rewrites) == 3 and "3/3" in rewrites[-1] and "[" in rewrites[-1]
    assert lines == [""]  # the finished line ended once, nothing else printed
