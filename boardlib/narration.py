"""An event in words: "agent-ada claimed TASK-7", "lease of agent-linus on TASK-3 expired → todo",
"agent-bob rejected TASK-9: no tests".

One function for every surface that tells a person what happened: the TUI's activity pane and
task history, and `kanban events --format table`. It returns plain text holding agent text
verbatim (a reason, a branch name); the surface that draws it makes it inert
(`boardlib.inert.inert`) like any other agent text. Times are the surface's to format.

Routine events (`ROUTINE`: a lease renewed by a heartbeat) are described like any other, and a
surface showing a short feed may leave them out: on a busy board they would drown the rest.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .actors import actor_label
from .budgets import amount, budget_name
from .clock import span
from .events import EventKind, read
from .records import BUDGET_TASK, BUDGET_USD, OVERRIDE_ACTION, AuditEntry, Event
from .transitions import label

if TYPE_CHECKING:  # types only: see boardlib/payloads.py
    from .payloads import (
        BudgetChanged,
        CommentAdded,
        DepLinked,
        DepUnlinked,
        ExecutionCompleted,
        ExecutionStarted,
        LeaseExpired,
        StatusChanged,
        TaskClaimed,
        TaskCreated,
        TaskLanded,
        TaskTransferred,
        TaskUpdated,
        VerificationRecorded,
        VerificationStopped,
        WorkspaceProvisioned,
    )


__all__ = ["ROUTINE", "narrate", "narrate_audit"]

ROUTINE = frozenset({EventKind.LEASE_RENEWED})


def _who(event: Event) -> str:
    return actor_label(event.actor)


def _task(event: Event) -> str:
    return event.task_id or "the board"


def _status(value: Any) -> str:
    return label(value) if isinstance(value, str) and value else "?"


def _because(reason: object) -> str:
    return f": {reason}" if isinstance(reason, str) and reason else ""


def _status_changed(event: Event) -> str:
    data: StatusChanged = read(event.data)
    who, task, to = _who(event), _task(event), _status(data.get("to"))
    verb, because = data.get("verb"), _because(data.get("reason"))
    if data.get("human_override"):
        return f"{who} overrode the verdict: {task} → {to}{because}"
    if verb == "complete":
        return f"{who} finished {task} → {to}"
    if verb == "approve":
        return f"{who} approved {task} → {to}"
    if verb == "reject":
        return f"{who} rejected {task}{because}"
    if verb == "block":
        return f"{who} blocked {task}{because}"
    if verb == "release":
        return f"{who} released {task} → {to}"
    if verb == "unblock":
        return f"{who} unblocked {task} → {to}{because}"
    if verb == "cancel_dependents":
        return f"{who} cancelled {task}: it waited on {data.get('blocker') or '?'}"
    source = f" from {_status(data['from'])}" if data.get("from") else ""
    return f"{who} moved {task}{source} to {to}{because}"


def _landed(event: Event) -> str:
    data: TaskLanded = read(event.data)
    commit = str(data.get("landed_commit") or "?")[:7]
    into = data.get("landed_into") or "?"
    how = "approved and landed" if data.get("to") == "done" else "landed"
    if data.get("already_on"):  # nothing moved: the base's tip held the change already
        how += " (found already on the branch)"
    again = " (recovered after a crash)" if data.get("recovered") else ""
    by, started = data.get("recovered_by"), data.get("started_at")
    if by:  # older events do not say by whom, nor when
        before = "" if started is None else f", started {span(event.created_at - started)} before,"
        again = (
            f" (completed by recovery by {by}: the landing{before} crashed after moving the branch)"
        )
    unverified = ""
    if data.get("unverified"):  # older events carry no detail
        unverified = f", unverified ({data.get('unverified_detail') or 'no verify command'})"
    return f"{_who(event)} {how} {_task(event)} on {into} as {commit}{unverified}{again}"


def _claimed(event: Event) -> str:
    data: TaskClaimed = read(event.data)
    how = " (next ready)" if data.get("verb") == "claim_next" else ""
    return f"{_who(event)} claimed {_task(event)}{how}"


def _created(event: Event) -> str:
    data: TaskCreated = read(event.data)
    waits = data.get("depends_on") or []
    after = f", waiting on {', '.join(map(str, waits))}" if waits else ""
    return f"{_who(event)} created {_task(event)} in {_status(data.get('status'))}{after}"


def _updated(event: Event) -> str:
    data: TaskUpdated = read(event.data)
    fields = data.get("fields") or []
    what = f" ({', '.join(map(str, fields))})" if fields else ""
    return f"{_who(event)} edited {_task(event)}{what}"


def _lease_expired(event: Event) -> str:
    data: LeaseExpired = read(event.data)
    holder = data.get("assignee") or "?"
    return f"lease of {holder} on {_task(event)} expired → {_status(data.get('to'))}"


def _execution_completed(event: Event) -> str:
    data: ExecutionCompleted = read(event.data)
    cost = data.get("cost_usd")
    spent = f" ({amount(cost, BUDGET_USD)})" if isinstance(cost, int | float) and cost else ""
    runner = data.get("agent_id") or event.actor or "?"
    run = f"run {data.get('execution_id') or '?'} of {_task(event)} by {runner}"
    if data.get("late"):  # closed by the board before; its cost came after
        return f"{run} ({data.get('status') or 'closed'}) reported its cost late{spent}"
    return f"{run} {data.get('status') or 'ended'}{spent}"


def _transferred(event: Event) -> str:
    data: TaskTransferred = read(event.data)
    return f"{_who(event)} handed {_task(event)} to {data.get('to') or '?'}"


def _commented(event: Event) -> str:
    data: CommentAdded = read(event.data)
    path = data.get("path")
    if not path:
        return f"{_who(event)} commented on {_task(event)}"
    line = data.get("line")
    where = f"{path}:{line}" if line else path
    return f"{_who(event)} commented on {where} of {_task(event)}"


def _linked(event: Event) -> str:
    data: DepLinked = read(event.data)
    return f"{_who(event)} made {_task(event)} wait on {data.get('depends_on') or '?'}"


def _unlinked(event: Event) -> str:
    data: DepUnlinked = read(event.data)
    return f"{_who(event)} unlinked {_task(event)} from {data.get('depends_on') or '?'}"


def _run_started(event: Event) -> str:
    data: ExecutionStarted = read(event.data)
    return f"{_who(event)} started run {data.get('execution_id') or '?'} on {_task(event)}"


def _verdict(event: Event) -> str:
    data: VerificationRecorded = read(event.data)
    return f"verdict on {_task(event)}: {data.get('status') or '?'} (by {_who(event)})"


def _gate_stopped(event: Event) -> str:
    data: VerificationStopped = read(event.data)
    return f"{_who(event)} stopped judging {_task(event)}, no verdict{_because(data.get('reason'))}"


def _provisioned(event: Event) -> str:
    data: WorkspaceProvisioned = read(event.data)
    return f"{_who(event)} provisioned a worktree for {_task(event)} on {data.get('branch') or '?'}"


def _budget_changed(event: Event) -> str:
    """Which budget, from what to what, and why: the change itself, not just that one was made."""
    data: BudgetChanged = read(event.data)
    scope, unit = str(data.get("scope") or ""), str(data.get("unit") or "")
    owner = event.task_id if scope == BUDGET_TASK else data.get("team_id")
    which = budget_name(scope, unit, owner)
    was, now = data.get("from"), data.get("to")
    if now is None:
        change = f"removed {which}" + (f" ({amount(was, unit)})" if was is not None else "")
    elif was is None:
        change = f"set {which} to {amount(now, unit)}"
    else:
        verb = "raised" if now > was else "lowered"
        change = f"{verb} {which} from {amount(was, unit)} to {amount(now, unit)}"
    return f"{_who(event)} {change}{_because(data.get('reason'))}"


_SAYINGS: dict[str, Callable[[Event], str]] = {
    EventKind.TASK_CREATED: _created,
    EventKind.TASK_CLAIMED: _claimed,
    EventKind.STATUS_CHANGED: _status_changed,
    EventKind.TASK_UPDATED: _updated,
    EventKind.LEASE_EXPIRED: _lease_expired,
    EventKind.EXECUTION_COMPLETED: _execution_completed,
    EventKind.LEASE_RENEWED: lambda e: f"{_who(e)} renewed the lease on {_task(e)}",
    EventKind.PROGRESS_LOGGED: lambda e: f"{_who(e)} logged progress on {_task(e)}",
    EventKind.TASK_TRANSFERRED: _transferred,
    EventKind.TASK_DROPPED: lambda e: f"{_who(e)} dropped {_task(e)}",
    EventKind.TASK_RESTORED: lambda e: f"{_who(e)} restored {_task(e)}",
    EventKind.DEP_LINKED: _linked,
    EventKind.DEP_UNLINKED: _unlinked,
    EventKind.COMMENT_ADDED: _commented,
    EventKind.EXECUTION_STARTED: _run_started,
    EventKind.VERIFICATION_STARTED: lambda e: f"{_who(e)} began judging {_task(e)}",
    EventKind.VERIFICATION_RECORDED: _verdict,
    EventKind.VERIFICATION_STOPPED: _gate_stopped,
    EventKind.WORKSPACE_PROVISIONED: _provisioned,
    EventKind.WORKSPACE_UPDATED: lambda e: f"{_who(e)} updated the workspace of {_task(e)}",
    EventKind.TASK_LANDED: _landed,
    EventKind.BUDGET_CHANGED: _budget_changed,
}


def narrate(event: Event) -> str:
    """One event as one line of plain words (agent text in it is verbatim: make it inert)."""
    saying = _SAYINGS.get(event.kind)
    if saying is not None:
        return saying(event)
    return f"{_who(event)}: {event.kind.replace('_', ' ')} {_task(event)}"


def _verdict_status(raw: str | None) -> str | None:
    """The status of a stored verdict (JSON), without loading the verdict model."""
    if not raw:
        return None
    import json

    try:
        status = json.loads(raw).get("status")
    except (ValueError, AttributeError):
        return None
    return status if isinstance(status, str) else None


def narrate_audit(entry: AuditEntry) -> str:
    """One audit row (a human override, a verification-gate run) as one line of plain words, e.g.
    "human override: done over a fail verdict by operator:sam"."""
    task = entry.task_id or "the board"
    if entry.action == OVERRIDE_ACTION:
        overridden = _verdict_status(entry.verdict_overridden)
        over = f" over a {overridden} verdict" if overridden else " (no verdict to override)"
        why = f": {entry.detail}" if entry.detail else ""
        return f"human override: {task} {_status(entry.to_status)}{over} by {entry.actor}{why}"
    if entry.action == "verification":
        return f"verification gate on {task}: {entry.detail or '?'}"
    return f"{entry.actor}: {entry.action.replace('_', ' ')} on {task}"
