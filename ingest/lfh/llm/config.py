"""The models file: which endpoints `lfh generate` and `lfh label` talk to, and how hard they may push them.

A TOML file with one `[models.<name>]` table per model (see configs/models.example.toml). The API key itself is
never in the file: only the name of the environment variable that holds it.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path

from lfh.errors import ConfigError


@dataclass(frozen=True)
class ModelConfig:
    name: str
    model: str
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    # sent as the request's `seed` (best-effort determinism where the endpoint supports it)
    seed: int | None = None
    # choices per request (the `n` parameter); 1 where the endpoint does not support it
    samples_per_call: int = 1
    # US dollars per 1,000,000 tokens, for the cost estimate only
    price_prompt_per_million: float = 0.0
    price_completion_per_million: float = 0.0
    concurrency: int = 16
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    timeout_seconds: float = 60.0
    max_tries: int = 6
    backoff_base_seconds: float = 1.0
    backoff_max_seconds: float = 60.0

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.price_prompt_per_million
                + completion_tokens * self.price_completion_per_million) / 1_000_000


_FIELD_TYPES = {field.name: field.type for field in fields(ModelConfig)}


def _dotted_name(name: str, table: dict) -> str | None:
    """The full name when an unquoted dotted table name (`[models.gpt-3.5-turbo]`) was split into nested tables."""
    if "model" in table or len(table) != 1:
        return None
    (part, inner), = table.items()
    if not isinstance(inner, dict):
        return None
    deeper = _dotted_name(part, inner)
    return f"{name}.{deeper or part}"


def load_models(path: Path) -> dict[str, ModelConfig]:
    """Every model in the file, by name. Raises ConfigError naming the file, model and key on bad input."""
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: models file not found (copy configs/models.example.toml)") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    tables = document.get("models")
    if not isinstance(tables, dict) or not tables:
        raise ConfigError(f"{path}: needs at least one [models.<name>] table")
    models: dict[str, ModelConfig] = {}
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: models.{name} must be a table")
        dotted = _dotted_name(name, table)
        if dotted:
            raise ConfigError(
                f"{path}: [models.{dotted}] is read as nested tables because of the dot(s) in the name; "
                f'quote the name: [models."{dotted}"]'
            )
        unknown = sorted(set(table) - set(_FIELD_TYPES) - {"name"})
        if unknown:
            raise ConfigError(
                f"{path}: models.{name}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(_FIELD_TYPES))}"
            )
        if "api_key" in table:
            raise ConfigError(f"{path}: models.{name}: put the key in an environment variable "
                              "and name it with api_key_env")
        if "model" not in table:
            raise ConfigError(f"{path}: models.{name}: missing required key 'model' (the endpoint's model id)")
        try:
            config = ModelConfig(**{"name": name, **table})
        except TypeError as exc:
            raise ConfigError(f"{path}: models.{name}: {exc}") from None
        if config.samples_per_call < 1 or config.concurrency < 1 or config.max_tries < 1:
            raise ConfigError(
                f"{path}: models.{name}: samples_per_call, concurrency and max_tries must be at least 1"
            )
        models[name] = config
    return models


def pick_models(path: Path, names: tuple[str, ...]) -> list[ModelConfig]:
    models = load_models(path)
    if not names:
        return list(models.values())
    missing = [name for name in names if name not in models]
    if missing:
        raise ConfigError(f"{path}: no model named {', '.join(missing)}; the file has {', '.join(models)}")
    return [models[name] for name in names]


def api_key(config: ModelConfig) -> str:
    """The key from the environment. The error names the variable, never a value."""
    value = os.environ.get(config.api_key_env, "")
    if not value:
        raise ConfigError(
            f"model {config.name}: environment variable {config.api_key_env} is empty or unset; "
            "export the API key there (local servers accept any non-empty value)"
        )
    return value
