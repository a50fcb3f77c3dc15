"""Every relation the Python package reads is a mart or declared as a dependency of an exposure
(models/marts/_exposures.yml), so that dbt's lineage shows who reads it and a change to it is seen as one to a
public interface. The check reads every string literal of ingest/lfh (docstrings aside) for schema-qualified names
of the non-mart layers."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import yaml

import lfh
from lfh.paths import project_root

PACKAGE = Path(lfh.__file__).parent
EXPOSURES = project_root() / "models" / "marts" / "_exposures.yml"
RELATION = re.compile(r"\b(intermediate|staging|reference)\.([a-z][a-z0-9_]*)\b")
# names that are not reads of the warehouse, and why
NOT_READS = {
    "reference.baselines": "lfh.serve.spark writes it into the copy it stages from Spark's files (a write)",
}


def declared() -> set[str]:
    """The models and seeds some exposure depends on (ref('name'))."""
    document = yaml.safe_load(EXPOSURES.read_text(encoding="utf-8"))
    names = set()
    for exposure in document["exposures"]:
        for dependency in exposure.get("depends_on", []):
            found = re.fullmatch(r"ref\('([a-z0-9_]+)'\)", dependency)
            if found:
                names.add(found.group(1))
    return names


def relations_named(source: str) -> set[str]:
    """schema.relation names of the non-mart layers in the string literals of a module (not its docstrings)."""
    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and ast.get_docstring(node, clean=False) is not None}
    return {match.group(0) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
            for match in RELATION.finditer(node.value)}


def test_the_check_reads_names() -> None:
    source = '"""Reads intermediate.int_docs."""\nSQL = "select * from intermediate.int_units join reference.codes"\n'
    assert relations_named(source) == {"intermediate.int_units", "reference.codes"}
    assert {"int_correction_units_counted", "dim_stories"} <= declared()


def test_every_relation_python_reads_is_declared() -> None:
    exposed = declared()
    undeclared = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for relation in relations_named(path.read_text(encoding="utf-8")):
            if relation not in NOT_READS and relation.split(".", 1)[1] not in exposed:
                undeclared.setdefault(relation, []).append(str(path.relative_to(PACKAGE.parent)))
    assert not undeclared, f"declare them in {EXPOSURES.name} (depends_on of the exposure reading them): {undeclared}"
