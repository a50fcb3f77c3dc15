"""Every config file the project ships loads as shipped: a newcomer copies them first."""

from __future__ import annotations

from pathlib import Path

import pytest

from lfh.errors import ConfigError
from lfh.llm.config import load_models
from lfh.paths import project_root
from lfh.simulate.config import load_config

CONFIGS = project_root() / "configs"


def test_every_shipped_config_is_covered() -> None:
    assert sorted(path.name for path in CONFIGS.glob("*.toml")) == [
        "build_vars.toml", "models.example.toml", "simulate.default.toml"]


def test_build_vars_load() -> None:
    from lfh.build.vars import var_rules

    assert "vote_threshold" in var_rules()


def test_models_example_loads_with_the_names_it_shows() -> None:
    models = load_models(CONFIGS / "models.example.toml")
    assert list(models) == ["gpt-3.5-turbo", "gpt-4o-mini", "labeler", "llama-local"]
    assert models["gpt-3.5-turbo"].model == "gpt-3.5-turbo"


def test_simulate_default_loads() -> None:
    assert load_config(CONFIGS / "simulate.default.toml").stories_per_prompt > 0


@pytest.mark.parametrize("header", ["[models.gpt-3.5-turbo]", "[models.a.b.c]"])
def test_unquoted_dotted_model_name_is_named_with_the_fix(tmp_path: Path, header: str) -> None:
    path = tmp_path / "models.toml"
    path.write_text(f'{header}\nmodel = "x"\n', encoding="utf-8")
    name = header.removeprefix("[models.").removesuffix("]")
    with pytest.raises(ConfigError) as caught:
        load_models(path)
    assert f'[models."{name}"]' in str(caught.value)
    assert str(path) in str(caught.value)
