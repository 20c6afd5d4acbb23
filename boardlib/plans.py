"""Plan files: many tasks at once, with local keys and dependencies between them.

`lint` reports everything wrong at once and never writes; `apply` is lint-then-create in one
transaction, so `plan lint` and `plan apply` report the same problems. This module imports pydantic
(and PyYAML for YAML): only `kanban plan ...` loads it. The file format: docs/architecture.md#plans
"""

import functools
import json
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    ValidationError,
    field_validator,
)

from . import caps, transitions, validation
from .actors import OPERATOR, is_agent
from .board import Board, plan_order, unknown_reference
from .config import BoardConfig
from .errors import BoardError, Reason
from .graph import find_cycles, topological_order
from .plan_match import CYCLE, AppliedPlan, PlanItem, normalised
from .validation import NAME_MAX, TEXT_MAX, TITLE_MAX, whole


class PlanTask(BaseModel):
    """One task of a plan file, as written (snake_case or camelCase keys)."""

    model_config = ConfigDict(
        extra="forbid",
        str_strip_whitespace=True,
        coerce_numbers_to_str=True,
        populate_by_name=True,
    )

    key: str = Field(min_length=1, max_length=NAME_MAX)
    title: str = Field(min_length=1, max_length=TITLE_MAX)
    description: str | None = Field(default=None, max_length=TEXT_MAX)
    role: str | None = Field(default=None, min_length=1, max_length=NAME_MAX)
    priority: Annotated[StrictInt, BeforeValidator(whole)] = 0
    depends_on: list[str] = Field(
        default_factory=list, validation_alias=AliasChoices("depends_on", "dependsOn")
    )
    parent: str | None = Field(
        default=None,
        min_length=1,
        max_length=NAME_MAX,
        validation_alias=AliasChoices("parent", "parent_task_id", "parentTaskId"),
    )
    status: str = transitions.TODO
    team: str | None = Field(
        default=None,
        min_length=1,
        max_length=NAME_MAX,
        validation_alias=AliasChoices("team", "team_id", "teamId"),
    )
    kind: str = Field(default="code", min_length=1, max_length=NAME_MAX)
    # strict: a lax float read the string "1_000" as 1000 (and "10", full-width digits...);
    # an amount is a number, as in an HTTP body
    budget_usd: StrictFloat | None = Field(
        default=None, ge=0, allow_inf_nan=False,
        validation_alias=AliasChoices("budget_usd", "budgetUsd"),
    )  # fmt: skip
    budget_tokens: Annotated[StrictInt, BeforeValidator(whole)] | None = Field(
        default=None, ge=0, validation_alias=AliasChoices("budget_tokens", "budgetTokens")
    )

    @field_validator("depends_on", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        """`depends_on: "a, b"` is as good as `[a, b]`; a lone key is a list of one."""
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        if value is None:
            return []
        return value

    @field_validator("depends_on")
    @classmethod
    def _non_empty_refs(cls, value: list[str]) -> list[str]:
        refs = [ref.strip() for ref in value]
        if any(not ref for ref in refs):
            raise ValueError("dependency keys must not be empty")
        return list(dict.fromkeys(refs))

    @field_validator("status")
    @classmethod
    def _creatable(cls, value: str) -> str:
        if value not in transitions.CREATABLE:
            allowed = " or ".join(s for s in transitions.STATUSES if s in transitions.CREATABLE)
            raise ValueError(f"a new task starts in {allowed}, not {value!r}")
        return value

    def to_item(self) -> PlanItem:
        return PlanItem(
            key=self.key,
            title=self.title,
            description=self.description,
            role=self.role,
            priority=self.priority,
            depends_on=tuple(self.depends_on),
            status=self.status,
            team_id=self.team,
            kind=self.kind,
            parent=self.parent,
            budget_usd=self.budget_usd,
            budget_tokens=self.budget_tokens,
        )


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a plan. `kind` is syntax, shape, bad_field, duplicate_key,
    unknown_key, cycle (among the plan's keys, or a new link of an item on the board that would
    close one there: then `keys` are task ids), differs (an item on the board already, with
    other content),
    cancelled_dependency (a link onto a cancelled task) or not_assignee (a link onto a task
    another agent holds, in an agent's plan)."""

    kind: str
    message: str
    key: str | None = None
    index: int | None = None
    field: str | None = None
    ref: str | None = None  # unknown_key, cancelled_dependency: the reference as written
    keys: tuple[str, ...] | None = None  # for cycle: the keys on it, first one repeated at the end
    detail: dict[str, Any] | None = None  # for differs: the task, both values, whether updatable

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"kind": self.kind, "message": self.message}
        for name in ("key", "index", "field", "ref"):
            if getattr(self, name) is not None:
                doc[name] = getattr(self, name)
        if self.keys is not None:
            doc["keys"] = list(self.keys)
        return doc | (self.detail or {})


@dataclass
class PlanReport:
    """What lint found: the tasks that parsed, every problem, and (when clean) creation order."""

    items: int = 0  # how many items the plan has, valid or not
    tasks: list[PlanTask] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    order: list[str] = field(default_factory=list)
    existing: list[str] = field(default_factory=list)  # references resolved to board tasks
    name: str | None = None  # the plan's name: the scope of its keys on the board
    matched: dict[str, str] = field(default_factory=dict)  # items on the board: key -> task id
    changes: list[dict[str, Any]] = field(default_factory=list)  # what --update would change
    unplanned: list[dict[str, Any]] = field(default_factory=list)  # board links beyond the plan

    @property
    def ok(self) -> bool:
        return not self.problems

    def cycles(self) -> list[list[str]]:
        return [list(p.keys or ()) for p in self.problems if p.kind == CYCLE]

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "plan": self.name,
            "tasks": self.items,
            "order": self.order,
            "existing": self.existing,
            "matched": self.matched,
            "changes": self.changes,
            "unplannedLinks": self.unplanned,
            "problems": [problem.to_json() for problem in self.problems],
        }

    def to_items(self) -> list[PlanItem]:
        if not self.ok:
            raise ValueError("a plan with problems cannot be applied")
        return [task.to_item() for task in self.tasks]


