"""Scratch build warehouses for the publish and serve tests: a few marts shaped like docs/CONTRACTS.md
(with comments, NULLs, lists and awkward text), a lexicon and baselines, and dbt target files."""

from __future__ import annotations

import json
import math
import socket
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from lfh.build.provenance import record_run
from lfh.paths import project_root

AWKWARD_TEXT = "She said \"it's fine\"\tthen left.\nBack\\slash, émigré, 北京, \\N, {a,b}"


def make_build_warehouse(path: Path, generation: int = 1) -> None:
    """(Re)create the build file. Each generation has different rows, so tests can tell publications apart."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    with duckdb.connect(str(path)) as connection:
        connection.execute("create schema marts; create schema raw; create schema reference")
        connection.execute("""
            create table marts.fct_name_coverage (
                model varchar not null, domain varchar not null, condition varchar not null,
                characters integer, with_name integer, with_matched_name integer,
                unmatched_share double, matched_share double)""")
        for index, model in enumerate(["ChatGPT4", "Claude2.0", "All"][: 1 + generation]):
            connection.execute(
                "insert into marts.fct_name_coverage values (?, 'learning', 'baseline', ?, ?, ?, ?, ?)",
                [model, 10 * generation + index, 5, 4, 0.6, 0.4])
        connection.execute(
            "insert into marts.fct_name_coverage values ('PaLM2', 'love', 'subordinate', null, null, null, null, null)")
        connection.execute("""
            create table marts.fct_representation_ratios (
                model varchar, domain varchar, condition varchar, race varchar, gender varchar,
                baseline_set varchar, numerator bigint, denominator bigint, representation_ratio double,
                q_value decimal(18, 6), computed_on date, labels varchar[])""")
        connection.execute(f"""
            insert into marts.fct_representation_ratios
            select 'All', 'labor', 'subordinate', case when i % 2 = 0 then 'asian' end, 'female',
                   'census_2022', i * {generation}, 1000, i / 7.0, i / 3.0, date '2024-01-01' + i::integer,
                   case when i % 3 = 0 then ['a', 'b,c', null] when i % 3 = 1 then [] end
            from range(50 * {generation}) t(i)""")
        connection.execute("""
            create table marts.dim_stories (story_id varchar not null, story_text varchar, is_labeled boolean,
                                            samples_received integer)""")
        connection.execute("insert into marts.dim_stories values (?, ?, true, ?)", ["s1", AWKWARD_TEXT, generation])
        connection.execute("insert into marts.dim_stories values ('s2', '', false, 0), ('s3', null, null, null)")
        connection.execute("comment on table marts.fct_name_coverage is 'Share of characters with a matched name.'")
        connection.execute("comment on column marts.fct_name_coverage.model is 'Canonical model; ''All'' aggregates.'")
        connection.execute("comment on column marts.dim_stories.story_text is 'The answer, exactly as given.'")
        connection.execute("create table raw.census_first_names (first_name varchar, n_total integer, "
                           "source varchar, vintage varchar)")
        connection.execute("insert into raw.census_first_names values ('Maria', 10, 'census', '2010'), "
                           "('Wei', 5, 'census', '2010')")
        connection.execute("create table raw.custom_first_names (first_name varchar, mode varchar, source varchar)")
        connection.execute("insert into raw.custom_first_names values ('Zed', 'add', 'team list')")
        connection.execute("create table raw.census_surnames (surname varchar, source varchar, vintage varchar)")
        connection.execute("insert into raw.census_surnames values ('SMITH', 'census surnames', '2010')")
        connection.execute("create table reference.baselines (baseline_set varchar, dimension varchar, "
                           "group_code varchar, expected_pct double, source varchar, vintage varchar)")
        connection.execute("insert into reference.baselines values "
                           "('census_2022', 'race', 'white', 58.9, 'US Census QuickFacts', '2022-07-01'), "
                           "('census_2022', 'race', 'asian', 6.3, 'US Census QuickFacts', '2022-07-01'), "
                           "('other_set', 'race', 'white', 50.0, 'elsewhere', '2000')")


def write_dbt_target(target_dir: Path, invocation_id: str, marts: list[str], command: str = "build",
                     warehouse: Path | None = None) -> None:
    """manifest.json and run_results.json with the fields lfh publish reads, as dbt 1.11 writes them; with a
    warehouse, the run recorded in it as `lfh build` records the run it just made (lfh.build.provenance)."""
    target_dir.mkdir(parents=True, exist_ok=True)
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    nodes = {
        f"model.laissez_faire.{name}": {
            "unique_id": f"model.laissez_faire.{name}", "resource_type": "model", "name": name, "alias": name,
            "schema": "marts", "checksum": {"name": "sha256", "checksum": f"sum-{name}"},
        }
        for name in marts
    }
    nodes["model.laissez_faire.stg_x"] = {"unique_id": "model.laissez_faire.stg_x", "resource_type": "model",
                                          "name": "stg_x", "alias": "stg_x", "schema": "staging"}
    manifest = {"metadata": {"invocation_id": invocation_id, "generated_at": now, "dbt_version": "1.11.0",
                             "project_name": "laissez_faire", "adapter_type": "duckdb"}, "nodes": nodes}
    results = [
        {"unique_id": f"model.laissez_faire.{name}", "status": "success", "execution_time": 0.1,
         "timing": [{"name": "compile", "started_at": now, "completed_at": now},
                    {"name": "execute", "started_at": now, "completed_at": now}]}
        for name in marts
    ]
    run_results = {"metadata": {"invocation_id": invocation_id, "generated_at": now, "dbt_version": "1.11.0"},
                   "args": {"which": command, "vars": {"baseline_set": "census_2022"}, "select": []},
                   "elapsed_time": 1.5, "results": results}
    (target_dir / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    (target_dir / "run_results.json").write_text(json.dumps(run_results), encoding="utf-8")
    if warehouse is not None:
        with duckdb.connect(str(warehouse)) as connection:
            assert record_run(connection, target_dir, invocation_id, {"baseline_set": "census_2022"}, project_root())


def comparable(rows: list[tuple]) -> list[tuple]:
    """Rows sorted in one order whatever the engine returned them in (None and lists included)."""
    def key(row: tuple) -> tuple:
        return tuple((value is None, repr(value)) for value in row)

    def normalize(value: object) -> object:
        if isinstance(value, float) and math.isnan(value):
            return "NaN"
        if isinstance(value, list):
            return tuple(value)
        return value

    return sorted((tuple(normalize(value) for value in row) for row in rows), key=key)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def private_base() -> Path:
    """A temporary folder the postgres system user can reach (pytest's own tmp folders are 0700 root)."""
    base = Path(tempfile.mkdtemp(prefix="lfh-pg-test-"))
    base.chmod(0o755)
    return base
