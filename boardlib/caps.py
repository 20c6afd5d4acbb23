"""The capped create path (seed 000): the ceilings on an identified agent's creates.

- **delegation depth**: a child is refused once its parent's ancestor chain is `max_depth` long;
- **live children per parent**: at most `max_live_children` unfinished children, dropped ones
  included: a dropped child is still a row that one `restore` brings back, so dropping cannot
  make room for a create loop (and an agent's restore is held to the same ceiling);
- **root-creation rate**: at most `root_create_limit` parentless tasks created by agents per
  rolling `root_create_window_ms`; the operator's creates are not capped, so they do not count.

The rules are pure: the board hands in the three counts as reads (SQL stays in `store/`), and
runs them inside the create's write transaction, so racing creators cannot overshoot. A plan is
judged as a whole, counting its own tasks.
"""

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .config import BoardConfig
from .errors import BoardError, Reason

# The caps as refusals name them (`"cap"`, and each plan violation's).
DEPTH = "depth"
CHILDREN = "children"
ROOT_RATE = "root_rate"
CAP_PROBLEM = "cap"  # a plan problem that is a violation (`plan lint --agent`)


@dataclass(frozen=True, slots=True)
class CapReads:
    """What the caps read of the board, each asked at most once per parent (or once at all)."""

    # parentless tasks agents created since this instant, by agent
    agent_roots_since: Callable[[int], Mapping[str, int]]
    ancestor_count: Callable[[str], int]  # length of a task's (validated) ancestor chain
    live_children: Callable[[str], int]  # unfinished children of a task, dropped ones included


# A task about to be created: (key, parent, parent_is_new). The parent is a task id, or the key
# of an earlier new task when `parent_is_new`.
NewTask = tuple[str, str | None, bool]


def cap_violations(
    new_tasks: Sequence[NewTask], config: BoardConfig, now: int, reads: CapReads
) -> list[dict[str, Any]]:
    """One violation per task (in creation order) that would break a ceiling, counting the
    batch's own tasks, so a plan cannot do in one go what single creates may not."""
    depth: dict[str, int] = {}  # ancestors of each new task
    ancestors: dict[str, int] = {}  # of existing parents, read once
    children: dict[str, int] = {}  # live children per parent so far
    roots: int | None = None
    by_agent: Mapping[str, int] = {}
    violations: list[dict[str, Any]] = []

    def refuse(key: str, cap: str, limit: int, message: str, **extra: Any) -> None:
        violations.append({"key": key, "cap": cap, "limit": limit, "message": message, **extra})

    for key, parent, parent_is_new in new_tasks:
        if parent is None:
            depth[key] = 0
            if roots is None:
                by_agent = reads.agent_roots_since(now - config.root_create_window_ms)
                roots = sum(by_agent.values())
            if roots >= config.root_create_limit:
                refuse(
                    key, ROOT_RATE, config.root_create_limit,
                    f"too many root tasks: agents created {roots} in the last "
                    f"{config.root_create_window_ms // 1000} s "
                    f"({_whose(by_agent, roots - sum(by_agent.values()))}; "
                    "the operator's creates do not count)",
                )  # fmt: skip
            roots += 1
            continue
        if parent_is_new:
            above = depth[parent]
        else:
            if parent not in ancestors:
                ancestors[parent] = reads.ancestor_count(parent)
            above = ancestors[parent]
        depth[key] = above + 1
        if above >= config.max_depth:
            refuse(
                key, DEPTH, config.max_depth,
                f"too deep: {parent} already has {above} ancestors "
                f"(ceiling {config.max_depth})",
                parent=parent,
            )  # fmt: skip
        if parent not in children:
            children[parent] = 0 if parent_is_new else reads.live_children(parent)
        if children[parent] >= config.max_live_children:
            refuse(
                key, CHILDREN, config.max_live_children,
                f"too many live children under {parent} "
                f"(ceiling {config.max_live_children})",
                parent=parent,
            )  # fmt: skip
        children[parent] += 1
    return violations