# -- reading ------------------------------------------------------------------------------------


class PlanSyntaxError(ValueError):
    """The file is not valid YAML/JSON; the message names the line."""


# YAML 1.2's core schema for numbers, decimal forms only: YAML 1.1 (PyYAML's) also read `1_000`
# as 1000, `0x10` as 16, `017` as 15 and `1:30` as 90, numbers no JSON plan or CLI option takes.
_YAML_INT = r"^[-+]?[0-9]+$"
_YAML_FLOAT = r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$"


@functools.cache
def _plan_loader() -> Any:
    """PyYAML's safe loader with `_YAML_INT`/`_YAML_FLOAT` for its number rules (built once)."""
    import re

    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    numbers = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")

    class PlanLoader(base):  # type: ignore[misc,valid-type]
        yaml_implicit_resolvers = {
            first: [(tag, rule) for tag, rule in rules if tag not in numbers]
            for first, rules in base.yaml_implicit_resolvers.items()
        }

    def number(read: Callable[[str], Any], rule: "re.Pattern[str]") -> Any:
        def construct(loader: Any, node: Any) -> Any:
            text = loader.construct_scalar(node)
            if not isinstance(text, str) or not rule.match(text):  # `!!int 0x10`: explicit
                raise yaml.constructor.ConstructorError(
                    None, None, f"{text!r} is not a decimal number", node.start_mark
                )
            return read(text)

        return construct

    def mapping(loader: Any, node: Any, deep: bool = False) -> Any:
        # PyYAML keeps the last of a key written twice: a second `tasks:` dropped the first list
        # Each key is built once: `construct_object` keeps what it built by node, and the base's
        # pass below finds it there (a 10,000-task plan: ~0.9 s CPU with or without this loop).
        seen: set[Any] = set()
        for key_node, _ in node.value if isinstance(node, yaml.MappingNode) else ():
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, Hashable):
                continue  # PyYAML refuses it itself
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"the key {key!r} is written twice", key_node.start_mark
                )
            seen.add(key)
        return base.construct_mapping(loader, node, deep)

    PlanLoader.construct_mapping = mapping
    for tag, pattern, firsts, read in (
        (numbers[0], _YAML_INT, "-+0123456789", int),
        (numbers[1], _YAML_FLOAT, "-+.0123456789", float),
    ):
        rule = re.compile(pattern)
        PlanLoader.add_implicit_resolver(tag, rule, list(firsts))
        PlanLoader.add_constructor(tag, number(read, rule))
    return PlanLoader


