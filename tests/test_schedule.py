"""make test's module order (tests/tiers.py): the modules it names exist, the Spark build is first with the next
longest module second (the other worker's first), and the cheap module queued behind the Spark build has many
tests."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import tiers

TESTS = Path(__file__).parent


def test_every_scheduled_module_exists() -> None:
    missing = [name for name in tiers.module_order() if not (TESTS / name).is_file()]
    assert not missing, f"tests/tiers.py schedules modules that are gone (renamed?): {missing}"
    assert len(set(tiers.module_order())) == len(tiers.module_order())


def test_the_spark_build_starts_first_and_a_cheap_module_waits_behind_it() -> None:
    names = ["test_z_fast.py", tiers.BEHIND_SPARK, *reversed(tiers.SLOW_FIRST)]
    items = [SimpleNamespace(path=TESTS / name) for name in names]
    tiers.pytest_collection_modifyitems(items)  # type: ignore[arg-type]
    ordered = list(dict.fromkeys(item.path.name for item in items))
    assert ordered[:3] == ["test_spark.py", tiers.SLOW_FIRST[1], tiers.BEHIND_SPARK]
    assert ordered[-1] == "test_z_fast.py"
    source = (TESTS / tiers.BEHIND_SPARK).read_text(encoding="utf-8")
    assert "parametrize" in source and "slow" not in source  # many fast tests