def restore_violation(
    task_id: str, parent: str, live_children: int, config: BoardConfig
) -> BoardError | None:
    """An agent's restore of a dropped child of `parent` (`live_children` counts it already):
    refused when the parent would have more live children than the ceiling, which operator
    creates or a lowered ceiling can leave behind; a restore never frees a place."""
    if live_children <= config.max_live_children:
        return None
    return BoardError(
        Reason.CAP_EXCEEDED,
        f"cannot restore {task_id}: {parent} would have {live_children} live children "
        f"(ceiling {config.max_live_children}); finish or cancel some first",
        cap=CHILDREN,
        limit=config.max_live_children,
        id=task_id,
        parent=parent,
    )


def _whose(by_agent: Mapping[str, int], in_batch: int) -> str:
    """Whose root creates counted: the busiest agents first, then this batch's own."""
    ranked = sorted(by_agent.items(), key=lambda entry: (-entry[1], entry[0]))
    named = [f"{agent} {count}" for agent, count in ranked[:3]]
    if len(ranked) > 3:
        named.append(f"{len(ranked) - 3} more agent(s) {sum(n for _, n in ranked[3:])}")
    if in_batch:
        named.append(f"{in_batch} earlier in this plan")
    return ", ".join(named) or "none yet"


def _duration(ms: int) -> str:
    for unit, size in (("minute", 60_000), ("second", 1_000)):
        if ms % size == 0:
            count = ms // size
            return f"{count} {unit}{'' if count == 1 else 's'}"
    return f"{ms} ms"


def in_words(config: BoardConfig, broken: Collection[str] = ()) -> str:
    """The ceilings an agent's creates meet, as a person reads them, from the board's config:
    `agent creates are capped (24 children, 30 roots per 5 minutes)`; the depth ceiling is
    named too when it is among the `broken` caps (`2 ancestors, 24 children, ...`)."""
    children, roots = config.max_live_children, config.root_create_limit
    depth = config.max_depth
    deep = f"{depth} {'ancestor' if depth == 1 else 'ancestors'}, " if DEPTH in broken else ""
    return (
        f"agent creates are capped ({deep}{children} "
        f"{'child' if children == 1 else 'children'}, "
        f"{roots} {'root' if roots == 1 else 'roots'} per "
        f"{_duration(config.root_create_window_ms)})"
    )


def broken_caps(error: BoardError) -> set[str]:
    """The caps a `cap_exceeded` refusal names: its own, its plan's violations' or problems'."""
    named = {str(error.details["cap"])} if error.details.get("cap") else set()
    listed = [*(error.details.get("violations") or ()), *(error.details.get("problems") or ())]
    return named | {str(entry["cap"]) for entry in listed if entry.get("cap")}


def plan_tasks(
    order: Sequence[str], parents: Mapping[str, str | None], on_board: Mapping[str, str]
) -> list[NewTask]:
    """The tasks a plan would create, as the caps judge them, in creation `order`: each key not
    `on_board` (key -> the task id it has), with its parent as a task id (a key on the board
    resolved) or the key of another new task."""
    new_tasks: list[NewTask] = []
    for key in order:
        if key in on_board:
            continue
        parent = parents[key]
        if parent is not None and parent in on_board:
            new_tasks.append((key, on_board[parent], False))
        else:
            new_tasks.append((key, parent, parent in parents))
    return new_tasks


def problems(violations: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Violations as `plan lint` lists problems: kind `cap`, with the violation's fields."""
    return [{"kind": CAP_PROBLEM, **violation} for violation in violations]


def create_refusal(violations: Sequence[dict[str, Any]]) -> BoardError:
    """A single create's refusal: its first violation, as `cap_exceeded`."""
    first = violations[0]
    return BoardError(Reason.CAP_EXCEEDED, first["message"], cap=first["cap"], limit=first["limit"])


def plan_refusal(violations: Sequence[dict[str, Any]]) -> BoardError:
    """A plan's refusal: every task that would break a ceiling, by key, in one `cap_exceeded`."""
    named = ", ".join(f"{v['key']} ({v['cap']})" for v in violations[:5])
    more = f" and {len(violations) - 5} more" if len(violations) > 5 else ""
    return BoardError(
        Reason.CAP_EXCEEDED,
        f"the plan breaks the create caps for {len(violations)} task(s): "
        f"{named}{more}; nothing was created",
        violations=list(violations),
    )
