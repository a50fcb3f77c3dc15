"""The rooms of docs/ARCHITECTURE.md: no import cycles inside the lfh package, between its modules nor between its
subpackages, counting imports inside functions too (a lazy import that only hides a cycle is still one), and no
library module writing to the terminal."""

from __future__ import annotations

import ast
from pathlib import Path

import lfh

PACKAGE = Path(lfh.__file__).parent


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The lfh modules a file imports (a name imported from a package counts as its submodule when it is one)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module in modules:
            submodules = {f"{node.module}.{alias.name}" for alias in node.names} & modules
            found.update(submodules or {node.module})
            if len(submodules) < len(node.names):
                found.add(node.module)
    return found


def import_graph() -> dict[str, set[str]]:
    files = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    return {name: imports_of(path, set(files)) - {name} for name, path in files.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_is_read() -> None:
    graph = import_graph()
    assert "lfh.lexicon.parquet" in graph["lfh.lexicon.load"]  # a known edge: the check sees imports
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]  # and finds a cycle


def test_no_import_cycles() -> None:
    found = cycles(import_graph())
    assert not found, f"import cycles in lfh (each list imports itself round): {found}"


def subpackage(module: str) -> str:
    """The room a module lives in: lfh.<subpackage> (a top-level module, e.g. lfh.db, is a room of its own)."""
    return ".".join(module.split(".")[:2])


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The import graph between rooms: an edge where any module of one imports any module of another."""
    rooms: dict[str, set[str]] = {}
    for module, targets in graph.items():
        rooms.setdefault(subpackage(module), set()).update(
            subpackage(target) for target in targets if subpackage(target) != subpackage(module))
    return rooms


def test_no_import_cycles_between_subpackages() -> None:
    # no cycle of modules can still be a cycle of rooms (lfh.a.x -> lfh.b.y -> lfh.a.z): one direction between them
    assert cycles(package_graph({"lfh.a.x": {"lfh.b.y"}, "lfh.b.y": {"lfh.a.z"}, "lfh.a.z": set()})) == [
        ["lfh.a", "lfh.b"]]
    rooms = package_graph(import_graph())
    assert "lfh.build" in rooms["lfh.audit"]  # a known edge: the check sees imports between rooms
    found = cycles(rooms)
    assert not found, f"import cycles between lfh's subpackages (docs/ARCHITECTURE.md): {found}"


# library modules that write to the terminal, and why (only lfh/cli/ talks to the user: docs/ARCHITECTURE.md)
TERMINAL_WRITERS_ALLOWED = {
    "lfh.build.accent_fold",  # its __main__ writes the generated macro to stdout (> macros/dialect/accent_fold.sql)
}


def terminal_writers() -> set[str]:
    writers = set()
    for path in PACKAGE.rglob("*.py"):
        name = module_name(path)
        if name.startswith("lfh.cli"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            called = node.func if isinstance(node, ast.Call) else None
            if isinstance(called, ast.Name) and called.id == "print":
                writers.add(name)
            stream = called.value if isinstance(called, ast.Attribute) and called.attr == "write" else None
            if isinstance(stream, ast.Attribute) and stream.attr in ("stdout", "stderr"):
                writers.add(name)
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                modules = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                if any(module.split(".")[0] in ("rich", "click") for module in modules):
                    writers.add(name)
    return writers


def test_library_modules_print_nothing() -> None:
    """Progress and messages go through a callback (echo, a RunReporter) that the CLI renders."""
    found = terminal_writers()
    assert found - TERMINAL_WRITERS_ALLOWED == set(), "library modules writing to the terminal (pass a callback)"
    assert found >= TERMINAL_WRITERS_ALLOWED, "allowed writers that no longer write: remove them from the list"
