"""Walks of the dependency graph that are plain Python: naming the cycle a refused link would
close, and ordering a plan so every task is created after what it depends on."""

from collections import deque
from collections.abc import Iterable, Mapping, Sequence

from .errors import BoardError, Reason


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


def topological_order(needs: Mapping[str, Sequence[str]]) -> list[str]:
    """The keys ordered so each comes after everything it needs, and otherwise in the mapping's
    own order (a plan is created in file order where it can be). Refs to keys outside `needs`
    are ignored; a cycle is refused, naming the keys on it."""
    state: dict[str, int] = {}  # 1: on the current path, 2: placed
    order: list[str] = []
    for root in needs:
        if root in state:
            continue
        state[root] = 1
        path = [root]
        stack = [iter(needs[root])]
        while stack:
            step = next(stack[-1], None)
            if step is None:
                node = path.pop()
                stack.pop()
                state[node] = 2
                order.append(node)
            elif step not in needs or state.get(step) == 2:
                continue
            elif state.get(step) == 1:
                cycle = [*path[path.index(step) :], step]
                raise BoardError(
                    Reason.DEPENDENCY_CYCLE,
                    f"the plan has a dependency cycle: {' -> '.join(cycle)}",
                    keys=cycle,
                )
            else:
                state[step] = 1
                path.append(step)
                stack.append(iter(needs[step]))
    return order
