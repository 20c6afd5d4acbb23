"""Why a claim would or would not succeed, in words an agent can act on and in data.

`explain_task` answers for one task (status, drop, lease, unmet dependencies, role); `explain_idle`
for claim-next (what is ready, which leases lapsed, what the todo column waits on, when the next
lease runs out). Both are pure: the board reads the rows in one read transaction and hands them
in, so the answer is true of one moment of the board.
"""

from collections.abc import Sequence

from . import transitions as t
from .clock import moment
from .records import Explanation, IdleExplanation, LinkedTask, Task

LISTED = 20  # ids listed per group of an idle explanation


def explain_task(
    task: Task, unmet: Sequence[LinkedTask], now: int, role: str | None = None
) -> Explanation:
    """Whether `task` is claimable at `now` (by an agent of `role`, if given), and if not, why.
    `unmet` are its dependencies that are not done."""
    reasons: list[str] = []
    if task.dropped:
        reasons.append(f"{task.id} is dropped (restore it to make it claimable)")
    if task.status == t.IN_PROGRESS:
        if task.lease_expired(now):
            reasons.append(
                f"lease held by {task.assignee_agent_id} expired "
                f"({moment(task.lease_until or 0, now)}): "
                "the next claim releases and takes it"
            )
        else:
            reasons.append(
                f"held by {task.assignee_agent_id} under a lease until "
                f"{moment(task.lease_until or 0, now)}"
            )
    elif task.status == t.BLOCKED:
        reasons.append(f"{task.id} is blocked: {task.blocked_reason}")
    elif task.status != t.TODO:
        reasons.append(f"{task.id} is {task.status}; only todo tasks are claimable")
    for dep in unmet:
        owner = f", held by {dep.assignee_agent_id}" if dep.assignee_agent_id else ""
        dropped = ", dropped" if dep.dropped else ""
        reasons.append(f"waits on {dep.id} ({dep.status}{owner}{dropped})")
    if role is not None and task.role is not None and task.role != role:
        reasons.append(f"{task.id} is for role {task.role}, not {role}")
    expired = task.status == t.IN_PROGRESS and task.lease_expired(now)
    claimable = (task.status == t.TODO or expired) and not task.dropped and not unmet
    if role is not None and task.role not in (None, role):
        claimable = False
    return Explanation(
        task_id=task.id,
        claimable=claimable,
        status=task.status,
        reasons=reasons if not claimable else [],
        unmet_dependencies=list(unmet),
        lease_holder=task.assignee_agent_id if task.status == t.IN_PROGRESS else None,
        lease_until=task.lease_until,
        role=task.role,
    )


def explain_idle(
    todo: Sequence[Task], held: Sequence[Task], now: int, role: str | None = None
) -> IdleExplanation:
    """What claim-next would find for `role` at `now`, from the todo and in-progress tasks: the
    ready tasks and the lapsed leases it would take (then `claimable`), else what the todo
    column waits on and when the next lease runs out."""

    def suits(task: Task) -> bool:
        return role is None or task.role in (None, role)

    waiting = [task for task in todo if task.unmet_deps]
    ready = [task for task in todo if not task.unmet_deps and suits(task)]
    other_role = [task for task in todo if not task.unmet_deps and not suits(task)]
    lapsed = [task for task in held if task.lease_expired(now) and suits(task)]
    live = [task for task in held if not task.lease_expired(now)]
    leases = sorted(task.lease_until for task in live if task.lease_until is not None)
    reasons = []
    if ready:
        reasons.append(f"{len(ready)} task(s) are ready to claim now")
    if lapsed:
        reasons.append(f"{len(lapsed)} lease(s) ran out: claim-next takes those tasks back")
    if not todo:
        reasons.append("no todo tasks")
    if waiting:
        reasons.append(f"{len(waiting)} todo task(s) wait on unfinished dependencies")
    if other_role:
        reasons.append(f"{len(other_role)} ready task(s) are for other roles")
    if live:
        reasons.append(f"{len(live)} task(s) in progress under live leases")
    if leases:
        reasons.append(f"the next lease runs out at {moment(leases[0], now)}")
    return IdleExplanation(
        claimable=bool(ready or lapsed),
        role=role,
        reasons=reasons,
        todo=len(todo),
        waiting_on_dependencies=[task.id for task in waiting[:LISTED]],
        other_roles=[task.id for task in other_role[:LISTED]],
        in_progress=len(held),
        next_lease_expiry=leases[0] if leases else None,
        ready=[task.id for task in ready[:LISTED]],
    )
