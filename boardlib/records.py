"""The board's rows as plain slotted dataclasses: `Task`, `Comment`, `Execution`, `Workspace`,
`Event`, `AuditEntry`, and the composite reads built from them.

Dataclasses, not pydantic, so an agent's claim path never imports pydantic; field names are the
SQL columns, `to_json()` the camelCase JSON. Records are values and compare through `Record`'s one
`__eq__`/`__repr__`. Why each choice: docs/architecture.md#the-boards-rows
"""

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from operator import attrgetter, itemgetter
from typing import Any, ClassVar, NamedTuple, Self, get_args

from .actors import AUTHOR_AGENT, AUTHOR_SYSTEM, AUTHOR_USER
from .leases import lease_expired
from .naming import camel
from .processes import process_gone
from .transitions import TODO

# The values some columns may hold, declared once: the schema's CHECK constraints, the board's
# input checks and every surface read them.
AUTHOR_TYPES = (AUTHOR_AGENT, AUTHOR_USER, AUTHOR_SYSTEM)
# An execution (one agent's run on a task) is opened running and closed once with an outcome: by
# its agent, by recovery when the task's lease expires (timed out), or cancelled when the task
# leaves in_progress under it. Queued is reserved by the schema for runs waiting to start.
EXECUTION_QUEUED = "queued"
EXECUTION_RUNNING = "running"
EXECUTION_SUCCEEDED = "succeeded"
EXECUTION_FAILED = "failed"
EXECUTION_TIMED_OUT = "timed_out"
EXECUTION_CANCELLED = "cancelled"  # the task status's word, a different fact
EXECUTION_OUTCOMES = (
    EXECUTION_SUCCEEDED, EXECUTION_FAILED, EXECUTION_TIMED_OUT, EXECUTION_CANCELLED
)  # fmt: skip
EXECUTION_STATUSES = (EXECUTION_QUEUED, EXECUTION_RUNNING, *EXECUTION_OUTCOMES)
# What a run cost, as its holder reports it on the close (or once later: `Board.close_execution`)
EXECUTION_LEDGER = ("input_tokens", "output_tokens", "cache_read", "cache_write", "cost_usd")
WORKSPACE_ACTIVE = "active"  # a live worktree: its work has not landed or been archived
WORKSPACE_STATUSES = (WORKSPACE_ACTIVE, "archived", "stale")
LAND_STRATEGIES = ("squash", "rebase", "merge")  # how a task's work lands on its base branch
LAND_QUEUE_STATES = ("waiting", "active")  # a landing waits its turn, then has it

# A review comment anchored to a line names the side of the diff the line is on: the new file (an
# added or unchanged line) or the old one (a removed line).
ANCHOR_NEW = "new"
ANCHOR_OLD = "old"
ANCHOR_SIDES = (ANCHOR_NEW, ANCHOR_OLD)
TASK_ID_PREFIX = "TASK-"  # a task's id is this and a number: `TASK-42`


def looks_like_task_id(text: str) -> bool:
    """Whether `text` has the shape the board gives task ids (`TASK-` and ASCII digits): a name
    of this shape could be taken for a task, now or once the board has that many."""
    number = text.removeprefix(TASK_ID_PREFIX)
    return number != text and number.isascii() and number.isdigit()


_JSON_PLANS: dict[
    type, tuple[Callable[[Any], tuple[Any, ...]], tuple[str, ...], tuple[int, ...]]
] = {}
_FIELD_NAMES: dict[type, frozenset[str]] = {}
_FLOAT_FIELDS: dict[type, frozenset[str]] = {}


Layout = tuple[tuple[int, ...] | None, tuple[int, ...], tuple[int, ...]]
_LAYOUTS: dict[tuple[type, tuple[str, ...]], Layout] = {}


def _layout(cls: type, keys: tuple[str, ...]) -> Layout:
    """For rows with these columns: the column index of each field in declaration order (None
    when a field is missing: keyword construction then), which positions hold JSON, and which
    hold a float (see `_as_float`)."""
    names = [f.name for f in fields(cls)]
    floats = tuple(i for i, name in enumerate(names) if name in _float_fields(cls))
    if not set(names) <= set(keys):
        return None, (), floats
    json_columns: frozenset[str] = getattr(cls, "_json_columns", frozenset())
    positions = tuple(keys.index(name) for name in names)
    return positions, tuple(i for i, name in enumerate(names) if name in json_columns), floats


