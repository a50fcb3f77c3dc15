"""Whether `lfh build` has nothing to do: the last complete build's record (meta.build_fingerprint) holds, beside
the fingerprint of the project (lfh.build.fingerprint), what had landed in the raw layer when it started
(lfh.build.state.landed_signature) and whether it ran its data tests. When the fingerprint is the same, nothing
has landed since and those tests ran (or this build skips them), dbt would rebuild every table to the same rows:
the build says so and does not start dbt (`lfh build --force` runs it anyway). The check reads row counts, file
listings and the project's files; it neither imports dbt nor parses the project with it.
"""

from __future__ import annotations

import json
from typing import Any

LANDED = "landed"  # the raw layer when the build started (a load landing during the build is new to the next)
DATA_TESTS = "data_tests"  # whether the build ran its data tests
RECORD_ONLY = (LANDED, DATA_TESTS)  # kept with the fingerprint, never a reason for a full rebuild


def build_record(current: dict[str, Any], landed: dict[str, str], data_tests: bool) -> dict[str, Any]:
    """What a complete build stores: its fingerprint, the raw layer it started from, whether it ran data tests."""
    return {**current, LANDED: landed, DATA_TESTS: data_tests}


def _normal(value: Any) -> Any:
    """As stored: through JSON (tuples become lists, other values their text), so a round trip compares equal."""
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def nothing_to_do(stored: dict[str, Any] | None, current: dict[str, Any], landed: dict[str, str],
                  skip_tests: bool, state_recorded: bool) -> bool:
    """True when the last complete build (stored) computed every table from the same project, vars and raw rows,
    its bookkeeping is there, and it ran the data tests (or this build would skip them anyway)."""
    if stored is None or not state_recorded or LANDED not in stored:
        return False
    fingerprint = {key: value for key, value in stored.items() if key not in RECORD_ONLY}
    if fingerprint != _normal(current) or stored[LANDED] != _normal(landed):
        return False
    return bool(stored.get(DATA_TESTS)) or skip_tests
