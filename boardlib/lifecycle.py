"""What a move to a status does to a task row, beyond the status itself.

`plan_move` turns "move this task to X" into the column changes to write, after checking the
transition table and the done-gate. The board runs it inside the write transaction against the row
it just read, so every surface (verbs, the generic move, the TUI's overrides) gets the same side
effects from one place.
"""

from dataclasses import dataclass
from typing import Any

from . import transitions as t
from .errors import BoardError, Reason, illegal_transition, invalid_input
from .records import Task


@dataclass(frozen=True, slots=True)
class Move:
    """The changes of one status move, and what the caller must also do."""

    changes: dict[str, Any]
    is_noop: bool = False
    overrode_verdict: bool = False  # a human override bypassed a non-promotable verdict


def verdict_blocks_done(verification: str | None) -> bool:
    """True when a stored verdict refuses `-> done`. No verdict is unverified, not failing."""
    if not verification:
        return False
    from .models import parse_verdict  # pydantic only on this path

    try:
        return not parse_verdict(verification).promotable
    except ValueError:
        return True  # an unreadable verdict is not evidence that the work passed


def plan_move(
    task: Task,
    target: str,
    *,
    actor: str,
    now: int,
    lease_ms: int,
    reason: str | None = None,
    human_override: bool = False,
) -> Move:
    """The row changes for `task -> target`, or a refusal (`illegal_transition`,
    `verification_required`, `invalid_input` for a block without a reason)."""
    if not t.is_status(target):
        raise invalid_input(f"unknown status {target!r}", allowed=list(t.STATUSES))
    current = task.status
    if current == target:
        return Move(changes={}, is_noop=True)
    if not t.can_transition(current, target):
        raise illegal_transition(current, target, id=task.id)
    if task.dropped and target in t.LOCKED:
        raise BoardError(
            Reason.INVALID_STATE,
            f"cannot move {task.id} to {target}: it is dropped (restore it first)",
            id=task.id,
            current=current,
        )
    overrode = False
    if target == t.DONE and verdict_blocks_done(task.verification):
        if not human_override:
            raise BoardError(
                Reason.VERIFICATION_REQUIRED,
                f"cannot move {task.id} to done: its verification verdict is not promotable "
                "(a human override is required)",
                id=task.id,
                current=current,
                verification=task.verification,
            )
        overrode = True

    changes: dict[str, Any] = {"status": target, "updated_at": now}
    if current == t.BLOCKED:
        changes["blocked_reason"] = None
    if target in t.PENDING:
        # The release path: back to claimable (todo) or to triage (backlog), owner, lease and
        # verdict gone (a rebind boundary: the previous runtime's verdict must not gate the next
        # one), a fresh attempt begins. Nobody owns work that has not started.
        changes |= {
            "assignee_agent_id": None,
            "assignee_runtime": None,
            "lease_until": None,
            "verification": None,
            "holders": [],
        }
    elif target == t.IN_PROGRESS:
        changes |= {"lease_until": now + lease_ms, "last_heartbeat_at": now}
        if task.assignee_agent_id is None:
            # Nobody owns it (back from review, or an operator's drag): the mover takes it, and it
            # counts as a claim so the lease sweep and the review rule see a real holder.
            holders = task.holders if actor in task.holders else [*task.holders, actor]
            changes |= {
                "assignee_agent_id": actor,
                "claimed_by": task.claimed_by or actor,
                "holders": holders,
                "claim_epoch": task.claim_epoch + 1,
                "attempts": task.attempts + 1,
            }
    elif target == t.IN_REVIEW:
        # Complete: the task waits for a judge with no owner; claimed_by and holders stay.
        changes |= {"assignee_agent_id": None, "assignee_runtime": None, "lease_until": None}
    elif target == t.BLOCKED:
        if not reason or not reason.strip():
            raise invalid_input("a move to blocked needs a reason", id=task.id)
        changes |= {"lease_until": None, "blocked_reason": reason.strip()}
    elif target == t.DONE:
        changes |= {"lease_until": None, "completed_at": now}
    elif target == t.CANCELLED:
        changes |= {"lease_until": None}
    return Move(changes=changes, overrode_verdict=overrode)