_PICKERS: dict[tuple[int, ...], Callable[[tuple[Any, ...]], tuple[Any, ...]]] = {}


def _picker(positions: tuple[int, ...]) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    """The fields' values out of a row's tuple, in C (`itemgetter`): a row indexed field by field
    from Python paid a call per column (a Postgres claim's 33 columns: ~50 us)."""
    pick = _PICKERS.get(positions)
    if pick is None:
        getter = itemgetter(*positions)
        pick = getter if len(positions) > 1 else (lambda values: (getter(values),))
        _PICKERS[positions] = pick
    return pick


def _as_float(args: list[Any], positions: tuple[int, ...]) -> None:
    """A REAL column's integral value as a float: SQLite's `RETURNING` gives `0` where `SELECT`
    gives `0.0`, so the same task's `costUsd` read back as either. One type check per float field
    per row (a 10,000-task read: 18.5-19.1 -> 19.0-19.2 ms)."""
    for position in positions:
        if args[position].__class__ is int:
            args[position] = float(args[position])


def _float_fields(cls: type) -> frozenset[str]:
    """The fields declared `float` (or `float | None`): REAL columns, read as floats."""
    names = _FLOAT_FIELDS.get(cls)
    if names is None:
        names = _FLOAT_FIELDS[cls] = frozenset(
            f.name for f in fields(cls) if f.type in (float, float | None)
        )
    return names


def _field_names(cls: type) -> frozenset[str]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = frozenset(f.name for f in fields(cls))
    return names


def _holds_records(annotation: Any) -> bool:
    """Whether a field declared as `annotation` may hold records (`Task`, `list[Comment]`...),
    which `to_json` converts one by one; every other field is written as it is."""
    if isinstance(annotation, type) and issubclass(annotation, Record):
        return True
    return any(_holds_records(member) for member in get_args(annotation))


def _json_plan(
    cls: type,
) -> tuple[Callable[[Any], tuple[Any, ...]], tuple[str, ...], tuple[int, ...]]:
    """How `to_json` reads a record of `cls`: one getter for every field, the camelCase keys, and
    the positions that may hold records. Building a 10,000-task list this way took 58 ms
    instead of 221 ms (a getattr, two isinstance checks and a key lookup per field before)."""
    plan = _JSON_PLANS.get(cls)
    if plan is None:
        declared = fields(cls)
        read = attrgetter(*(f.name for f in declared))
        getter = read if len(declared) > 1 else (lambda record: (read(record),))
        keys = tuple(camel(f.name) for f in declared)
        nested = tuple(i for i, f in enumerate(declared) if _holds_records(f.type))
        plan = _JSON_PLANS[cls] = (getter, keys, nested)
    return plan


