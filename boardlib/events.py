"""The board's event kinds and the payload each one carries, declared once.

Every write publishes one event (`events` table, seed 000's mutation log). Its `kind` is an
`EventKind`, a `StrEnum`, so the stored and served value is the same string as before and a kind
read back from the table (a plain `str`) compares and hashes equal to its member.

Each kind's payload is a `TypedDict` with snake_case fields. It is stored and served in camelCase,
converted by `naming.camel`, the one rule every JSON key follows (records, models, events): the
declarations here are the only place a payload key is spelled. A field named after a Python keyword
takes a trailing underscore (`from_` is stored as `from`).

Why `TypedDict` and not dataclasses: a payload is built inside the claim's write lock and a
`TypedDict` is a plain dict at run time (no class machinery per event), and defining ~20 of them
costs ~0.3 ms at import where ~20 dataclasses cost ~10 ms of every `kanban` command's start-up.
mypy checks every key an emitter writes or a reader reads against the declaration.

Emitters build the kind's payload and store `wire(payload)`; readers turn a stored payload back
into snake_case with `read(event.data)` and annotate the result with the kind's `TypedDict`.
"""

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, NotRequired, TypedDict

from .naming import camel

__all__ = [
    "PAYLOADS",
    "CommentAdded",
    "DepLinked",
    "DepUnlinked",
    "EventKind",
    "ExecutionCompleted",
    "ExecutionStarted",
    "LeaseExpired",
    "LeaseRenewed",
    "Payload",
    "ProgressLogged",
    "StatusChanged",
    "TaskClaimed",
    "TaskCreated",
    "TaskDropped",
    "TaskRestored",
    "TaskTransferred",
    "TaskUpdated",
    "VerificationRecorded",
    "WorkspaceProvisioned",
    "WorkspaceUpdated",
    "read",
    "wire",
    "wire_key",
]


class EventKind(StrEnum):
    TASK_CREATED = "task_created"
    TASK_CLAIMED = "task_claimed"
    STATUS_CHANGED = "status_changed"
    TASK_UPDATED = "task_updated"
    LEASE_RENEWED = "lease_renewed"
    PROGRESS_LOGGED = "progress_logged"
    LEASE_EXPIRED = "lease_expired"
    TASK_TRANSFERRED = "task_transferred"
    TASK_DROPPED = "task_dropped"
    TASK_RESTORED = "task_restored"
    DEP_LINKED = "dep_linked"
    DEP_UNLINKED = "dep_unlinked"
    COMMENT_ADDED = "comment_added"
    EXECUTION_STARTED = "execution_started"
    EXECUTION_COMPLETED = "execution_completed"
    VERIFICATION_RECORDED = "verification_recorded"
    WORKSPACE_PROVISIONED = "workspace_provisioned"
    WORKSPACE_UPDATED = "workspace_updated"


class TaskCreated(TypedDict):
    status: str
    depends_on: list[str]


class TaskClaimed(TypedDict):
    epoch: int
    verb: str  # claim, claim_next


class StatusChanged(TypedDict):
    """A move between statuses, by a verb (`complete`, `approve`, `reject`, `move`...)."""

    verb: str
    from_: NotRequired[str]  # absent when the mover did not read the task (cancel_dependents)
    to: NotRequired[str]
    assignee: NotRequired[str | None]  # the task was handed to someone else (the gate's handback)
    human_override: NotRequired[bool]  # done over the verdict (the audit table has the row)
    via: NotRequired[list[str]]  # the intermediate statuses of a multi-step verb (reject)
    closed_executions: NotRequired[list[str]]  # runs still open when the task left in_progress
    reason: NotRequired[str]
    fields: NotRequired[list[str]]  # columns an edit changed along with the move
    blocker: NotRequired[str]  # cancel_dependents: the failed task this one waited on


class TaskUpdated(TypedDict):
    """An edit that moved nothing (a same-status move with field changes, a bare edit)."""

    verb: str
    reason: NotRequired[str]
    fields: NotRequired[list[str]]


class LeaseRenewed(TypedDict):
    lease_until: int
    verb: str  # heartbeat, extend_lease


class ProgressLogged(TypedDict):
    lease_until: int
    verb: str  # log_progress


