"""No import circles in the product (fusionviz/, ui/, pages/, app.py), beside the layer rules of test_layers.py:
a module that imports one which imports it back, at module level or inside a function, makes a circle."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tests.unit.test_layers import ROOT, imports_of

PRODUCT = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")),
           *sorted(p for folder in ("fusionviz", "ui") for p in (ROOT / folder).rglob("*.py"))]

Graph = dict[str, set[str]]


def module_name(path: Path) -> str:
    """`fusionviz/analysis/report.py` → "fusionviz.analysis.report"; a package's `__init__.py` is the package."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(paths: Iterable[Path]) -> Graph:
    """Each module's imports of the product's own modules (`from a import b` counts as a.b where b is a module)."""
    modules = {module_name(p): p for p in paths}
    return {name: {n for n in imports_of(path) if n in modules and n != name} for name, path in modules.items()}


def circles(graph: Graph) -> list[frozenset[str]]:
    """The strongly connected parts of more than one module (Tarjan's algorithm): the modules that import each
    other, through one another."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            part: set[str] = set()
            while True:
                member = stack.pop()
                part.add(member)
                if member == node:
                    break
            if len(part) > 1:
                found.append(frozenset(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def circle_in(graph: Graph, part: frozenset[str]) -> list[str]:
    """One circle through the first module of a strongly connected part, in import order: the shortest way back
    to it."""
    start = min(part)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        reached = []
        for node in frontier:
            for target in sorted(graph[node] & part):
                if target == start:
                    return [*paths[node], start]
                if target not in paths:
                    paths[target] = [*paths[node], target]
                    reached.append(target)
        frontier = reached
    raise AssertionError(f"{sorted(part)} is not strongly connected")


def test_the_product_imports_in_no_circle() -> None:
    graph = import_graph(PRODUCT)
    assert "fusionviz.analysis.report" in graph and "ui.lab" in graph and "app" in graph  # the graph is the product's
    found = circles(graph)
    assert not found, "import circles:\n" + "\n".join(
        f"{' → '.join(circle_in(graph, part))}  ({len(part)} modules in all: {', '.join(sorted(part))})"
        for part in found)


def test_a_circle_is_found_and_shown_in_import_order() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}
    assert circles(graph) == [{"a", "b", "c"}]
    assert circle_in(graph, frozenset({"c", "b", "a"})) == ["a", "b", "c", "a"]
