"""What a move to a status does to a task row, beyond the status itself.

`plan_move` turns "move this task to X" into the column changes to write, after checking the
transition table and the done-gate. The board runs it inside the write transaction against the row
it just read, so every surface (verbs, the generic move, the TUI's overrides) gets the same side
effects from one place.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from . import transitions as t
from .actors import is_agent
from .clock import moment
from .errors import BoardError, Reason, illegal_transition, invalid_input, wrong_state
from .records import Task
from .validation import integer


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


# Where a human override to done passes on the way when the table has no direct move: the gate
# parks work it cannot promote (debt, a spent attempt budget) in blocked, and the override is
# offered there. Passing through takes nothing (no holder, lease or attempt).
OVERRIDE_VIA: dict[str, tuple[str, ...]] = {t.BLOCKED: (t.IN_PROGRESS,)}


def override_route(task: Task) -> tuple[str, ...] | None:
    """The statuses a human override to done passes through from where `task` is (`()` when
    the table moves it straight to done), or None when no override applies: a finished task, work
    not started, or a task blocked without a verdict (an agent's question: nothing to override)."""
    if task.status in t.TERMINAL:
        return None
    if t.can_transition(task.status, t.DONE):
        return ()
    via = OVERRIDE_VIA.get(task.status)
    if via is None or not task.verification:
        return None
    return via


def override_reaches_done(task: Task) -> bool:
    """Whether an operator's override can take `task` to done (the TUI's `d` asks this)."""
    return override_route(task) is not None


def stale_claim(task: Task, verb: str, epoch: int, actor: str | None = None) -> BoardError:
    """The refusal of a caller quoting a claim epoch that is not the task's current one. When
    the caller (`actor`) holds the task now, under the newer epoch (a failed gate gave it back),
    it says so (`heldByYou`): its claim is not gone, its epoch is old (an agent was told to stop
    work on a task it still held). The fence stands: only the name is known, not the process, so the
    stale epoch is refused all the same. An epoch above the task's was never one of its claims
    (read from another task, or made up): the same refusal, saying that rather than "stale"."""
    held = actor is not None and task.status == t.IN_PROGRESS and task.assignee_agent_id == actor
    if epoch > task.claim_epoch:
        said = f"its newest is {task.claim_epoch}"
        if held:
            said += ", under which you hold it: use that epoch if that claim is yours"
        message = f"cannot {verb}: claim epoch {epoch} is one {task.id} never had ({said})"
    else:
        said = (
            f"you hold {task.id} under epoch {task.claim_epoch} now, given back by a failed "
            "gate or claimed again under your name: use that epoch if that claim is yours"
            if held
            else f"current: {task.claim_epoch}"
        )
        message = f"cannot {verb}: claim epoch {epoch} is stale ({said})"
    return BoardError(
        Reason.STALE_CLAIM,
        message,
        id=task.id,
        epoch=epoch,
        current_epoch=task.claim_epoch,
        held_by_you=held,
    )


def check_epoch(task: Task, verb: str, epoch: int | None, actor: str | None = None) -> None:
    """`epoch`, when the caller quotes one, must be the task's current claim epoch: a caller that
    read an earlier attempt is refused (`stale_claim`) instead of acting on a later one."""
    if epoch is None:
        return
    integer(epoch, "epoch", minimum=0)
    if epoch != task.claim_epoch:
        raise stale_claim(task, verb, epoch, actor)


def check_mover(
    task: Task, target: str, *, actor: str, now: int, epoch: int | None = None, verb: str = "move"
) -> None:
    """The agent contract on a move (builder is not judge), decided from the actor alone.

    The generic move is the operator's tool. An identified agent (`actors.is_agent`) may move only
    a task it holds, and never into done: a builder's move into done, or of its own task out of
    in_review, is `self_review` (done comes from another agent's approve or from the gate);
    anyone else's task, or a task nobody holds, is `not_assignee`; a holder whose lease ran out,
    or who quotes a stale epoch, is `stale_claim`. Operators and the board's own passes are not
    bound by it (their moves are audited). A same-status "move" moves nothing and is not judged.
    """
    if target == task.status:
        return
    check_epoch(task, f"{verb} {task.id}", epoch, actor)
    if not is_agent(actor):
        return
    built_it = actor in task.builders
    if built_it and (target == t.DONE or task.status == t.IN_REVIEW):
        why = "into done" if target == t.DONE else f"out of in_review (to {target})"
        raise BoardError(
            Reason.SELF_REVIEW,
            f"cannot {verb} {task.id} {why}: {actor} worked on it, and builder is not judge; "
            "another agent approves or rejects it, or an operator moves it",
            id=task.id,
            current=task.status,
            requested=target,
            holders=task.holders,
        )
    if target == t.DONE or task.assignee_agent_id != actor:
        holder = task.assignee_agent_id
        why = (
            "an agent's move never lands in done (another agent approves, or an operator moves it)"
            if target == t.DONE
            else f"it is held by {holder}"
            if holder
            else "nobody holds it, and a blocked task is not claimed (an operator unblocks it)"
            if task.status == t.BLOCKED
            else "nobody holds it (claim it first, or an operator moves it)"
        )
        raise BoardError(
            Reason.NOT_ASSIGNEE,
            f"cannot {verb} {task.id} to {target} as {actor}: {why}",
            id=task.id,
            assignee=holder,
            current=task.status,
            requested=target,
        )
    if task.status == t.IN_PROGRESS and task.lease_expired(now):
        raise BoardError(
            Reason.STALE_CLAIM,
            f"cannot {verb} {task.id}: the lease of {actor} expired "
            f"({moment(task.lease_until or 0, now)})",
            id=task.id,
            lease_until=task.lease_until,
        )


def check_worker(
    task: Task, verb: str, *, actor: str, planning: bool = False, epoch: int | None = None
) -> None:
    """The agent contract on a task's worktree (provision, pause, sync, the handoff): an
    identified agent acts on a task it holds, or on one nobody holds now that it held before
    (its own work, between attempts); never on another agent's. `planning` (dependency links):
    on any task nobody holds, as a planner links the tasks it made. Operators and the board's
    own passes act on any. A refusal is `not_assignee`; an `epoch` quoted and not the task's
    current one is `stale_claim` first, as for the lease verbs: a lapsed process under the
    holder's own name must not pause or sync its successor's work."""
    check_epoch(task, f"{verb} {task.id}", epoch, actor)
    holder = task.assignee_agent_id
    if not is_agent(actor) or holder == actor:
        return
    if holder is None and (planning or actor in task.holders):
        return
    raise _not_holder(
        task, f"cannot {verb} {task.id} as {actor}", "an agent acts only on a task it holds",
        "an operator may",
    )  # fmt: skip


def check_editor(task: Task, fields: Iterable[str], *, actor: str) -> None:
    """The agent contract on field edits: an identified agent edits only a task it holds (its
    own title, description, priority...), so one agent cannot reorder or rewrite another's work
    or the queue; operators edit anything. A refusal is `not_assignee`."""
    edited = sorted(fields)
    if not edited or not is_agent(actor) or task.assignee_agent_id == actor:
        return
    raise _not_holder(
        task, f"cannot edit {', '.join(edited)} of {task.id} as {actor}",
        "an agent edits only a task it holds", "an operator edits any task", fields=edited,
    )  # fmt: skip


def _not_holder(task: Task, doing: str, unheld: str, instead: str, **details: Any) -> BoardError:
    """`not_assignee` for an agent acting on a task it does not hold: who does, or `unheld`."""
    holder = task.assignee_agent_id
    why = f"it is held by {holder}" if holder else unheld
    return BoardError(
        Reason.NOT_ASSIGNEE, f"{doing}: {why} ({instead})", id=task.id, assignee=holder, **details
    )


def claim_conflict(task: Task, agent: str | None = None) -> BoardError:
    """The `conflict` of `agent`'s claim that found `task` not claimable, in plain sentences: why,
    then what to do next, in the verbs every surface names its calls by (claim-next, approve,
    reject, unblock, restore, move). The holder (`assignee`) is named when someone holds it;
    nobody when it is done or cancelled, whoever built it."""
    holder = task.assignee_agent_id if task.status == t.IN_PROGRESS else None
    if task.status == t.IN_PROGRESS and holder is not None and holder == agent:
        why = (
            f"it is in progress, held by {holder} already. Work on it and keep its lease with "
            "heartbeats; there is nothing to claim"
        )
    elif task.status == t.IN_PROGRESS:
        why = (
            f"it is in progress, held by {holder}. Take other work with claim-next; this one "
            f"is claimable again once {holder} releases it or its lease runs out"
        )
    elif task.status in t.TERMINAL:
        why = (
            f"it is {task.status}, and finished work is not claimed again. For more work on it, "
            "dispatch a new task"
        )
    elif task.dropped:
        why = "it is dropped. Restore it first, then claim it"
    elif task.status == t.BLOCKED:
        # an agent unblocks only a task it still holds: its own block, not the gate's
        unblocker = (
            f"{task.assignee_agent_id} or an operator" if task.assignee_agent_id else "an operator"
        )
        why = (
            f"it is blocked ({task.blocked_reason}). It is claimable once {unblocker} unblocks "
            "it (back to todo)"
        )
    elif task.status == t.IN_REVIEW:
        why = (
            "it is in review, waiting for a judge. Another agent or a person approves it (to "
            "done) or rejects it (back to todo, claimable again)"
        )
    elif task.status == t.BACKLOG:
        why = "it is in the backlog. Move it to todo first, then claim it"
    else:  # todo again by now: another claim or a release moved it meanwhile
        why = f"it is {t.label(task.status)} now. Claim it again, or take other work (claim-next)"
    return BoardError(
        Reason.CONFLICT,
        f"task {task.id} is not claimable: {why}",
        id=task.id,
        current=task.status,
        assignee=holder,
        dropped=bool(task.dropped) or None,
    )


# What a task not in review needs before it is approved or rejected: the refusal said its status
# twice (`task is todo (current state: todo, ...)`) and not what to do.
BEFORE_REVIEW = {
    t.BACKLOG: "it is not ready yet: it moves to todo, and an agent claims and completes it",
    t.TODO: "nothing is built yet: an agent claims and completes it first",
    t.IN_PROGRESS: "its holder completes it first",
    t.BLOCKED: "it is unblocked and completed first",
    t.DONE: "it was judged (or moved to done) already",
    t.CANCELLED: "it was cancelled",
}


def not_in_review(task: Task, verb: str) -> BoardError:
    """An approve or reject of a task not in review: `invalid_state`, its status said once (in
    the seed's `(current state: ..., expected: ...)`) and what gets it to review."""
    then = BEFORE_REVIEW.get(task.status)
    said = "only work in review is judged" + (f"; {then}" if then else "")
    return wrong_state(verb, task.status, t.IN_REVIEW, then=said, id=task.id)


def seed_block_reason(actor: str, route: str) -> str:
    """The reason a seed 003 client's move to blocked records when it gives none: seed 003's
    bodies have no reason field, so a client written against the seed cannot give one. It names
    who blocked the task and by which route; every other surface keeps asking for a reason."""
    return f"blocked by {actor} via {route} (the request gave no reason)"


# How a seed 003 client's create reaches each status (its `status` may be any of the seven):
# from todo, through the transition table's legal moves, the last one the target.
SEED_CREATE_PATHS: dict[str, tuple[str, ...]] = {
    t.BACKLOG: (),
    t.TODO: (),
    t.IN_PROGRESS: (t.IN_PROGRESS,),
    t.IN_REVIEW: (t.IN_PROGRESS, t.IN_REVIEW),
    t.BLOCKED: (t.BLOCKED,),
    t.DONE: (t.IN_PROGRESS, t.DONE),
    t.CANCELLED: (t.CANCELLED,),
}


def seed_create_holds(status: str) -> bool:
    """Whether a seed client's create in `status` passes through a claim by its creator (in
    progress, in review, done): a surface that limits what a caller claims limits it there too."""
    return t.IN_PROGRESS in SEED_CREATE_PATHS.get(status, ())


def plan_move(
    task: Task,
    target: str,
    *,
    actor: str,
    now: int,
    lease_ms: int,
    reason: str | None = None,
    human_override: bool = False,
    holder: str | None = None,
    takes: bool = True,
    holder_runtime: str | None = None,
) -> Move:
    """The row changes for `task -> target`, or a refusal (`illegal_transition`,
    `verification_required`, `invalid_input` for a block without a reason). `takes=False` is a
    status passed through on an override's way (`OVERRIDE_VIA`): in progress without a taker;
    `holder_runtime` is the runtime the taker works in (the gate hands failed work back to its
    builder in the runtime it completed from)."""
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

    changes: dict[str, Any] = {"status": target, "updated_at": now, "status_since": now}
    if current == t.BLOCKED:
        changes["blocked_reason"] = None
    if current == t.IN_REVIEW:  # the wait for a judge is over: counted for the flow figures
        waited = max(0, now - task.review_entered_at) if task.review_entered_at else 0
        changes |= {"review_entered_at": None, "review_wait_ms": task.review_wait_ms + waited}
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
    elif target == t.IN_PROGRESS and not takes:
        pass
    elif target == t.IN_PROGRESS:
        changes |= {"lease_until": now + lease_ms, "last_heartbeat_at": now}
        if task.assignee_agent_id is None:
            # Nobody owns it (back from review, or an operator's drag): `holder` (default: the
            # mover) takes it, and it counts as a claim so reconciliation and the review rule see
            # a real holder.
            taker = holder or actor
            holders = task.holders if taker in task.holders else [*task.holders, taker]
            changes |= {
                "assignee_agent_id": taker,
                "assignee_runtime": holder_runtime,
                "claimed_by": task.claimed_by or taker,
                "holders": holders,
                "claim_epoch": task.claim_epoch + 1,
                "attempts": task.attempts + 1,
                "first_claimed_at": task.first_claimed_at or now,
            }
    elif target == t.IN_REVIEW:
        # Complete: the task waits for a judge with no owner; claimed_by and holders stay.
        changes |= {
            "assignee_agent_id": None,
            "assignee_runtime": None,
            "lease_until": None,
            "review_entered_at": now,
        }
    elif target == t.BLOCKED:
        if not reason or not reason.strip():
            raise invalid_input("a move to blocked needs a reason", id=task.id)
        changes |= {"lease_until": None, "blocked_reason": reason.strip()}
    elif target == t.DONE:
        changes |= {"lease_until": None, "completed_at": now}
    elif target == t.CANCELLED:
        changes |= {"lease_until": None}
    return Move(changes=changes, overrode_verdict=overrode)
