"""An event in words: "agent-ada claimed TASK-7", "lease of agent-linus on TASK-3 expired → todo",
"agent-bob rejected TASK-9: no tests".

One function for every surface that tells a person what happened: the TUI's activity pane and
task history, and `kanban events --format table`. It returns plain text holding agent text
verbatim (a reason, a branch name); the surface that draws it makes it inert
(`boardlib.inert.inert`) like any other agent text. Times are the surface's to format.

Routine events (`ROUTINE`: a lease renewed by a heartbeat) are described like any other, and a
surface showing a short feed may leave them out: on a busy board they would drown the rest.
"""

from collections.abc import Callable, Mapping
from typing import Any

from .records import AuditEntry, Event
from .transitions import label

__all__ = ["ROUTINE", "narrate", "narrate_audit"]

ROUTINE = frozenset({"lease_renewed"})


def _who(event: Event) -> str:
    return event.actor or "someone"


def _task(event: Event) -> str:
    return event.task_id or "the board"


def _status(value: Any) -> str:
    return label(value) if isinstance(value, str) and value else "?"


def _because(data: Mapping[str, Any]) -> str:
    reason = data.get("reason")
    return f": {reason}" if isinstance(reason, str) and reason else ""


def _status_changed(event: Event) -> str:
    data = event.data
    who, task, to = _who(event), _task(event), _status(data.get("to"))
    verb = data.get("verb")
    if data.get("humanOverride"):
        return f"{who} overrode the verdict: {task} → {to}{_because(data)}"
    if verb == "complete":
        return f"{who} finished {task} → {to}"
    if verb == "approve":
        return f"{who} approved {task} → {to}"
    if verb == "reject":
        return f"{who} rejected {task}{_because(data)}"
    if verb == "block":
        return f"{who} blocked {task}{_because(data)}"
    if verb == "release":
        return f"{who} released {task} → {to}"
    if verb == "unblock":
        return f"{who} unblocked {task} → {to}{_because(data)}"
    if verb == "cancel_dependents":
        return f"{who} cancelled {task}: it waited on {data.get('blocker') or '?'}"
    source = f" from {_status(data['from'])}" if data.get("from") else ""
    return f"{who} moved {task}{source} to {to}{_because(data)}"


def _claimed(event: Event) -> str:
    how = " (next ready)" if event.data.get("verb") == "claim_next" else ""
    return f"{_who(event)} claimed {_task(event)}{how}"


def _created(event: Event) -> str:
    waits = event.data.get("dependsOn") or []
    after = f", waiting on {', '.join(map(str, waits))}" if waits else ""
    return f"{_who(event)} created {_task(event)} in {_status(event.data.get('status'))}{after}"


def _updated(event: Event) -> str:
    fields = event.data.get("fields") or []
    what = f" ({', '.join(map(str, fields))})" if fields else ""
    return f"{_who(event)} edited {_task(event)}{what}"


def _lease_expired(event: Event) -> str:
    holder = event.data.get("assignee") or "?"
    return f"lease of {holder} on {_task(event)} expired → {_status(event.data.get('to'))}"


def _execution_completed(event: Event) -> str:
    data = event.data
    cost = data.get("costUsd")
    spent = f" (${cost:.2f})" if isinstance(cost, int | float) and cost else ""
    runner = data.get("agentId") or event.actor or "?"
    return (
        f"run {data.get('executionId') or '?'} of {_task(event)} by {runner} "
        f"{data.get('status') or 'ended'}{spent}"
    )


_SAYINGS: dict[str, Callable[[Event], str]] = {
    "task_created": _created,
    "task_claimed": _claimed,
    "status_changed": _status_changed,
    "task_updated": _updated,
    "lease_expired": _lease_expired,
    "execution_completed": _execution_completed,
    "lease_renewed": lambda e: f"{_who(e)} renewed the lease on {_task(e)}",
    "progress_logged": lambda e: f"{_who(e)} logged progress on {_task(e)}",
    "task_transferred": lambda e: f"{_who(e)} handed {_task(e)} to {e.data.get('to') or '?'}",
    "task_dropped": lambda e: f"{_who(e)} dropped {_task(e)}",
    "task_restored": lambda e: f"{_who(e)} restored {_task(e)}",
    "dep_linked": lambda e: f"{_who(e)} made {_task(e)} wait on {e.data.get('dependsOn') or '?'}",
    "dep_unlinked": lambda e: (
        f"{_who(e)} unlinked {_task(e)} from {e.data.get('dependsOn') or '?'}"
    ),
    "comment_added": lambda e: f"{_who(e)} commented on {_task(e)}",
    "execution_started": lambda e: (
        f"{_who(e)} started run {e.data.get('executionId') or '?'} on {_task(e)}"
    ),
    "verification_recorded": lambda e: (
        f"verdict on {_task(e)}: {e.data.get('status') or '?'} (by {_who(e)})"
    ),
    "workspace_provisioned": lambda e: (
        f"{_who(e)} provisioned a worktree for {_task(e)} on {e.data.get('branch') or '?'}"
    ),
    "workspace_updated": lambda e: f"{_who(e)} updated the workspace of {_task(e)}",
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
    if entry.action == "human_override":
        overridden = _verdict_status(entry.verdict_overridden)
        over = f" over a {overridden} verdict" if overridden else " (no verdict to override)"
        why = f": {entry.detail}" if entry.detail else ""
        return f"human override: {task} {_status(entry.to_status)}{over} by {entry.actor}{why}"
    if entry.action == "verification":
        return f"verification gate on {task}: {entry.detail or '?'}"
    return f"{entry.actor}: {entry.action.replace('_', ' ')} on {task}"
