"""No runtime import cycles in `boardlib`, `kanban` or `tui`.

The graph is grimp's (import-linter's own): every `import` statement of every module, including
those deferred into a function body, without those under `if TYPE_CHECKING:`. A deferred import
is a runtime import too: it only hides a cycle from the interpreter until the function first
runs (kanban/http's app and routes once leaned on that), so it counts. An annotation-only import
never runs, so it does not. A package's implicit import of its parent `__init__` is not an edge.
"""

from collections.abc import Iterable
from itertools import pairwise
from pathlib import Path

import grimp
import pytest

PACKAGES = ("boardlib", "kanban", "tui")


def import_cycles(packages: Iterable[str]) -> list[list[str]]:
    """One shortest cycle per strongly connected group of modules (each as `a -> b -> ... -> a`
    with the line of every import), sorted; [] when the graph has none."""
    graph = grimp.build_graph(*packages, exclude_type_checking_imports=True, cache_dir=None)
    edges = {
        module: sorted(graph.find_modules_directly_imported_by(module) & graph.modules)
        for module in sorted(graph.modules)
    }
    return sorted(_described(graph, _shortest_cycle(group, edges)) for group in _groups(edges))


def _groups(edges: dict[str, list[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components with more than one module (or a self-import),
    iteratively: a deep package must not hit the recursion limit."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(edges[target])))
                elif target in on_stack:
                    low[module] = min(low[module], index[target])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == module:
                        break
                if len(group) > 1 or module in edges[module]:
                    found.append(group)
    return found


def _shortest_cycle(group: set[str], edges: dict[str, list[str]]) -> list[str]:
    """The shortest path from the group's first module back to itself, inside the group."""
    start = min(group)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for module in frontier:
            for target in edges[module]:
                if target not in group:
                    continue
                if target == start:
                    path = [module]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if target not in came_from:
                    came_from[target] = module
                    following.append(target)
        frontier = following
    raise AssertionError(f"no cycle through {start}")  # a group always has one


def _described(graph: grimp.ImportGraph, cycle: list[str]) -> list[str]:
    steps = []
    for importer, imported in pairwise(cycle):
        lines = sorted(
            detail["line_number"]
            for detail in graph.get_import_details(importer=importer, imported=imported)
        )
        steps.append(f"{importer} -> {imported} (l.{', '.join(map(str, lines))})")
    return steps


def test_no_runtime_import_cycles() -> None:
    cycles = import_cycles(PACKAGES)
    assert cycles == [], "import cycles:\n" + "\n\n".join("\n".join(cycle) for cycle in cycles)


# -- the finder itself: it must see a cycle when there is one ------------------------------------

SCRATCH = {
    "__init__.py": "from . import a\n",
    "a.py": "from . import b\n",
    # deferred into a function: still a runtime import, so a -> b -> a is a cycle
    "b.py": "def later():\n    from . import a\n    return a\n",
    # annotation-only: c <-> d is no cycle
    "c.py": "from . import d\n",
    "d.py": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import c\n"),
    "e.py": "from . import e\n",  # a module importing itself
}


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    package = tmp_path / "cycle_scratch"
    package.mkdir()
    for name, text in SCRATCH.items():
        (package / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    return package.name


def test_the_finder_sees_deferred_cycles_and_ignores_type_checking_ones(scratch: str) -> None:
    assert import_cycles([scratch]) == [
        [
            f"{scratch}.a -> {scratch}.b (l.1)",
            f"{scratch}.b -> {scratch}.a (l.2)",
        ],
        [f"{scratch}.e -> {scratch}.e (l.1)"],
    ]
