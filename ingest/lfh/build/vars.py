"""Checking `--var NAME=VALUE` before dbt runs: the known vars and their defaults come from dbt_project.yml, the
rules a default cannot express (ranges, choices) from configs/build_vars.toml. dbt itself ignores unknown vars and
fails late (or not at all) on a wrong type, so a misspelled var would silently build with the default."""

from __future__ import annotations

import csv
import difflib
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from lfh.errors import ConfigError
from lfh.paths import project_root

RULES_FILE = Path("configs") / "build_vars.toml"


class BuildVarError(ConfigError):
    """A --var that dbt would ignore or misread; the message is one line naming the valid choices."""


@dataclass(frozen=True)
class VarRule:
    name: str
    default: Any
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] | None = None
    nullable: bool = False
    marts_only: bool = False
    above: float | None = None  # an exclusive lower bound (wilson_z > 0)

    @property
    def kind(self) -> str:
        if isinstance(self.default, bool):
            return "true or false"
        if isinstance(self.default, int):
            return "a whole number"
        if isinstance(self.default, float):
            return "a number"
        if isinstance(self.default, list):
            return "a list, e.g. [a, b]"
        if isinstance(self.default, dict):
            return "a mapping of text to text, e.g. {a: b}"
        return "text"


def project_var_defaults(root: Path | None = None) -> dict[str, Any]:
    document = yaml.safe_load(((root or project_root()) / "dbt_project.yml").read_text(encoding="utf-8"))
    return dict(document.get("vars") or {})


def _seed_column(root: Path, reference: str) -> tuple[str, ...]:
    seed, _, column = reference.partition(":")
    with (root / "seeds" / f"{seed}.csv").open(encoding="utf-8", newline="") as handle:
        return tuple(sorted({row[column] for row in csv.DictReader(handle) if row.get(column)}))


def var_rules(root: Path | None = None) -> dict[str, VarRule]:
    root = root or project_root()
    declared = tomllib.loads((root / RULES_FILE).read_text(encoding="utf-8"))
    rules = {}
    for name, default in project_var_defaults(root).items():
        spec = declared.get(name, {})
        choices = spec.get("choices")
        if "choices_from_seed" in spec:
            choices = _seed_column(root, spec["choices_from_seed"])
        rules[name] = VarRule(name, default, spec.get("min"), spec.get("max"),
                              tuple(choices) if choices is not None else None,
                              bool(spec.get("nullable", default is None)), bool(spec.get("marts_only", False)),
                              spec.get("above"))
    return rules


def parse_var_text(value: str) -> Any:
    """Numbers, booleans, null, lists and mappings as YAML/JSON (`[a, b]`, `{a: b}` too); anything else as text."""
    try:
        return json.loads(value)
    except ValueError:
        pass
    try:
        parsed = yaml.safe_load(value)
    except yaml.YAMLError:
        return value
    return parsed if isinstance(parsed, list | dict) else value


def _check(rule: VarRule, value: Any) -> Any:
    if value is None:
        if rule.nullable:
            return None
        raise BuildVarError(f"--var {rule.name}: null is not allowed; give {rule.kind} (default {rule.default!r})")
    default = rule.default
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif isinstance(default, list):
        ok = isinstance(value, list)
    elif isinstance(default, dict):  # e.g. model_version_selected: {model: version or 'pooled'}
        ok = isinstance(value, dict) and all(isinstance(item, str) for pair in value.items() for item in pair)
    else:
        ok = isinstance(value, str | int | float) and not isinstance(value, bool)
        value = str(value) if ok else value
    bounds = ""
    if rule.minimum is not None or rule.maximum is not None:
        bounds = f" between {rule.minimum if rule.minimum is not None else '-inf'} and " \
                 f"{rule.maximum if rule.maximum is not None else 'inf'}"
    if not ok:
        raise BuildVarError(f"--var {rule.name}={json.dumps(value)}: must be {rule.kind}{bounds} "
                            f"(default {json.dumps(default)})")
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    if numeric and ((rule.minimum is not None and value < rule.minimum)
                    or (rule.maximum is not None and value > rule.maximum)):
        raise BuildVarError(f"--var {rule.name}={value}: must be{bounds} (default {default})")
    if numeric and rule.above is not None and value <= rule.above:
        raise BuildVarError(f"--var {rule.name}={value}: must be greater than {rule.above} (default {default})")
    if rule.choices is not None and value not in rule.choices:
        raise BuildVarError(f"--var {rule.name}={value}: not a valid choice; valid: {', '.join(rule.choices)}")
    return value


def validate_vars(assignments: list[str], root: Path | None = None) -> dict[str, Any]:
    """`NAME=VALUE` texts -> dbt vars, or BuildVarError for the first one dbt would ignore or misread."""
    rules = var_rules(root)
    values: dict[str, Any] = {}
    for item in assignments:
        name, separator, text = item.partition("=")
        name = name.strip()
        if not separator or not name:
            raise BuildVarError(f"--var {item!r}: write NAME=VALUE, e.g. --var vote_threshold=0.6")
        rule = rules.get(name)
        if rule is None:
            close = difflib.get_close_matches(name, rules, n=1)
            hint = f"did you mean {close[0]}? " if close else ""
            raise BuildVarError(f"--var {name}: unknown var; {hint}known vars: {', '.join(sorted(rules))}")
        values[name] = _check(rule, parse_var_text(text))
    _check_ordered(values, rules)
    return values


# (lower var, upper var): pairs whose values must stay ordered, checked with the defaults of the one not given
ORDERED_PAIRS = (("racialized_threshold_min", "racialized_threshold_max"),)


def _check_ordered(values: dict[str, Any], rules: dict[str, VarRule]) -> None:
    for low, high in ORDERED_PAIRS:
        if low not in rules or high not in rules or (low not in values and high not in values):
            continue
        low_value, high_value = values.get(low, rules[low].default), values.get(high, rules[high].default)
        if isinstance(low_value, int | float) and isinstance(high_value, int | float) and low_value > high_value:
            raise BuildVarError(f"--var {low}={low_value} is above {high}={high_value}: the range would be empty")
