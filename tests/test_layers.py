"""The layers of docs/ARCHITECTURE.md, read from dbt's own lineage (target/manifest.json of `dbt parse`), so a `ref()`
to a later layer, a `-- depends_on:` comment or a stray `source()` fails here, whoever merges it:

- data flows one way: staging -> intermediate -> marts; no staging or intermediate model depends on a mart, and no
  staging model on an intermediate one;
- only staging models read sources, except the pairs in SOURCE_READERS_ALLOWED, each with its reason.

A read by name (adapter.get_relation with a literal table name) is not in the lineage: models/ is searched for it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lfh.paths import project_root

LAYERS = ("staging", "intermediate", "marts")

# (model, source table): intermediate models allowed to read a source, and why. Keep it short.
SOURCE_READERS_ALLOWED = {
    # the incremental layer's change list compares the raw rows' load times and load ids (provenance that staging
    # need not carry) with what the last complete build recorded (meta, written by lfh build: docs/INCREMENTAL.md)
    ("int_stories_changed", "raw.stories"),
    ("int_stories_changed", "raw.label_responses"),
    ("int_stories_changed", "build_state.stories_built"),
    ("int_stories_changed", "build_state.loads_built"),
}


@pytest.fixture(scope="module")
def manifest(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """`dbt parse` as `lfh build` runs dbt (its profile, a warehouse named lfh.duckdb), in a target folder of its own
    given the worker's parse (conftest.reuse_parse): dbt reparses every file that changed since, and in full when
    the project, vars or profile differ, so the lineage is the project's as it stands either way."""
    from conftest import reuse_parse

    from lfh.build.dbt import run_dbt

    folder = tmp_path_factory.mktemp("parse")
    reuse_parse(folder / "target")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DBT_TARGET_PATH", str(folder / "target"))
        patch.setenv("DBT_LOG_PATH", str(folder / "logs"))
        run_dbt(["parse"], db_path=folder / "lfh.duckdb", capture=True)
    return json.loads((folder / "target" / "manifest.json").read_text(encoding="utf-8"))


def layer_of(node: dict) -> str:
    parts = Path(node["original_file_path"]).parts
    assert parts[0] == "models" and parts[1] in LAYERS, f"{node['original_file_path']}: not in a layer's folder"
    return parts[1]


def models(manifest: dict) -> dict[str, dict]:
    return {key: node for key, node in manifest["nodes"].items() if node["resource_type"] == "model"}


def test_no_model_reads_a_later_layer(manifest: dict) -> None:
    nodes = models(manifest)
    assert len(nodes) > 30  # the project parsed (a silent empty manifest would pass everything)
    backwards = []
    for node in nodes.values():
        position = LAYERS.index(layer_of(node))
        for parent in node["depends_on"]["nodes"]:
            if parent in nodes and LAYERS.index(layer_of(nodes[parent])) > position:
                backwards.append(f"{node['name']} ({layer_of(node)}) -> {nodes[parent]['name']}")
            if parent in nodes and layer_of(node) == "staging" and layer_of(nodes[parent]) == "staging":
                backwards.append(f"{node['name']} (staging) -> {nodes[parent]['name']}: staging reads sources only")
    assert not backwards, "models reading a later layer (docs/ARCHITECTURE.md):\n" + "\n".join(backwards)


def test_only_staging_reads_sources(manifest: dict) -> None:
    nodes, sources = models(manifest), manifest["sources"]
    readers = set()
    for node in nodes.values():
        for parent in node["depends_on"]["nodes"]:
            if parent in sources and layer_of(node) != "staging":
                readers.add((node["name"], f"{sources[parent]['source_name']}.{sources[parent]['name']}"))
    assert readers - SOURCE_READERS_ALLOWED == set(), "sources read outside staging (read a stg_ view instead)"
    assert SOURCE_READERS_ALLOWED - readers == set(), "allowed source reads that no longer happen: remove them"


def test_no_model_reads_a_relation_by_name() -> None:
    """adapter.get_relation / load_relation with a literal name hide a dependency from the lineage above."""
    by_name = re.compile(r"(get_relation|load_relation)\s*\([^)]*identifier\s*=\s*['\"]")
    found = [str(path.relative_to(project_root())) for path in sorted((project_root() / "models").rglob("*.sql"))
             if by_name.search(path.read_text(encoding="utf-8"))]
    assert not found, f"models reading a relation by name, invisible to dbt's lineage: {found}"
    ordering = [str(path.relative_to(project_root())) for path in sorted((project_root() / "models").rglob("*.sql"))
                if "depends_on:" in path.read_text(encoding="utf-8")]
    assert not ordering, f"`-- depends_on:` ordering comments (build order must follow real reads): {ordering}"