class Record:
    """Shared behaviour: build from a `sqlite3.Row`, serialise to camelCase JSON."""

    __slots__ = ()

    __pydantic_config__: ClassVar[dict[str, Any]] = {
        "alias_generator": camel,
        "populate_by_name": True,
    }
    _json_columns: ClassVar[frozenset[str]] = frozenset()  # TEXT columns holding JSON

    def __eq__(self, other: object) -> bool:
        cls = self.__class__
        if other.__class__ is not cls:
            return NotImplemented
        values = (_JSON_PLANS.get(cls) or _json_plan(cls))[0]  # every field, in order
        same: bool = values(self) == values(other)
        return same

    __hash__ = None  # type: ignore[assignment]  # mutable values, as with the dataclass default

    def __repr__(self) -> str:
        shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self))  # type: ignore[arg-type]
        return f"{self.__class__.__qualname__}({shown})"

    @classmethod
    def from_row(cls, row: Any) -> Self:
        """Build from a `sqlite3.Row`: columns that are not fields are ignored. Positional when
        the row carries every field (keyword construction costs ~15 µs a task, which a 10,000-task
        live view pays on every full read)."""
        keys = tuple(row.keys())
        layout = _LAYOUTS.get((cls, keys))
        if layout is None:
            layout = _LAYOUTS[(cls, keys)] = _layout(cls, keys)
        positions, json_positions, float_positions = layout
        if positions is None:
            names = _field_names(cls)
            values = {key: value for key, value in zip(keys, row, strict=True) if key in names}
            for column in cls._json_columns:
                if isinstance(values.get(column), str):
                    values[column] = json.loads(values[column])
            for column in _float_fields(cls):
                if values.get(column).__class__ is int:
                    values[column] = float(values[column])
            return cls(**values)
        args = list(_picker(positions)(tuple(row)))
        for position in json_positions:
            if isinstance(args[position], str):
                args[position] = json.loads(args[position])
        _as_float(args, float_positions)
        return cls(*args)

    @classmethod
    def from_rows(cls, rows: "Sequence[Any]") -> list[Self]:
        """Build many records from rows of one query: the column layout is worked out once."""
        if not rows:
            return []
        keys = tuple(rows[0].keys())
        layout = _LAYOUTS.get((cls, keys))
        if layout is None:
            layout = _LAYOUTS[(cls, keys)] = _layout(cls, keys)
        positions, json_positions, float_positions = layout
        if positions is None:
            return [cls.from_row(row) for row in rows]
        loads = json.loads
        pick = _picker(positions)
        built = []
        for row in rows:
            args = list(pick(tuple(row)))
            for position in json_positions:
                value = args[position]
                if value == "[]":
                    args[position] = []
                elif isinstance(value, str):
                    args[position] = loads(value)
            _as_float(args, float_positions)
            built.append(cls(*args))
        return built

    def to_json(self) -> dict[str, Any]:
        """The camelCase JSON document. Lists and dicts of scalars are the record's own objects,
        not copies: treat the document as read-only, as the record is."""
        getter, keys, nested = _json_plan(type(self))
        values = getter(self)
        out = dict(zip(keys, values, strict=False))  # equal lengths by construction
        for position in nested:
            value = values[position]
            if isinstance(value, Record):
                out[keys[position]] = value.to_json()
            elif isinstance(value, (list, tuple)):
                out[keys[position]] = [
                    item.to_json() if isinstance(item, Record) else item for item in value
                ]
        return out


# Task keeps the dataclass's generated __eq__: the live view compares 10,000 of them per snapshot,
# and the generated method takes ~10,000 instructions a comparison against ~15,000 for Record's.
@dataclass(slots=True, repr=False)
class Task(Record):
    """A board task: seed 003's `DbTask` plus the lease protocol's columns."""

    _json_columns: ClassVar[frozenset[str]] = frozenset({"holders"})

    id: str
    title: str
    status: str
    created_at: int
    updated_at: int
    description: str | None = None
    priority: int = 0
    team_id: str | None = None
    role: str | None = None
    kind: str = "code"
    assignee_agent_id: str | None = None
    assignee_runtime: str | None = None
    claimed_by: str | None = None  # the first claimer, kept for the review rule
    holders: list[str] = field(default_factory=list)  # every holder of the current attempt
    claim_epoch: int = 0  # bumped by every claim, transfer and lease-expiry release
    lease_until: int | None = None
    last_heartbeat_at: int | None = None
    attempts: int = 0  # how many times the task has been claimed
    unmet_deps: int = 0  # dependencies not yet done; 0 means ready when todo
    blocked_reason: str | None = None
    parent_task_id: str | None = None
    source_delegation_id: str | None = None
    worktree_ref: str | None = None
    branch_ref: str | None = None
    cost_usd: float = 0.0
    parent_session_id: str | None = None
    dropped: int = 0
    tenant_id: str | None = None
    scheduled_by: str = "manual"
    verification: str | None = None  # typed VerificationResult JSON (models.VerificationResult)
    completed_at: int | None = None
    # Where the task's work landed (`boardlib.worktrees.landing`): set once, by the landing.
    landed_commit: str | None = None  # the commit on the base branch that carries the work
    landed_into: str | None = None  # the branch, e.g. main
    landed_at: int | None = None
    landed_by: str | None = None  # who landed it (the reviewer or operator)
    landed_strategy: str | None = None  # one of LAND_STRATEGIES
    # Budgets (boardlib.budgets): limits on the spend of this task and all its descendants.
    budget_usd: float | None = None
    budget_tokens: int | None = None
    tokens: int = 0  # the tokens of this task's own runs (input + output + cache read + write)
    # The recorded spend of this task and every descendant, kept by each run's close in the same
    # transaction (integers: the running total equals the ledger's sum whatever the order).
    subtree_cost_micros: int = 0  # millionths of a dollar
    subtree_tokens: int = 0
    # The flow figures of `kanban stats` (boardlib.stats), kept by the moves themselves.
    first_claimed_at: int | None = None  # the first claim: where the cycle time starts
    review_entered_at: int | None = None  # in review since (None when not in review)
    review_wait_ms: int = 0  # time spent waiting in review, over every attempt
    # The plan (its name) and the plan's key this task was applied from: unique together, so a
    # re-applied plan finds its tasks (`plan_match.py`). None for a task filed on its own.
    plan_name: str | None = None
    plan_key: str | None = None
    status_since: int | None = None  # when the task entered its status (the inbox's "since")

    @property
    def is_ready(self) -> bool:
        return self.status == TODO and not self.dropped and self.unmet_deps == 0

    @property
    def builder(self) -> str | None:
        """Who built the current attempt: the last holder, else the first claimer."""
        return self.holders[-1] if self.holders else self.claimed_by

    @property
    def builders(self) -> list[str]:
        """Who built this task and so may not judge it (builder is not judge: approve, reject,
        land, a move out of review): every holder of the current attempt, its first claimer
        and its holder now. The one declaration the review, landing and move rules and the
        inbox's `--as` read."""
        named = [*self.holders, self.claimed_by, self.assignee_agent_id]
        return list(dict.fromkeys(name for name in named if name))

    @property
    def attempt_claimer(self) -> str | None:
        """Who claimed the current (or, once done, the last) attempt: its first holder; None when
        a release or an expiry ended it. `claimed_by` is the task's first claimer, kept for the
        review rule, so it can name someone whose attempt ended before this work began."""
        return self.holders[0] if self.holders else None

    def lease_expired(self, now: int) -> bool:
        """Whether this task's lease has run out at `now` (see `leases.lease_expired`)."""
        return lease_expired(self.lease_until, now)