class _WrittenTwice(ValueError):
    pass


def _once_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object, refused when it names a key twice (`json` keeps the last one silently)."""
    document: dict[str, Any] = {}
    for key, value in pairs:
        if key in document:
            raise _WrittenTwice(f"the key {key!r} is written twice in one object")
        document[key] = value
    return document


def parse_plan(text: str, *, name: str = "<plan>") -> Any:
    """JSON for `.json` files, YAML otherwise (YAML also reads JSON)."""
    if name.endswith(".json"):
        try:
            return json.loads(text, object_pairs_hook=_once_each)
        except _WrittenTwice as error:
            raise PlanSyntaxError(f"{name}: invalid JSON: {error}") from None
        except json.JSONDecodeError as error:
            raise PlanSyntaxError(
                f"{name}: invalid JSON at line {error.lineno}, column {error.colno}: {error.msg}"
            ) from None
    import yaml

    try:
        return yaml.load(text, Loader=_plan_loader())
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or str(error)
        raise PlanSyntaxError(f"{name}: invalid YAML{where}: {problem}") from None


def read_plan(path: Path) -> Any:
    return parse_plan(path.read_text(encoding="utf-8"), name=path.name)


# -- linting ------------------------------------------------------------------------------------


def lint(data: Any, *, task_exists: Callable[[str], bool] | None = None) -> PlanReport:
    """Check a parsed plan completely. `task_exists` resolves references that are not plan keys
    against the board (read-only); without it such references are left to `Board.create_plan`,
    which resolves them inside its transaction."""
    report = PlanReport()
    raw_items = _raw_items(data, report)
    written = data.get("name") if isinstance(data, dict) else None
    if written is not None:
        if isinstance(written, (str, int)) and 0 < len(str(written).strip()) <= NAME_MAX:
            report.name = str(written).strip()
        else:
            report.problems.append(
                Problem("shape", f"name must be a non-empty text of at most {NAME_MAX} characters")
            )
    if raw_items is None:
        return report
    report.items = len(raw_items)
    if not raw_items:
        report.problems.append(Problem("shape", "the plan has no tasks"))
        return report

    raw_keys: list[str | None] = []
    for index, raw in enumerate(raw_items):
        key = raw.get("key") if isinstance(raw, dict) else None
        written = str(key).strip() if isinstance(key, (str, int)) else ""
        raw_keys.append(written or None)
        if not isinstance(raw, dict):
            report.problems.append(
                Problem(
                    "bad_field",
                    f"tasks[{index}]: expected a mapping of fields, got {type(raw).__name__}",
                    index=index,
                )
            )
            continue
        try:
            task = PlanTask.model_validate(raw)
        except ValidationError as error:
            report.problems += _field_problems(error, index, raw_keys[index])
            continue
        try:  # the board's own checks (64-bit numbers, printable names): lint passes no less
            normalised(task.to_item())
        except BoardError as error:
            label = f"tasks[{index}]" + (f" ({task.key})" if task.key else "")
            where = str(error.details.get("field") or "?")
            report.problems.append(
                Problem("bad_field", f"{label}: {error.message}", key=task.key, index=index,
                        field=where)
            )  # fmt: skip
            continue
        report.tasks.append(task)

    first_index: dict[str, int] = {}
    for index, key in enumerate(raw_keys):
        if key is None:
            continue
        if key in first_index:
            report.problems.append(
                Problem(
                    "duplicate_key",
                    f"key {key!r} is used by tasks[{first_index[key]}] and tasks[{index}]",
                    key=key,
                    index=index,
                )
            )
        else:
            first_index[key] = index

    # References and cycles are judged on every item that names a key, even one with a bad field,
    # so fixing a typo never reveals a cycle the first run kept quiet about.
    refs_by_key: dict[str, list[tuple[str, str]]] = {}
    for raw, key in zip(raw_items, raw_keys, strict=True):
        if key is not None and key not in refs_by_key:
            refs_by_key[key] = _raw_refs(raw)
    graph: dict[str, list[str]] = {key: [] for key in refs_by_key}
    existing: dict[str, None] = {}
    for key, refs in refs_by_key.items():
        for field_name, ref in refs:
            if ref in graph:
                graph[key].append(ref)
            elif task_exists is None:
                continue
            elif task_exists(ref):
                existing[ref] = None
            else:
                report.problems.append(Problem(**unknown_reference(key, field_name, ref)))
    report.existing = list(existing)

    cycles, complete = find_cycles(graph, order=list(graph))
    for cycle in cycles:
        report.problems.append(
            Problem(CYCLE, "dependency cycle: " + " -> ".join(cycle), keys=tuple(cycle))
        )
    if not complete:
        report.problems.append(
            Problem(CYCLE, f"more cycles than reported (stopped after {len(cycles)})")
        )
    if report.ok:
        report.order = topological_order(graph)
    return report


def _raw_refs(raw: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, reference) pairs of an item as written, read leniently: what a valid item would
    point at, and whatever well-typed references an invalid one still names."""
    refs: list[tuple[str, str]] = []
    deps = next((raw[name] for name in ("depends_on", "dependsOn") if name in raw), None)
    if isinstance(deps, (str, int)):
        deps = str(deps).split(",")
    if isinstance(deps, list):
        for ref in deps:
            if isinstance(ref, (str, int)) and str(ref).strip():
                refs.append(("depends_on", str(ref).strip()))
    parent = next(
        (raw[name] for name in ("parent", "parent_task_id", "parentTaskId") if name in raw), None
    )
    if isinstance(parent, (str, int)) and str(parent).strip():
        refs.append(("parent", str(parent).strip()))
    return list(dict.fromkeys(refs))


