"""Every `lfh` command is documented: it appears in the README and has help text (as sqlite-utils' test_docs)."""

from __future__ import annotations

import re

import click
import pytest

from lfh.cli import COMMANDS, main
from lfh.paths import project_root

README = (project_root() / "README.md").read_text(encoding="utf-8")


def _command(name: str) -> click.Command:
    with click.Context(main) as context:
        command = main.get_command(context, name)
    assert command is not None, f"lfh {name}: its module does not import"
    return command


def test_the_group_lists_every_registered_command() -> None:
    with click.Context(main) as context:
        assert main.list_commands(context) == sorted(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_command_is_in_the_readme(name: str) -> None:
    assert re.search(rf"`lfh {re.escape(name)}\b", README), f"README.md never shows `lfh {name}`"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_command_has_help(name: str) -> None:
    command = _command(name)
    assert command.help and command.help.strip(), f"lfh {name} has no help text (its docstring)"
    assert command.get_short_help_str(), f"lfh {name} has no short help for `lfh --help`"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_command_is_registered_under_its_own_name(name: str) -> None:
    assert _command(name).name == name


MACRO_SIGNATURE = re.compile(r"\{%-?\s*macro\s+(\w+)\(([^)]*)\)")


def test_every_macro_is_documented_with_its_arguments() -> None:
    import yaml

    root = project_root()
    documented = {entry["name"]: entry for entry in
                  yaml.safe_load((root / "macros" / "_macros.yml").read_text(encoding="utf-8"))["macros"]}
    for path in sorted((root / "macros").rglob("*.sql")):
        for name, arguments in MACRO_SIGNATURE.findall(path.read_text(encoding="utf-8")):
            entry = documented.get(name)
            assert entry is not None and entry.get("description"), f"{path.name}: {name} not in macros/_macros.yml"
            wanted = [argument.split("=")[0].strip() for argument in arguments.split(",") if argument.strip()]
            given = [argument["name"] for argument in entry.get("arguments", [])]
            assert given == wanted, f"macros/_macros.yml: {name} documents {given}, the macro takes {wanted}"
            assert all(argument.get("description") for argument in entry.get("arguments", [])), name


def test_every_seed_is_documented_column_by_column() -> None:
    import polars as pl
    import yaml

    root = project_root()
    documented = {entry["name"]: entry for entry in
                  yaml.safe_load((root / "seeds" / "_seeds.yml").read_text(encoding="utf-8"))["seeds"]}
    for path in sorted((root / "seeds").glob("*.csv")):
        entry = documented.get(path.stem)
        assert entry is not None and entry.get("description"), f"seeds/_seeds.yml does not describe {path.name}"
        columns = pl.read_csv(path, n_rows=0, infer_schema=False).columns
        described = [column["name"] for column in entry.get("columns", [])]
        assert described == columns, f"seeds/_seeds.yml: {path.stem} describes {described}, the file has {columns}"