@dataclass(slots=True, eq=False, repr=False)
class Comment(Record):
    """Seed 000's comment row; a review comment also names the line it is about (`path`, `line`
    on `side` of the diff, and that line's text when it was written, so the anchor can be found
    again after the file moved on). A plain comment leaves the four None."""

    id: str
    task_id: str
    author_type: str
    body: str
    created_at: int
    author_agent_id: str | None = None
    tenant_id: str | None = None
    path: str | None = None
    line: int | None = None
    side: str | None = None
    line_text: str | None = None

    @property
    def anchored(self) -> bool:
        return self.path is not None

    def review_entry(self) -> dict[str, Any]:
        """An anchored comment as an agent reads it in JSON (the resume read, `task view`): file,
        line and side, the line's text, the comment, who and when."""
        return {
            "commentId": self.id,
            "path": self.path,
            "line": self.line,
            "side": self.side or ANCHOR_NEW,
            "lineText": self.line_text,
            "body": self.body,
            "author": self.author_agent_id or self.author_type,
            "createdAt": self.created_at,
        }


@dataclass(slots=True, eq=False, repr=False)
class Execution(Record):
    """One run of one task: the ledger crash recovery reads."""

    id: str
    task_id: str
    executor_type: str
    status: str
    created_at: int
    workspace_id: str | None = None
    agent_id: str | None = None
    claim_epoch: int | None = None
    claimed_at: int | None = None
    started_at: int | None = None
    completed_at: int | None = None
    before_commit: str | None = None
    after_commit: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    cost_usd: float | None = None
    summary: str | None = None
    run_reason: str | None = None
    error: str | None = None
    recovery_tombstone: int = 0
    tenant_id: str | None = None


@dataclass(slots=True, eq=False, repr=False)
class Workspace(Record):
    id: str
    task_id: str
    repo_path: str
    status: str
    created_at: int
    branch: str | None = None
    worktree_path: str | None = None
    base_commit: str | None = None
    tenant_id: str | None = None
    last_used_at: int | None = None
    base_ref: str | None = None  # the branch the worktree was made from (its landing target)
    host: str | None = None  # the machine it was made on (`processes.machine_id`); None: older


@dataclass(slots=True, eq=False, repr=False)
class Event(Record):
    """One entry of the append-only mutation log; `seq` is the cursor readers follow."""

    _json_columns: ClassVar[frozenset[str]] = frozenset({"data"})

    seq: int
    kind: str
    created_at: int
    task_id: str | None = None
    actor: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    ttl_seconds: int | None = None
    tenant_id: str | None = None