def _raw_items(data: Any, report: PlanReport) -> list[Any] | None:
    if isinstance(data, dict):
        extra = sorted(str(key) for key in data if key not in ("tasks", "name"))
        if extra:
            report.problems.append(
                Problem("shape", f"unknown top-level field(s): {', '.join(extra)}")
            )
        data = data.get("tasks")
    if not isinstance(data, list):
        report.problems.append(
            Problem("shape", "a plan is a list of tasks, or a mapping with a 'tasks' list")
        )
        return None
    return data


def _field_problems(error: ValidationError, index: int, key: str | None) -> list[Problem]:
    label = f"tasks[{index}]" + (f" ({key})" if key else "")
    problems = []
    for detail in error.errors():
        where = ".".join(str(part) for part in detail["loc"]) or "?"
        if detail["type"] == "extra_forbidden":
            message = f"{label}: unknown field {where!r}"
        elif detail["type"] == "missing":
            message = f"{label}: {where} is required"
        else:
            message = f"{label}: {where}: {detail['msg']}"
        problems.append(Problem("bad_field", message, key=key, index=index, field=where))
    return problems


# -- refusing and applying ----------------------------------------------------------------------


# A plan whose problems are all of one of these kinds is refused with that kind's reason, the one
# `Board.apply_plan` refuses it with; mixed problems are `invalid_input`.
REASON_OF_KIND = {
    CYCLE: Reason.DEPENDENCY_CYCLE,
    "cancelled_dependency": Reason.INVALID_STATE,
    str(Reason.NOT_ASSIGNEE): Reason.NOT_ASSIGNEE,
}


def refusal(report: PlanReport) -> BoardError:
    """The refusal for a plan with problems: the reason of their kind when they are all of one
    kind with a reason of its own (`REASON_OF_KIND`: every problem a cycle is
    `dependency_cycle`), else `invalid_input`; every problem listed (with the cycles' keys).
    A plan that breaks only the create caps is refused as `plan apply` refuses it
    (`caps.plan_refusal`: its `violations`), with the problems beside them."""
    problems = report.problems
    listed = [problem.to_json() for problem in problems]
    kinds = {problem.kind for problem in problems}
    only = kinds.pop() if len(kinds) == 1 else None
    if only == caps.CAP_PROBLEM:
        error = caps.plan_refusal([
            {name: value for name, value in doc.items() if name != "kind"} for doc in listed
        ])  # fmt: skip
        error.details["problems"] = listed
        return error
    cycles = report.cycles()
    summary = "; ".join(problem.message for problem in problems[:3])
    more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
    return BoardError(
        REASON_OF_KIND.get(only or "", Reason.INVALID_INPUT),
        f"the plan has {len(problems)} problem(s): {summary}{more}",
        problems=listed,
        cycles=cycles or None,
    )


