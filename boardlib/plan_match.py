"""Plans applied again: which items of a plan are on the board already, and how they differ.

An item is known by (plan name, key): the name is the plan's own (`name:` in the file, else the
file's name), the key the item's. `compare` reads, inside the caller's transaction, the tasks the
plan made before and what the file now says differently; `Board.apply_plan` creates only the
items not on the board yet and, with `update`, changes only what is still safe to change: the
title and description of a task nobody has claimed, and new dependencies that close no cycle.
Why the key is scoped this way: docs/architecture.md#plans
"""

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import budgets
from . import transitions as t
from . import validation as validate
from .errors import BoardError, Reason, invalid_input
from .graph import closing_a_cycle, cycle_path
from .naming import camel
from .records import BUDGET_TOKENS, BUDGET_USD, Task, looks_like_task_id
from .store.base import Tx

# What a plan says about a task, compared field by field with the task on the board. The status
# is left out: a plan names the status a task starts in, and the board's moves take it on.
COMPARED = (
    "title",
    "description",
    "priority",
    "role",
    "team_id",
    "kind",
    "parent",
    "budget_usd",
    "budget_tokens",
)
# The kinds of problem a matched item's difference is: a link that would close a cycle is a cycle,
# the fact `deps add` refuses the same link for; any other difference differs.
DIFFERS = "differs"
CYCLE = "cycle"
# The fields `--update` may change, on a task nobody has claimed yet.
TEXT_FIELDS = frozenset({"title", "description"})
# A task's budgets, by field: shown as money and token counts, and changed only by an operator
# with `kanban budget set` (audited), under this option.
BUDGET_FIELDS = {"budget_usd": (BUDGET_USD, "--usd"), "budget_tokens": (BUDGET_TOKENS, "--tokens")}


@dataclass(frozen=True, slots=True)
class PlanItem:
    """One task of a plan to create at once: `depends_on`/`parent` name other items by key or
    existing tasks by id."""

    key: str
    title: str
    description: str | None = None
    role: str | None = None
    priority: int = 0
    depends_on: tuple[str, ...] = ()
    status: str = t.TODO
    team_id: str | None = None
    kind: str = "code"
    parent: str | None = None
    budget_usd: float | None = None
    budget_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class Difference:
    """One field in which a plan's item and the task it made earlier disagree. For
    `depends_on`, one dependency the plan names that the task does not have (`plan`: the
    reference as written, `blocker`: the task id it resolves to, None for a task the plan is
    about to create, `cycle`: the task ids on the cycle the link would close, as `deps add`
    names it, when it would close one)."""

    key: str
    task_id: str
    field: str
    plan: Any
    board: Any
    updatable: bool
    why: str
    blocker: str | None = None
    cycle: tuple[str, ...] | None = None

    @property
    def message(self) -> str:
        if self.field == "depends_on":
            said = f"{self.key} ({self.task_id}) depends on {self.plan} in the plan, not here"
        else:
            said = (
                f"{self.key} ({self.task_id}): {camel(self.field)} is "
                f"{_shown(self.board, self.field)} on the board, {_shown(self.plan, self.field)} "
                "in the plan"
            )
        verdict = "--update changes it" if self.updatable else "refused" if self.cycle else "kept"
        return f"{said} ({verdict}: {self.why})"

    def to_problem(self, *, applied: bool = False) -> dict[str, Any]:
        """The difference as a `differs` problem; `applied`: as a change `--update` made."""
        message = self.message
        if applied:
            message = message.replace("(--update changes it:", "(changed:", 1)
        problem = {
            "kind": CYCLE if self.cycle else DIFFERS,
            "message": message,
            "key": self.key,
            "id": self.task_id,
            "field": camel(self.field),
            "plan": self.plan,
            "board": self.board,
            "updatable": self.updatable,
        }
        return problem | ({"keys": list(self.cycle)} if self.cycle else {})


@dataclass(frozen=True, slots=True)
class UnplannedLink:
    """A dependency a matched item's task has that the plan does not name (made since, by
    `deps add`): not a difference that refuses the plan, since apply leaves the board's links
    alone, but `plan lint` says it, so a clean lint does not claim plan and board agree."""

    key: str
    task_id: str
    blocker: str

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "id": self.task_id,
            "dependsOn": self.blocker,
            "message": f"{self.key} ({self.task_id}) depends on {self.blocker} on the board, not "
            "in the plan (kept: apply never removes a link; add it to the plan, or drop it with "
            "`kanban task deps remove`)",
        }