@dataclass(slots=True, eq=False, repr=False)
class Consumer(Record):
    """A named reader of the event log (`kanban watch`, `events --follow --consumer`): its durable
    cursor, the delivery that keeps failing (held once it failed often enough), and which process
    owns it now. Why each field: docs/watch.md"""

    name: str
    last_seq: int  # every event at or below it was delivered (the cursor)
    created_at: int
    updated_at: int
    failing_seq: int | None = None  # the event whose delivery failed last, until it succeeds
    failures: int = 0  # failed deliveries of `failing_seq` in a row
    last_error: str | None = None
    held_since: int | None = None  # when `failures` reached the hold threshold (in the inbox)
    owner: str | None = None  # the process delivering (`processes.process_token`), None when idle
    owner_until: int | None = None  # the owner's lease: another process may take over after it


@dataclass(slots=True, eq=False, repr=False)
class InboxItem(Record):
    """One thing a person must act on (`boardlib.attention`): which task, what kind, why, since
    when (ms), and the one obvious action. A held watch delivery names its consumer and event."""

    kind: str
    task_id: str | None
    why: str
    since: int
    action: str
    title: str | None = None
    status: str | None = None
    consumer: str | None = None
    event_seq: int | None = None
    builders: list[str] | None = None  # who built its task (`Task.builders`): not its judges
    command: str | None = None  # the operator's command that acts on it (a spent budget's raise)


@dataclass(slots=True, eq=False, repr=False)
class GateRun(Record):
    """A task in review whose verification gate judges it now (`attention.gate_since`): no
    inbox item until the gate ends; `since` (ms) is when it began."""

    task_id: str
    since: int
    title: str | None = None


@dataclass(slots=True, eq=False, repr=False)
class QueueEntry(Record):
    """One landing in its branch's queue (table `land_queue`; `boardlib.landings` keeps it)."""

    _json_columns: ClassVar[frozenset[str]] = frozenset({"options"})

    seq: int
    id: str
    repo_path: str
    ref: str
    task_id: str
    lander: str  # who lands (the actor)
    holder: str  # the landing's token (`landings.holder_token`)
    state: str  # waiting | active
    lease_until: int
    strategy: str
    from_status: str  # in_review (approve and land) or done
    fence: str  # the commit this landing fences the branch with while it holds the turn
    created_at: int
    updated_at: int
    old_tip: str | None = None  # the intent: the tip it builds on...
    new_commit: str | None = None  # ...and the commit the branch moves to
    built_base: str | None = None  # the tip its current build is on (verified or not)...
    built_commit: str | None = None  # ...and that build: what the landing behind builds on
    options: dict[str, Any] = field(default_factory=dict)
    tenant_id: str | None = None

    def dead(self, now: int) -> bool:
        """Its lander can no longer act: the lease ran out, or its process is gone
        (`landings.holder_gone`)."""
        return self.lease_until < now or process_gone(self.holder)


@dataclass(slots=True, eq=False, repr=False)
class LandingRun(Record):
    """A task whose landing is under way (its live row in the landing queue, `attention.landing`):
    its review, land or refusal item is left out until the landing ends; `since` (ms) is when
    `lander` joined the queue (`entry`, LAND-n)."""

    task_id: str
    since: int
    lander: str
    entry: str
    title: str | None = None


@dataclass(slots=True, eq=False, repr=False)
class Inbox(Record):
    """Everything that needs a person now, oldest first, as of `now`. Read for one judge
    (`left_out`): the items whose action is refused to it as their builder are left out.
    `verifying`: the tasks left out because their gate judges them now, oldest first;
    `landing`: those left out because a landing of them is under way, oldest first."""

    items: list[InboxItem]
    count: int
    now: int
    left_out: int = 0
    verifying: list[GateRun] = field(default_factory=list)
    landing: list[LandingRun] = field(default_factory=list)


# The audit row of a move to done over the verdict by a person (`task move --human-override`)
OVERRIDE_ACTION = "human_override"


class Marks(NamedTuple):
    """What a board view marks on cards and no task row says (`Board.marked_task_ids`): the tasks
    moved to done over the verdict, and the done tasks an operator decided won't land."""

    overridden: frozenset[str]
    wont_land: frozenset[str]


