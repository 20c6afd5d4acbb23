"""Walks of the dependency graph that are plain Python: naming the cycle a refused link would
close, ordering a plan so every task is created after what it depends on, and listing every
cycle of a plan for `plan lint`."""

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


def closing_a_cycle(task_id: str, depends_on: str, cycle: Sequence[str]) -> str:
    """How a link refused for a cycle is said, by `deps add` and a plan's new link alike."""
    return f"linking {task_id} -> {depends_on} would close a cycle: {' -> '.join(cycle)}"


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


MAX_CYCLES = 100  # report this many cycles at most: a dense tangle has exponentially many
MAX_CYCLE_STEPS = 200_000  # and never spend more than this many search steps finding them


def find_cycles(
    graph: dict[str, list[str]], *, order: list[str] | None = None
) -> tuple[list[list[str]], bool]:
    """Every elementary cycle of `graph` (edges: key -> what it depends on), each once, as
    `[a, b, ..., a]` starting at its earliest key in `order`. Returns `(cycles, complete)`;
    `complete` is False when the MAX_CYCLES/MAX_CYCLE_STEPS bounds cut the search short.

    Johnson's outline: cycles live inside strongly connected components; take a component's
    earliest node, find the cycles through it, drop it, and split what is left of the component
    again. A long chain closed by one back edge is thus one search, not one per node."""
    order = order or list(graph)
    rank = {key: position for position, key in enumerate(order)}
    cycles: list[list[str]] = []
    steps = 0
    pending = [c for c in _components(graph, order, set(graph)) if _cyclic(graph, c)]
    while pending:
        component = pending.pop()
        members = set(component)
        start = min(component, key=rank.__getitem__)
        path = [start]
        on_path = {start}
        stack = [iter(graph[start])]
        while stack:
            steps += 1
            if steps > MAX_CYCLE_STEPS:
                return _ordered(cycles, rank), False
            step = next(stack[-1], None)
            if step is None:
                stack.pop()
                on_path.discard(path.pop())
            elif step == start:
                cycles.append([*path, start])
                if len(cycles) >= MAX_CYCLES:
                    return _ordered(cycles, rank), False
            elif step in members and step not in on_path:
                path.append(step)
                on_path.add(step)
                stack.append(iter(graph[step]))
        rest = [node for node in order if node in members and node != start]
        pending += [c for c in _components(graph, rest, members - {start}) if _cyclic(graph, c)]
    return _ordered(cycles, rank), True


def _cyclic(graph: dict[str, list[str]], component: list[str]) -> bool:
    return len(component) > 1 or component[0] in graph[component[0]]


def _ordered(cycles: list[list[str]], rank: dict[str, int]) -> list[list[str]]:
    return sorted(cycles, key=lambda cycle: [rank[node] for node in cycle])


def _components(graph: dict[str, list[str]], order: list[str], within: set[str]) -> list[list[str]]:
    """Strongly connected components of the subgraph on `within` (Kosaraju, iterative: a plan
    may be thousands of tasks long)."""
    finished: list[str] = []
    seen: set[str] = set()
    for root in order:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(graph[root]))]
        while stack:
            node, edges = stack[-1]
            step = next(edges, None)
            if step is None:
                stack.pop()
                finished.append(node)
            elif step in within and step not in seen:
                seen.add(step)
                stack.append((step, iter(graph[step])))
    reverse: dict[str, list[str]] = {key: [] for key in within}
    for source in within:
        for target in graph[source]:
            if target in within:
                reverse[target].append(source)
    components: list[list[str]] = []
    assigned: set[str] = set()
    for root in reversed(finished):
        if root in assigned:
            continue
        assigned.add(root)
        component, todo = [], [root]
        while todo:
            node = todo.pop()
            component.append(node)
            for step in reverse[node]:
                if step not in assigned:
                    assigned.add(step)
                    todo.append(step)
        components.append(component)
    return components