@dataclass(slots=True)
class Comparison:
    """A plan against the board: the items already there (key -> task), every difference, and
    the links the board has beyond the plan's."""

    plan_name: str
    matched: dict[str, Task] = field(default_factory=dict)
    differences: list[Difference] = field(default_factory=list)
    unplanned: list[UnplannedLink] = field(default_factory=list)

    def blocking(self, update: bool) -> list[Difference]:
        """The differences that refuse the plan: all of them, or with `update` those that are
        not safe to change."""
        return [d for d in self.differences if not (update and d.updatable)]

    def updates(self) -> list[Difference]:
        return [d for d in self.differences if d.updatable]


@dataclass(slots=True)
class AppliedPlan:
    """What applying a plan did: every item's task (key -> task, in the plan's order), which
    keys were created now and which were on the board already, and the changes `update` made."""

    plan_name: str | None
    tasks: dict[str, Task]
    created: list[str]
    existing: list[str]
    updated: list[Difference]

    @property
    def summary(self) -> str:
        said = f"{len(self.existing)} existing, {len(self.created)} created"
        return said + (f", {len(self.updated)} change(s) made" if self.updated else "")

    def to_json(self) -> dict[str, Any]:
        return {
            "plan": self.plan_name,
            "summary": self.summary,
            "count": len(self.created),
            "created": self.created,
            "existing": self.existing,
            "updated": [difference.to_problem(applied=True) for difference in self.updated],
            "keys": {key: task.id for key, task in self.tasks.items()},
            "tasks": [self.tasks[key].to_json() for key in self.created],
        }


def differs_refusal(differences: Sequence[Difference]) -> BoardError:
    """The refusal of a plan whose items differ from their tasks: one `differs` problem each (a
    new link that would close a cycle: a `cycle` problem), worded as `plans.refusal` words a
    linted plan's problems, so lint and apply say the same: `dependency_cycle` with the cycles
    when every problem is one, as `deps add` refuses the same link, else `invalid_input`."""
    problems = [difference.to_problem() for difference in differences]
    cycles = [list(difference.cycle) for difference in differences if difference.cycle]
    summary = "; ".join(problem["message"] for problem in problems[:3])
    more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
    return BoardError(
        Reason.DEPENDENCY_CYCLE if len(cycles) == len(problems) else Reason.INVALID_INPUT,
        f"the plan has {len(problems)} problem(s): {summary}{more}",
        problems=problems,
        cycles=cycles or None,
    )


def compare(tx: Tx, items: Sequence[PlanItem], plan_name: str) -> Comparison:
    """The plan's items that are on the board (by plan name and key) and how each differs from
    its item, read in the caller's transaction: the same answer for `plan lint` (a read) and
    `plan apply` (inside its write, where it is also what gets written)."""
    found = {row["plan_key"]: Task.from_row(row) for row in tx.plan_tasks(plan_name)}
    keys = {item.key for item in items}
    comparison = Comparison(plan_name, {k: task for k, task in found.items() if k in keys})
    matched = comparison.matched

    def resolve(ref: str) -> str | None:
        """A reference as a task id: an item on the board, a task id, or None for an item the
        plan is about to create."""
        if ref in matched:
            return matched[ref].id
        return None if ref in keys else ref

    pending: dict[str, list[str]] = {}  # new links judged safe so far: task -> blockers
    for item in items:
        task = matched.get(item.key)
        if task is None:
            continue
        said = normalised(item)
        said["parent"] = resolve(item.parent) if item.parent else None
        for name in COMPARED:
            on_board = task.parent_task_id if name == "parent" else getattr(task, name)
            if said[name] == on_board:
                continue
            updatable, why = _may_change(task, name, said[name])
            comparison.differences.append(
                Difference(item.key, task.id, name, said[name], on_board, updatable, why)
            )
        linked = [row["id"] for row in tx.dependencies(task.id)]
        for ref in dict.fromkeys(item.depends_on):
            blocker = resolve(ref)
            if blocker is not None and blocker in linked:
                continue
            cycle = None if blocker is None else _cycle_closed(tx, task.id, blocker, pending)
            if blocker is None:
                updatable, why = True, "a task this plan creates now"
            elif cycle is not None:
                updatable, why = False, closing_a_cycle(task.id, blocker, cycle)
            else:
                updatable, why = True, "closes no cycle"
            if updatable and blocker is not None:
                pending.setdefault(task.id, []).append(blocker)
            comparison.differences.append(
                Difference(
                    item.key, task.id, "depends_on", ref, linked, updatable, why, blocker,
                    tuple(cycle) if cycle else None,
                )
            )  # fmt: skip
        planned = {resolve(ref) for ref in item.depends_on}
        comparison.unplanned += [
            UnplannedLink(item.key, task.id, blocker)
            for blocker in linked
            if blocker not in planned
        ]
    return comparison


