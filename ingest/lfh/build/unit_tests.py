"""The checkout's record of dbt unit tests that passed, so that a build of another warehouse from the same checkout
need not run them again.

dbt's unit tests check each formula on rows they carry themselves: what they test is the project's SQL, macros,
unit-test definitions, seeds and vars, run by one dbt, adapter and engine, never the warehouse's data. They cost
about a third of a build of the demo corpus (a sampling profile of one build: dbt injects each test's fixture rows
into the model's SQL and parses the result). Once every unit test of the project passed in one build, the same key
(lfh.build.fingerprint.unit_tests_digest, the target and the versions) needs no second run on this checkout:
`lfh build --force` runs them anyway. The record lives in dbt's target folder, beside its partial parse: a fresh
clone has none, so its first build runs them.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from lfh.atomic import written_aside

RECORD_NAME = "unit-tests-passed.json"
VERSIONED_PACKAGES = ("dbt-core", "dbt-duckdb", "duckdb", "dbt-spark", "pyspark")
KEPT_KEYS = 20  # a record per project state and vars; the oldest go


def _versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for package in VERSIONED_PACKAGES:
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = None
    return found


def unit_tests_key(project_digest: str, target: str) -> str:
    """What a unit test's outcome depends on: the project (its SQL, tests, seeds and vars:
    lfh.build.fingerprint.unit_tests_digest), the target and the versions of dbt, its adapters and engines."""
    parts = {"project": project_digest, "target": target, "versions": _versions()}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def _read(target_dir: Path) -> dict[str, str]:
    try:
        record = json.loads((target_dir / RECORD_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # none yet, or unreadable: the unit tests run, and the next pass writes it anew
    return record if isinstance(record, dict) else {}


def passed_at(target_dir: Path, key: str) -> str | None:
    """When every unit test passed under this key on this checkout, or None."""
    value = _read(target_dir).get(key)
    return value if isinstance(value, str) else None


def all_passed(target_dir: Path) -> bool:
    """Whether dbt's last run (run_results.json, manifest.json in target_dir) ran every unit test of the project
    and each passed."""
    try:
        manifest = json.loads((target_dir / "manifest.json").read_text(encoding="utf-8"))
        results = json.loads((target_dir / "run_results.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    expected = set(manifest.get("unit_tests") or {})
    statuses = {result.get("unique_id"): result.get("status") for result in results.get("results") or []}
    return bool(expected) and all(statuses.get(unit_test) == "pass" for unit_test in expected)


def record_passed(target_dir: Path, key: str) -> None:
    """Keep the key of a build in which every unit test passed (written aside and renamed: concurrent builds of one
    checkout leave a whole record, the last writer's)."""
    record = _read(target_dir)
    record[key] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    kept = dict(sorted(record.items(), key=lambda item: item[1])[-KEPT_KEYS:])
    target_dir.mkdir(parents=True, exist_ok=True)
    with written_aside(target_dir / RECORD_NAME) as partial:
        partial.write_text(json.dumps(kept, indent=1, sort_keys=True), encoding="utf-8")