@dataclass(slots=True, eq=False, repr=False)
class AuditEntry(Record):
    """A human override or a verification-gate run, kept for governance."""

    seq: int
    actor: str
    action: str
    created_at: int
    task_id: str | None = None
    from_status: str | None = None
    to_status: str | None = None
    verdict_overridden: str | None = None
    detail: str | None = None
    tenant_id: str | None = None


@dataclass(slots=True, eq=False, repr=False)
class Ancestor(Record):
    """One link of a task's parent chain (seed 003 keeps these keys in snake_case)."""

    __pydantic_config__: ClassVar[dict[str, Any]] = {}  # snake_case in JSON schemas too

    id: str
    title: str
    status: str
    parent_task_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "parent_task_id": self.parent_task_id,
            "title": self.title,
            "status": self.status,
        }


@dataclass(slots=True, eq=False, repr=False)
class LinkedTask(Record):
    """The other end of a dependency edge, with what a reader needs to judge it."""

    id: str
    title: str
    status: str
    assignee_agent_id: str | None = None
    dropped: int = 0


@dataclass(slots=True, eq=False, repr=False)
class Claim(Record):
    """What a successful claim hands the worker: the task and the epoch to quote back."""

    task: Task
    claim_epoch: int


@dataclass(frozen=True, slots=True, repr=False)
class WontLand(Record):
    """An operator's "won't land" decision that still stands on a task (`wontland.wont_land`,
    read back from its audit row): who took it, when, why, and where the work was kept."""

    by: str
    at: int
    reason: str
    kept: str | None = None  # "its work kept on BRANCH at SHA", or "no branch left"


@dataclass(slots=True, eq=False, repr=False)
class TaskView(Record):
    """One task with everything around it: comments, parent chain, both dependency directions,
    executions and workspaces; `wont_land` when an operator decided its work won't land."""

    task: Task
    comments: list[Comment]
    ancestors: list[Ancestor]
    dependencies: list[LinkedTask]
    dependents: list[LinkedTask]
    executions: list[Execution]
    workspaces: list[Workspace]
    verifying_since: int | None = None  # ms: its verification gate judges it now, since then
    wont_land: WontLand | None = None
    landing: LandingRun | None = None  # a landing of it under way (`attention.landing`)

    def to_json(self) -> dict[str, Any]:
        """The view, plus `review`: the comments anchored to lines, as an agent acts on them."""
        out = Record.to_json(self)
        out["review"] = [comment.review_entry() for comment in self.comments if comment.anchored]
        return out


@dataclass(slots=True, eq=False, repr=False)
class Explanation(Record):
    """Why a task is or is not claimable right now, in words and in data."""

    task_id: str
    claimable: bool
    status: str
    reasons: list[str]
    unmet_dependencies: list[LinkedTask]
    lease_holder: str | None = None
    lease_until: int | None = None
    role: str | None = None


@dataclass(slots=True, eq=False, repr=False)
class IdleExplanation(Record):
    """What claim-next would find: the ready tasks (then `claimable`), else what the todo column
    waits on and when a lease runs out."""

    claimable: bool
    role: str | None
    reasons: list[str]
    todo: int
    waiting_on_dependencies: list[str]  # up to 20 ids
    other_roles: list[str]  # up to 20 ids
    in_progress: int
    next_lease_expiry: int | None = None
    ready: list[str] = field(default_factory=list)  # up to 20 ids, in no promised order
    held_by_you: list[str] = field(default_factory=list)  # the asking agent's live claims


@dataclass(slots=True, eq=False, repr=False)
class LapsedLease(Record):
    """A claim whose lease ran out: the next claim-next releases it before it picks."""

    id: str
    assignee_agent_id: str | None
    lease_until: int | None
    claim_epoch: int


@dataclass(slots=True, eq=False, repr=False)
class ClaimPreview(Record):
    """What claim-next would do right now, found without doing it: the task it would claim (as
    it is now), the lapsed leases it would release first, and why (`explain`: the idle view)."""

    claimable: bool
    would_claim: Task | None
    would_release: list[LapsedLease]
    reasons: list[str]
    explain: IdleExplanation


