"""The payload each event kind carries, one `TypedDict` per kind, declared once: the fields in
snake_case, stored and served in camelCase (`events.wire`, by `naming.camel`). Three payloads name a
field `from`, a Python keyword, so they use the functional syntax.

Types only, on the product's paths: an emitter builds its payload as a dict literal annotated with
the kind's type, a reader annotates what `events.read` returns, and mypy checks every key either
writes against the declaration (tests/walls/test_declarations.py checks the `.get` reads mypy
does not). Those modules import this one under `TYPE_CHECKING`, because building these classes
cost ~3.5 M instructions of every `kanban` command's start-up (about 1.3% of a `claim-next`) for
no run-time use; the tests import it to hold every stored event to its kind's payload.
"""

from typing import NotRequired, TypedDict

from .events import EventKind

__all__ = [
    "PAYLOADS",
    "BudgetChanged",
    "CommentAdded",
    "DepLinked",
    "DepUnlinked",
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
    "TaskLanded",
    "TaskRestored",
    "TaskTransferred",
    "TaskUpdated",
    "VerificationRecorded",
    "VerificationStarted",
    "VerificationStopped",
    "WorkspaceProvisioned",
    "WorkspaceUpdated",
]


class TaskCreated(TypedDict):
    status: str
    depends_on: list[str]


class TaskClaimed(TypedDict):
    epoch: int
    verb: str  # claim, claim_next


# A move between statuses, by a verb (`complete`, `approve`, `reject`, `move`...).
StatusChanged = TypedDict(
    "StatusChanged",
    {
        "verb": str,
        "from": NotRequired[str],  # absent on an edit (TaskUpdated's shape) and in older events
        "to": NotRequired[str],
        "assignee": NotRequired[str | None],  # handed to someone else (the gate's handback)
        "human_override": NotRequired[bool],  # done over the verdict (the audit table has the row)
        "via": NotRequired[list[str]],  # the intermediate statuses of a multi-step verb (reject)
        "closed_executions": NotRequired[list[str]],  # runs open when the task left in_progress
        "reason": NotRequired[str],
        "fields": NotRequired[list[str]],  # columns an edit changed along with the move
        "blocker": NotRequired[str],  # cancel_dependents: the failed task this one waited on
    },
)


class TaskUpdated(TypedDict):
    """An edit that moved nothing (a same-status move with field changes, a bare edit)."""

    verb: str
    reason: NotRequired[str]
    fields: NotRequired[list[str]]
    lease_until: NotRequired[int]  # the holder's edit renewed its lease to this (Board._beat)


class LeaseRenewed(TypedDict):
    lease_until: int
    verb: str  # heartbeat, extend_lease; move: a holder's PATCH that changed nothing else


class ProgressLogged(TypedDict):
    lease_until: int
    verb: str  # log_progress


LeaseExpired = TypedDict(
    "LeaseExpired",
    {
        "from": str,
        "to": str,
        "assignee": str | None,
        "lease_until": int | None,
        "claim_epoch": int,
        "timed_out_executions": list[str],
    },
)


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
    path: NotRequired[str]  # a review comment: the file it is about
    line: NotRequired[int]  # and the line, when it names one
    lease_until: NotRequired[int]  # the holder's comment renewed its lease to this


class ExecutionStarted(TypedDict):
    execution_id: str
    lease_until: NotRequired[int]  # opening the run renewed the holder's lease to this


class ExecutionCompleted(TypedDict):
    execution_id: str
    status: str  # one of executions.OUTCOMES
    cost_usd: float | None
    agent_id: str | None
    team_id: str | None  # seed 003: the event carries the run's team, for its correlators
    runtime: str
    late: NotRequired[bool]  # the cost of a run the board had closed, reported after it


class VerificationStarted(TypedDict):
    """The gate began judging: the task in review waits on it, not on a person, until a verdict,
    a stop, a move, its process gone, or `until` (`attention.gate_since`)."""

    holder: str  # the judging process (`processes.process_token`)
    until: int  # ms: its time bound (the verify timeout and a margin)
    # ms: the gate beats this often while it runs (the task's `last_heartbeat_at`); one that
    # missed `attention.GATE_BEATS_MISSED` beats is dead, wherever it is read. Absent: no beat.
    beat_ms: NotRequired[int]


class VerificationRecorded(TypedDict):
    status: str  # the verdict's status (the gate's move, if any, is in the same transaction)


class VerificationStopped(TypedDict):
    reason: str  # the gate stopped without a verdict (an error in the completing process)


class WorkspaceProvisioned(TypedDict):
    workspace_id: str
    branch: str | None
    worktree_path: str | None
    base_commit: str | None


WorkspaceUpdated = TypedDict(
    "WorkspaceUpdated",
    {
        "workspace_id": str,
        "status": str,
        "from": NotRequired[str],
        "reason": NotRequired[str],
        "base_commit": NotRequired[str],  # the baseline moved (a sync with the base branch)
    },
)


# A task's work landed on its base branch (`boardlib.landings`); from in_review the same event
# carries the move to done (`from`/`to`), as approve-and-land is one decision.
TaskLanded = TypedDict(
    "TaskLanded",
    {
        "verb": str,  # land
        "landed_commit": str,
        "landed_into": str,
        "strategy": str | None,  # squash, rebase, merge; None: already on the base, none applied
        "base_before": str | None,  # the branch's tip it was built on
        "from": NotRequired[str],
        "to": NotRequired[str],
        "fields": NotRequired[list[str]],
        "recovered": NotRequired[bool],  # recorded by the next lander after a crash
        "recovered_by": NotRequired[str],  # ...the actor whose call recorded it
        "started_at": NotRequired[int],  # ...when the landing that crashed joined its queue
        "unverified": NotRequired[bool],  # an operator landed it without a verify command
        "unverified_detail": NotRequired[str],  # "no verify command; why: <the operator's words>"
        "already_on": NotRequired[bool],  # the base held the change already: nothing moved
    },
)


# An operator set, raised, lowered or removed a budget (also in the audit table, with who and why).
BudgetChanged = TypedDict(
    "BudgetChanged",
    {
        "scope": str,  # records.BUDGET_SCOPES
        "unit": str,  # records.BUDGET_UNITS
        "from": float | None,  # None: there was no budget
        "to": float | None,  # None: the budget is removed
        "reason": str,
        "team_id": NotRequired[str],  # a team's daily budget
    },
)


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
    | VerificationStarted
    | VerificationRecorded
    | VerificationStopped
    | WorkspaceProvisioned
    | WorkspaceUpdated
    | TaskLanded
    | BudgetChanged
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
    EventKind.VERIFICATION_STARTED: VerificationStarted,
    EventKind.VERIFICATION_RECORDED: VerificationRecorded,
    EventKind.VERIFICATION_STOPPED: VerificationStopped,
    EventKind.WORKSPACE_PROVISIONED: WorkspaceProvisioned,
    EventKind.WORKSPACE_UPDATED: WorkspaceUpdated,
    EventKind.TASK_LANDED: TaskLanded,
    EventKind.BUDGET_CHANGED: BudgetChanged,
}
