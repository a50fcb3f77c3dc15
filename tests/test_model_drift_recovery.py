"""fct_model_drift recovers what the simulator planted between two waves of one model (docs/RUNS.md, "Drift").

Two simulated models, each in two waves (SimModel.version: two [[models]] entries sharing a name): Sim-N's waves
come from the same generator under two version names (every drift contrast is planted equal), Sim-S's second wave
has more Black-named characters (race multiplier 4) and more women (gender multiplier 3). Rules: the planted change
is found in the planted direction (every Black race row and every female gender row of Sim-S drifts up, most of
them with q < 0.05, and no contrast of Sim-S is significant against its planted direction), and the planted-equal
waves are called different (p < 0.05) in about 5% of their contrasts, not more (at most 9%, as the model contrasts'
recovery test allows). One small corpus (10 stories a prompt and wave), built up to fct_model_drift without tests."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import duckdb
import polars as pl
import pytest
from conftest import build_once
from fixtures_simulate import write_test_lexicon

from lfh.simulate.config import SimModel, load_config

pytestmark = pytest.mark.slow
NULL_RATE_MAX = 0.09  # share of planted-equal contrasts with p < 0.05 (nominal 5%)
FOUND_SHARE_MIN = 0.7  # share of the planted rows found (q < 0.05) in the planted direction


def wave_models() -> tuple[SimModel, ...]:
    null = SimModel("Sim-N", ("Sim-N",), {}, {}, 1.0, version="sim-n-wave-1")
    shifted = SimModel("Sim-S", ("Sim-S",), {}, {}, 1.0, version="sim-s-wave-1")
    return (null, replace(null, version="sim-n-wave-2"), shifted,
            replace(shifted, version="sim-s-wave-2", race_multiplier={"black": 4.0},
                    gender_multiplier={"female": 3.0}))


@pytest.fixture(scope="module")
def drift(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    from lfh.build.dbt import run_dbt
    from lfh.landing.ingest import ingest_paths
    from lfh.simulate.run import run_simulation

    def build(folder: Path) -> None:
        db_path = folder / "lfh.duckdb"
        write_test_lexicon(db_path)
        config = replace(load_config(), stories_per_prompt=10, seed=11, models=wave_models())
        run_simulation(config, folder / "landing", db_path)
        results, _skipped = ingest_paths([folder / "landing"], db_path)  # the rows and their run manifests
        assert all(item.error is None for item in results), [item.summary() for item in results]
        run_dbt(["build", "--select", "+fct_model_drift", "+dim_runs", "--exclude-resource-type", "test",
                 "--exclude-resource-type", "unit_test"], db_path=db_path, capture=True)

    folder = build_once(tmp_path_factory, "drift", build)
    with duckdb.connect(str(folder / "lfh.duckdb"), read_only=True) as connection:
        return connection.sql("select * from marts.fct_model_drift").pl()


def test_every_wave_is_a_version_compared_with_the_one_before(drift: pl.DataFrame) -> None:
    pairs = drift.select("model", "model_version", "previous_version", "version_number").unique().sort("model")
    assert pairs.rows() == [("Sim-N", "sim-n-wave-2", "sim-n-wave-1", 2), ("Sim-S", "sim-s-wave-2", "sim-s-wave-1", 2)]
    assert set(drift["measure"]) == {"representation", "subordination", "couple_type"}


def test_the_planted_change_is_found_in_its_direction(drift: pl.DataFrame) -> None:
    shifted = drift.filter(pl.col("model") == "Sim-S", pl.col("measure") == "representation")
    planted = pl.concat([
        shifted.filter(pl.col("race") == "black", pl.col("gender").is_null()),
        shifted.filter(pl.col("race").is_null(), pl.col("gender") == "female")])
    assert planted.height == 18  # 3 domains x 3 conditions, Black race rows and female gender rows
    assert (planted["drift_ratio"] > 1).all(), planted.select("domain", "condition", "race", "gender", "drift_ratio")
    found = planted.filter(pl.col("drift_q_value") < 0.05).height / planted.height
    assert found >= FOUND_SHARE_MIN, f"planted change found in {found:.0%} of its rows"
    against = drift.filter(pl.col("model") == "Sim-S", pl.col("measure") == "representation",
                           pl.col("drift_q_value") < 0.05,
                           ((pl.col("race") == "black") & pl.col("gender").is_null() & (pl.col("drift_ratio") < 1))
                           | (pl.col("race").is_null() & (pl.col("gender") == "female") & (pl.col("drift_ratio") < 1)))
    assert against.height == 0


def test_the_same_generator_under_two_names_is_called_different_at_about_the_nominal_rate(
        drift: pl.DataFrame) -> None:
    tested = drift.filter(pl.col("model") == "Sim-N", pl.col("drift_p_value").is_not_null())
    assert tested.height > 300
    rate = tested.filter(pl.col("drift_p_value") < 0.05).height / tested.height
    print(f"planted-equal waves: p < 0.05 in {rate:.1%} of {tested.height} contrasts")
    assert rate <= NULL_RATE_MAX
    assert tested.filter(pl.col("drift_q_value") < 0.05).height / tested.height <= 0.05