def plan_name(data: Any, *, given: str | None, source: str | None) -> str | None:
    """The name a plan's keys are scoped by on the board: `given` (`--name`), else the plan's own
    `name:`, else its file's name without the extension (`sprint-3.yaml` -> `sprint-3`). None for
    a plan read from stdin without either (see `required_plan_name`)."""
    if given is not None:
        return validation.name(given, "name")
    written = data.get("name") if isinstance(data, dict) else None
    if isinstance(written, (str, int)) and str(written).strip():
        return validation.name(str(written), "name")
    if source:
        return validation.name(Path(source).stem or source, "name")
    return None


def required_plan_name(data: Any, *, given: str | None, source: str | None) -> str:
    """`plan_name`, or the refusal of a plan that has none: applying needs it."""
    name = plan_name(data, given=given, source=source)
    if name is not None:
        return name
    raise BoardError(
        Reason.INVALID_INPUT,
        "a plan read from stdin needs a name to find its tasks when applied again: give it "
        "`name: ...` or pass --name",
        field="name",
    )


def lint_against(
    board: Board | None,
    data: Any,
    *,
    plan: str | None = None,
    update: bool = False,
    actor: str = OPERATOR,
    config: BoardConfig | None = None,
) -> PlanReport:
    """`lint` with references resolved against `board` (no board: nothing exists yet). With
    `plan` (its name), the items already on the board under that name are matched, and each
    difference from its task is a `differs` problem (with `update`, only the differences that
    are not safe to change; the others are the `changes` that update would make). Differences
    are looked for once the plan itself is clean; then, once nothing differs, what the board
    would refuse next (`Board.plan_problems`: links onto cancelled tasks, links `actor` may not
    make, an agent's create caps), in apply's words. Without a board, an agent's plan is held to
    `config`'s caps as the empty board it would make."""
    if board is None:
        report = lint(data, task_exists=lambda _ref: False)
    else:
        report = lint(data, task_exists=lambda ref: board.find_task(ref) is not None)
    report.name = plan or report.name
    if board is None and config is not None and report.ok and is_agent(actor):
        items = report.to_items()
        parents = {item.key: item.parent for item in items}
        nothing = caps.CapReads(lambda _since: {}, lambda _parent: 0, lambda _parent: 0)
        new_tasks = caps.plan_tasks(plan_order(items), parents, {})
        violations = caps.cap_violations(new_tasks, config, 0, nothing)
        report.problems += [_board_problem(doc) for doc in caps.problems(violations)]
    if board is None or not report.ok:
        return report
    items = report.to_items()
    if plan is not None:
        comparison = board.compare_plan(items, plan=plan)
        report.matched = {key: task.id for key, task in comparison.matched.items()}
        for difference in comparison.blocking(update):
            doc = difference.to_problem()
            cycle = doc.pop("keys", None)
            report.problems.append(
                Problem(
                    doc.pop("kind"),
                    doc.pop("message"),
                    key=doc.pop("key"),
                    field=doc.pop("field"),
                    keys=tuple(cycle) if cycle else None,
                    detail=doc,
                )
            )
        if update:
            report.changes = [difference.to_problem() for difference in comparison.updates()]
        report.unplanned = [link.to_json() for link in comparison.unplanned]
    if report.ok:
        report.problems += [
            _board_problem(doc)
            for doc in board.plan_problems(items, plan=plan, actor=actor, update=update)
        ]
    if not report.ok:
        report.order = []
    return report


def _board_problem(doc: dict[str, Any]) -> Problem:
    """A problem the board reported (`Board.plan_problems`) as lint reports one."""
    named = ("kind", "message", "key", "field", "ref")
    return Problem(
        **{name: doc.get(name) for name in named},  # type: ignore[arg-type]
        detail={name: value for name, value in doc.items() if name not in named} or None,
    )


def apply(
    board: Board,
    data: Any,
    *,
    plan: str,
    actor: str,
    capped: bool | None = None,
    update: bool = False,
) -> AppliedPlan:
    """Lint the parsed plan against `board` and apply it whole under the name `plan`, or refuse
    with the same problems `plan lint` reports (and the create caps for an identified agent's
    new tasks): items already on the board are found, not created again."""
    report = lint_against(board, data, plan=plan, update=update, actor=actor)
    if not report.ok:
        raise refusal(report)
    return board.apply_plan(report.to_items(), plan=plan, actor=actor, capped=capped, update=update)