class LeaseExpired(TypedDict):
    from_: str
    to: str
    assignee: str | None
    lease_until: int | None
    claim_epoch: int
    timed_out_executions: list[str]


class TaskTransferred(TypedDict):
    to: str
    epoch: int
    verb: str  # transfer
    closed_executions: NotRequired[list[str]]


class TaskDropped(TypedDict):
    pass


class TaskRestored(TypedDict):
    pass


class DepLinked(TypedDict):
    depends_on: str


class DepUnlinked(TypedDict):
    depends_on: str


class CommentAdded(TypedDict):
    comment_id: str


class ExecutionStarted(TypedDict):
    execution_id: str


class ExecutionCompleted(TypedDict):
    execution_id: str
    status: str  # one of executions.OUTCOMES
    cost_usd: float | None
    agent_id: str | None
    runtime: str


class VerificationRecorded(TypedDict):
    status: str  # the verdict's status


class WorkspaceProvisioned(TypedDict):
    workspace_id: str
    branch: str | None
    worktree_path: str | None
    base_commit: str | None


class WorkspaceUpdated(TypedDict):
    workspace_id: str
    status: str
    from_: NotRequired[str]
    reason: NotRequired[str]


Payload = (
    TaskCreated
    | TaskClaimed
    | StatusChanged
    | TaskUpdated
    | LeaseRenewed
    | ProgressLogged
    | LeaseExpired
    | TaskTransferred
    | TaskDropped
    | TaskRestored
    | DepLinked
    | DepUnlinked
    | CommentAdded
    | ExecutionStarted
    | ExecutionCompleted
    | VerificationRecorded
    | WorkspaceProvisioned
    | WorkspaceUpdated
)

# Each kind's payload: the keys an event of that kind may carry (tests hold every emitted event to
# it).
PAYLOADS: dict[EventKind, type] = {
    EventKind.TASK_CREATED: TaskCreated,
    EventKind.TASK_CLAIMED: TaskClaimed,
    EventKind.STATUS_CHANGED: StatusChanged,
    EventKind.TASK_UPDATED: TaskUpdated,
    EventKind.LEASE_RENEWED: LeaseRenewed,
    EventKind.PROGRESS_LOGGED: ProgressLogged,
    EventKind.LEASE_EXPIRED: LeaseExpired,
    EventKind.TASK_TRANSFERRED: TaskTransferred,
    EventKind.TASK_DROPPED: TaskDropped,
    EventKind.TASK_RESTORED: TaskRestored,
    EventKind.DEP_LINKED: DepLinked,
    EventKind.DEP_UNLINKED: DepUnlinked,
    EventKind.COMMENT_ADDED: CommentAdded,
    EventKind.EXECUTION_STARTED: ExecutionStarted,
    EventKind.EXECUTION_COMPLETED: ExecutionCompleted,
    EventKind.VERIFICATION_RECORDED: VerificationRecorded,
    EventKind.WORKSPACE_PROVISIONED: WorkspaceProvisioned,
    EventKind.WORKSPACE_UPDATED: WorkspaceUpdated,
}


class _WireKeys(dict[str, str]):
    """snake_case field -> stored key; a field no kind declares is converted when first seen."""

    def __missing__(self, name: str) -> str:
        key = self[name] = camel(name)
        return key


_WIRE = _WireKeys(
    (name, camel(name)) for payload in PAYLOADS.values() for name in payload.__annotations__
)
_FIELD: dict[str, str] = {key: name for name, key in _WIRE.items()}


def wire_key(field: str) -> str:
    """The stored (camelCase) key of a payload field: `lease_until` -> `leaseUntil`."""
    return _WIRE[field]


def wire(payload: Payload) -> dict[str, Any]:
    """A payload as stored and served: the same values in the same order, keys in camelCase."""
    keys = _WIRE
    return {keys[name]: value for name, value in payload.items()}


def read(data: Mapping[str, Any]) -> Any:
    """A stored payload with its declared keys back in snake_case, to be annotated with its kind's
    `TypedDict` (`data: LeaseExpired = read(event.data)`). Keys no kind declares pass unchanged."""
    names = _FIELD
    return {names.get(key, key): value for key, value in data.items()}
