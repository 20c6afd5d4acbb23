"""Walks of the dependency graph that are plain Python: naming the cycle a refused link would
close, and ordering a plan so every task is created after what it depends on."""

from collections import deque
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from .errors import BoardError, Reason

if TYPE_CHECKING:
    from .board import PlanItem


def cycle_path(
    task_id: str, depends_on: str, reachable_edges: Iterable[tuple[str, str]]
) -> list[str]:
    """The cycle a refused link would close, for the error: task -> depends_on -> ... -> task.
    `reachable_edges` are the depends-on edges reachable from `depends_on`."""
    if task_id == depends_on:
        return [task_id, task_id]
    edges: dict[str, list[str]] = {}
    for source, target in reachable_edges:
        edges.setdefault(source, []).append(target)
    previous: dict[str, str | None] = {depends_on: None}
    queue = deque([depends_on])
    while queue:
        node = queue.popleft()
        if node == task_id:
            break
        for target in edges.get(node, ()):
            if target not in previous:
                previous[target] = node
                queue.append(target)
    path: list[str] = []
    step: str | None = task_id
    while step is not None:
        path.append(step)
        step = previous.get(step)
    return [task_id, *reversed(path)]


def topological_order(items: Sequence["PlanItem"]) -> list[str]:
    """Plan keys ordered so every in-plan dependency and parent comes first; refuses a cycle."""
    keys = {item.key for item in items}
    needs = {
        item.key: {
            ref
            for ref in (*item.depends_on, *([item.parent] if item.parent else []))
            if ref in keys
        }
        for item in items
    }
    order: list[str] = []
    done: set[str] = set()
    while len(order) < len(items):
        ready = [key for key in needs if key not in done and needs[key] <= done]
        if not ready:
            stuck = sorted(key for key in needs if key not in done)
            raise BoardError(
                Reason.DEPENDENCY_CYCLE,
                f"the plan has a dependency cycle among {', '.join(stuck)}",
                keys=stuck,
            )  # fmt: skip
        for key in ready:
            done.add(key)
            order.append(key)
    return order