@dataclass(slots=True, eq=False, repr=False)
class CheckReport(Record):
    """`kanban db check`: SQLite's own checks, the schema version and the kept counters; with the
    worktrees (`Worktrees.check`), the live checkouts this machine is missing among `problems`."""

    ok: bool
    path: str
    schema_version: int
    expected_schema_version: int
    problems: list[str]
    counts: dict[str, int]
    last_event_seq: int
    full: bool = False  # the thorough database check ran (SQLite: integrity_check, not quick)
    # active workspaces whose checkout is on another machine (workspaceId, taskId, host): theirs
    # to judge, not a problem here
    elsewhere: list[dict[str, str]] = field(default_factory=list)


@dataclass(slots=True, eq=False, repr=False)
class ReconcileReport(Record):
    """What one stale-task reconciliation pass did (`Board.reconcile_stale_tasks`)."""

    released: list[Task]
    timed_out_executions: list[str]
    purged_events: int


# -- budgets (boardlib.budgets) ----------------------------------------------------------------

# The kinds of budget, declared once: a task's (covering its subtree), a team's per day, the
# board's per day; and their two units.
BUDGET_TASK = "task"
BUDGET_TEAM_DAILY = "team_daily"
BUDGET_BOARD_DAILY = "board_daily"
BUDGET_SCOPES = (BUDGET_TASK, BUDGET_TEAM_DAILY, BUDGET_BOARD_DAILY)
BUDGET_USD = "usd"
BUDGET_TOKENS = "tokens"
BUDGET_UNITS = (BUDGET_USD, BUDGET_TOKENS)
# The keys of the daily budgets and their spend: the board's, and each team's (`team:<id>`).
BOARD_SCOPE = "board"
TEAM_SCOPE_PREFIX = "team:"
DAY_MS = 86_400_000  # a daily budget's day is the UTC day: epoch milliseconds // DAY_MS
# When a run's cost and tokens count by time: when the run closed. A cost reported after the board
# closed the run (a late cost, `Board._record_late`) counts at that close too, so the daily
# budgets' day (`budgets.run_day`) and `kanban stats` (`store/stats_sql.py`) add up alike.
RUN_COUNTED_AT = "completed_at"
MICROS_PER_USD = 1_000_000  # the ledger counts whole micro-dollars (`budgets.whole_micros`)
USD_MAX = 1e9  # the ledger's ceilings on a budget or a cost: sanity, not a policy
TOKENS_MAX = 10**15


@dataclass(slots=True, eq=False, repr=False)
class BudgetStanding(Record):
    """One budget and what has been spent against it: `owner` is the task (scope `task`), the
    team (`team_daily`) or None (`board_daily`); `day` is the UTC day of a daily budget
    (epoch days). Amounts are dollars or tokens, as `unit` says."""

    scope: str
    unit: str
    limit: float
    spent: float
    owner: str | None = None
    day: int | None = None

    @property
    def exhausted(self) -> bool:
        return self.spent >= self.limit

    @property
    def fraction(self) -> float:
        """Spent over limit (1.0 and up: spent); a zero budget is spent at once."""
        return self.spent / self.limit if self.limit > 0 else 1.0


@dataclass(slots=True, eq=False, repr=False)
class ClosedExecution(Execution):
    """A closed run, and the budget its cost spent, if any: the task was then moved to blocked
    (`budget_exceeded`), its lease ended, and its cost is recorded all the same."""

    budget_exceeded: BudgetStanding | None = None

    def to_json(self) -> dict[str, Any]:
        document = Record.to_json(self)
        if self.budget_exceeded is None:
            del document["budgetExceeded"]  # the seed's execution document, unchanged
        return document


@dataclass(slots=True, eq=False, repr=False)
class DailyBudget(Record):
    """A daily budget: the board's (`team_id` None) or one team's. Either limit may be None;
    both are, and so is the stamp, in the answer to a change that removed the budget."""

    team_id: str | None
    daily_usd: float | None
    daily_tokens: int | None
    updated_at: int | None
    updated_by: str | None


@dataclass(slots=True, eq=False, repr=False)
class BudgetReport(Record):
    """`kanban budget show`: every budget on the board and today's spend against it, and the
    title (agent text: a surface draws it inert) and status of each budgeted task."""

    day: int
    daily: list[BudgetStanding]
    tasks: list[BudgetStanding]
    titles: dict[str, str] = field(default_factory=dict)
    statuses: dict[str, str] = field(default_factory=dict)  # each budgeted task's, by id
