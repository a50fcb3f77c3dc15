"""The planted biases of `lfh simulate`, read from a TOML file (configs/simulate.default.toml) and checked."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from lfh.errors import ConfigError
from lfh.paths import project_root

RACE_POOLS = ("white", "latine", "black", "asian", "mena", "aian", "nhpi")
DOMAINS = ("learning", "labor", "love")
CONDITIONS = ("baseline", "dominant", "subordinate")
GENDERS = ("female", "male", "nonbinary")
COUPLE_TYPES = ("female_female", "female_male", "female_nonbinary", "male_male", "male_nonbinary",
                "nonbinary_nonbinary")


@dataclass(frozen=True)
class SimModel:
    name: str
    spellings: tuple[str, ...]
    race_multiplier: dict[str, float]
    gender_multiplier: dict[str, float]
    named_multiplier: float
    # Planted differences between models in who is cast as subordinate (issue 21): a race multiplier per condition
    # applied on top of race.condition_multiplier for this model only. Empty (the default) = no difference.
    condition_multiplier: dict[str, dict[str, float]] = field(default_factory=dict)
    # The model version its responses report (written as model_version in the story file), for waves: two entries
    # with the same name and different versions are two waves of one model (docs/RUNS.md). None = not reported.
    version: str | None = None


@dataclass(frozen=True)
class SimConfig:
    source: Path
    seed: int
    stories_per_prompt: int
    samples_per_story: int
    labeler_model: str
    pool_size: int
    pool_min_share: float
    min_count_census: int
    min_count_wikipedia: int
    pool_weight_power: float
    p_last_name: float
    last_names: tuple[str, ...]
    named: dict[str, dict[str, float]]
    pool_mix: dict[str, float]
    condition_multiplier: dict[str, dict[str, float]]
    p_unspecified_gender: float
    gender_shares: dict[str, dict[str, dict[str, float]]]
    couple_shares: dict[str, float]
    p_male_dominant: float
    faults: dict[str, float]
    models: tuple[SimModel, ...] = field(default_factory=tuple)


def default_config_path() -> Path:
    return project_root() / "configs" / "simulate.default.toml"


def _probability(value: object, where: str, source: Path) -> float:
    if not isinstance(value, int | float) or not 0.0 <= float(value) <= 1.0:
        raise ConfigError(f"{source}: {where} = {value!r}: write a probability between 0 and 1")
    return float(value)


def _multipliers(table: object, allowed: tuple[str, ...], where: str, source: Path) -> dict[str, float]:
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: {where} must be a table of name = multiplier")
    unknown = set(table) - set(allowed)
    if unknown:
        raise ConfigError(f"{source}: {where} has unknown keys {sorted(unknown)}; use {list(allowed)}")
    for key, value in table.items():
        if not isinstance(value, int | float) or value < 0:
            raise ConfigError(f"{source}: {where}.{key} = {value!r}: write a number >= 0")
    return {key: float(value) for key, value in table.items()}


def _shares(table: object, allowed: tuple[str, ...], where: str, source: Path) -> dict[str, float]:
    shares = _multipliers(table, allowed, where, source)
    total = sum(shares.values())
    if total <= 0:
        raise ConfigError(f"{source}: {where} sums to 0: give at least one share > 0")
    return {key: shares.get(key, 0.0) / total for key in allowed}


def _require(raw: dict, key: str, source: Path) -> object:
    if key not in raw:
        raise ConfigError(f"{source}: missing setting {key!r} (see configs/simulate.default.toml)")
    return raw[key]


def _model_condition_multipliers(table: object, index: int, source: Path) -> dict[str, dict[str, float]]:
    """models[i].condition_multiplier: {condition: {race pool: multiplier}}, conditions and pools checked."""
    where = f"models[{index}].condition_multiplier"
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: {where} must be a table of condition = {{pool = multiplier}}")
    unknown = set(table) - set(CONDITIONS)
    if unknown:
        raise ConfigError(f"{source}: {where} has unknown conditions {sorted(unknown)}; use {list(CONDITIONS)}")
    return {condition: _multipliers(pools, RACE_POOLS, f"{where}.{condition}", source)
            for condition, pools in table.items()}


def _version(value: object, index: int, source: Path) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{source}: models[{index}].version = {value!r}: write the version name as text")
    return value.strip()


def _check_waves(models: list[SimModel], source: Path) -> None:
    """Entries sharing a name are waves of one model: each needs its own version, and all must write the same
    spellings (they are one model's stories)."""
    by_name: dict[str, list[SimModel]] = {}
    for model in models:
        by_name.setdefault(model.name, []).append(model)
    for name, waves in by_name.items():
        if len(waves) < 2:
            continue
        versions = [wave.version for wave in waves]
        if None in versions or len(set(versions)) != len(versions):
            raise ConfigError(f"{source}: models named {name!r} appear {len(waves)} times: waves of one model need "
                              f"a distinct `version` each (found {versions})")


def load_config(path: Path | None = None) -> SimConfig:
    source = (path or default_config_path()).resolve()
    try:
        raw = tomllib.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{source}: no such simulation config") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML: {exc}") from exc

    names = _require(raw, "names", source)
    named_raw = _require(raw, "named", source)
    named = {domain: {condition: _probability(named_raw.get(domain, {}).get(condition), f"named.{domain}.{condition}",
                                              source)
                      for condition in CONDITIONS} for domain in DOMAINS}
    race = _require(raw, "race", source)
    condition_multiplier = {condition: _multipliers(race.get("condition_multiplier", {}).get(condition, {}),
                                                    RACE_POOLS, f"race.condition_multiplier.{condition}", source)
                            for condition in CONDITIONS}
    gender = _require(raw, "gender", source)
    gender_shares = {domain: {condition: _shares(gender.get("shares", {}).get(domain, {}).get(condition),
                                                 GENDERS, f"gender.shares.{domain}.{condition}", source)
                              for condition in CONDITIONS} for domain in DOMAINS}
    couples = _require(raw, "couples", source)
    faults_raw = raw.get("faults", {})
    faults = {key: _probability(faults_raw.get(key, 0.0), f"faults.{key}", source)
              for key in ("p_malformed", "p_wrapped", "p_unspecified_name", "p_hallucinated_reference")}
    if faults["p_malformed"] + faults["p_wrapped"] + faults["p_unspecified_name"] > 1:
        raise ConfigError(f"{source}: faults.p_malformed + p_wrapped + p_unspecified_name must be <= 1")

    models = []
    for index, entry in enumerate(_require(raw, "models", source)):
        name = entry.get("name")
        if not name:
            raise ConfigError(f"{source}: models[{index}] has no name")
        spellings = tuple(entry.get("spellings") or [name])
        models.append(SimModel(
            name=name, spellings=spellings,
            race_multiplier=_multipliers(entry.get("race_multiplier", {}), RACE_POOLS,
                                         f"models[{index}].race_multiplier", source),
            gender_multiplier=_multipliers(entry.get("gender_multiplier", {}), GENDERS,
                                           f"models[{index}].gender_multiplier", source),
            named_multiplier=float(entry.get("named_multiplier", 1.0)),
            condition_multiplier=_model_condition_multipliers(entry.get("condition_multiplier", {}), index, source),
            version=_version(entry.get("version"), index, source),
        ))
    if not models:
        raise ConfigError(f"{source}: define at least one [[models]] entry")
    _check_waves(models, source)

    samples = int(_require(raw, "samples_per_story", source))
    stories = int(_require(raw, "stories_per_prompt", source))
    if samples < 1 or stories < 1:
        raise ConfigError(f"{source}: samples_per_story and stories_per_prompt must be >= 1")
    return SimConfig(
        source=source, seed=int(raw.get("seed", 0)), stories_per_prompt=stories, samples_per_story=samples,
        labeler_model=str(raw.get("labeler_model", "sim-labeler")),
        pool_size=int(names.get("pool_size", 20)),
        pool_min_share=_probability(names.get("pool_min_share", 0.6), "names.pool_min_share", source),
        min_count_census=int(names.get("min_count_census", 1000)),
        min_count_wikipedia=int(names.get("min_count_wikipedia", 30)),
        pool_weight_power=float(names.get("pool_weight_power", 0.5)),
        p_last_name=_probability(names.get("p_last_name", 0.0), "names.p_last_name", source),
        last_names=tuple(names.get("last_names", ())),
        named=named,
        pool_mix=_shares(race.get("pool_mix"), RACE_POOLS, "race.pool_mix", source),
        condition_multiplier=condition_multiplier,
        p_unspecified_gender=_probability(gender.get("p_unspecified", 0.0), "gender.p_unspecified", source),
        gender_shares=gender_shares,
        couple_shares=_shares(couples.get("shares"), COUPLE_TYPES, "couples.shares", source),
        p_male_dominant=_probability(couples.get("p_male_dominant", 0.5), "couples.p_male_dominant", source),
        faults=faults,
        models=tuple(models),
    )