def _shown(value: Any, field: str = "") -> str:
    """A value as a message shows it: a budget as `$2.00` or `5,000 tokens` (`budgetUsd is 2.0 on
    the board, 9.0 in the plan`)."""
    if value is None:
        return "none"
    if field in BUDGET_FIELDS:
        return budgets.amount(value, BUDGET_FIELDS[field][0])
    return json.dumps(value, ensure_ascii=False)


def plan_key(key: Any) -> str:
    """An item's key, or its refusal: a key of a task id's shape (`TASK-3`) is refused, since a
    dependency written `TASK-3` would mean either this item or the board's TASK-3 (the plan's item
    silently won). Keys are words; ids name board tasks."""
    checked = validate.identifier(key, "key")
    if looks_like_task_id(checked):
        raise invalid_input(
            f"key {checked!r} has the shape of a task id: a reference to it could mean this item "
            "or a task on the board; name the item with a word (api, docs) instead",
            field="key",
            key=checked,
        )
    return checked


def normalised(item: PlanItem) -> dict[str, Any]:
    """The item's fields as the board stores them (stripped, empty text as none), or the
    board's refusal of one: what `plan lint` checks, so a plan it passes is one apply takes."""
    plan_key(item.key)
    return {
        "title": validate.text(item.title, "title", limit=validate.TITLE_MAX),
        "description": validate.text(item.description, "description", required=False),
        "priority": validate.integer(item.priority, "priority"),
        "role": validate.optional_name(item.role, "role"),
        "team_id": validate.optional_name(item.team_id, "teamId"),
        "kind": validate.name(item.kind, "kind"),
        "budget_usd": budgets.usd_limit(item.budget_usd, "budgetUsd"),
        "budget_tokens": budgets.token_limit(item.budget_tokens, "budgetTokens"),
    }


def _may_change(task: Task, name: str, planned: Any) -> tuple[bool, str]:
    """Whether `--update` may change field `name` of `task` to `planned`, and why (not): a
    budget's why names the command that does change it."""
    if name in BUDGET_FIELDS:
        value = "none" if planned is None else str(planned).removesuffix(".0")
        return False, (
            "only an operator changes a budget, audited: `kanban budget set "
            f"{task.id} {BUDGET_FIELDS[name][1]} {value} -m WHY`"
        )
    if name not in TEXT_FIELDS:
        return False, "--update changes only the title, description and new dependencies"
    if task.attempts or task.status not in t.PENDING:
        who = f" by {task.claimed_by}" if task.claimed_by else ""
        return False, f"{task.id} was claimed{who}: its {camel(name)} stays as its worker read it"
    return True, "nobody has claimed it yet"


def _cycle_closed(
    tx: Tx, task_id: str, blocker: str, extra: Mapping[str, list[str]]
) -> list[str] | None:
    """The cycle a link task -> blocker would close (task -> blocker -> ... -> task, as `deps
    add` names it), or None: it closes one exactly when the blocker reaches the task along
    depends-on edges, the board's plus the links this plan would add (`extra`)."""
    edges: list[tuple[str, str]] = []
    seen = {blocker}
    todo = [blocker]
    while todo:
        node = todo.pop()
        if node == task_id:
            return cycle_path(task_id, blocker, edges)
        for step in [row["id"] for row in tx.dependencies(node)] + list(extra.get(node, ())):
            edges.append((node, step))
            if step not in seen:
                seen.add(step)
                todo.append(step)
    return None
