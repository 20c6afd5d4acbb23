"""Why a claim would or would not succeed, in words an agent can act on and in data.

`explain_task` answers for one task (status, drop, lease, unmet dependencies, role); `explain_idle`
for claim-next (what is ready, which leases lapsed, what the todo column waits on, when the next
lease runs out); `preview_claim` says which task claim-next would take and which lapsed leases
it would release first. All are pure: the board reads the rows in one read transaction and hands
them in, so the answer is true of one moment of the board, and asking writes nothing.
"""

from collections.abc import Sequence

from . import transitions as t
from .clock import moment
from .records import ClaimPreview, Explanation, IdleExplanation, LapsedLease, LinkedTask, Task

LISTED = 20  # ids listed per group of an idle explanation


def explain_task(
    task: Task, unmet: Sequence[LinkedTask], now: int, role: str | None = None
) -> Explanation:
    """Whether `task` is claimable at `now` (by an agent of `role`, if given), and if not, why.
    `unmet` are its dependencies that are not done. A task in progress under a lapsed lease is
    claimable, and still says so: it stays in progress until a claim releases it (asking
    releases nothing)."""
    reasons: list[str] = []
    lapsed: list[str] = []
    if task.dropped:
        reasons.append(f"{task.id} is dropped (restore it to make it claimable)")
    if task.status == t.IN_PROGRESS:
        if task.lease_expired(now):
            lapsed.append(
                f"{task.id} is in_progress under {task.assignee_agent_id}'s lapsed lease "
                f"(it ran out {moment(task.lease_until or 0, now)}): the next claim releases "
                "it to todo and takes it"
            )
            reasons.extend(lapsed)
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
        waits = f"waits on {dep.id} ({dep.status}{owner}{dropped})"
        if dep.status == t.CANCELLED:  # never done: the wait never ends by itself
            waits += (
                f", which will never be done: remove the link (kanban task deps remove {task.id} "
                f"--on {dep.id}) or cancel what waits on it (kanban task cancel-dependents "
                f"{dep.id})"
            )
        reasons.append(waits)
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
        reasons=reasons if not claimable else lapsed,
        unmet_dependencies=list(unmet),
        lease_holder=task.assignee_agent_id if task.status == t.IN_PROGRESS else None,
        lease_until=task.lease_until,
        role=task.role,
    )


def held_live(held: Sequence[Task], agent: str, now: int) -> list[Task]:
    """Of the in-progress `held`, the ones `agent` holds under a live lease, oldest change first:
    what an empty claim-next names (`heldByYou`) and the idle explanation says first."""
    mine = (
        task for task in held if task.assignee_agent_id == agent and not task.lease_expired(now)
    )
    return sorted(mine, key=lambda task: task.updated_at)


def explain_idle(
    todo: Sequence[Task],
    held: Sequence[Task],
    now: int,
    role: str | None = None,
    agent: str | None = None,
) -> IdleExplanation:
    """What claim-next would find for `role` at `now`, from the todo and in-progress tasks: the
    ready tasks and the lapsed leases it would take (then `claimable`), else what the todo
    column waits on and when the next lease runs out. The live claims `agent` holds come first:
    an agent that lost its context (a restart, a cleared session) asks claim-next for work while
    its own task waits for it under its name."""

    def suits(task: Task) -> bool:
        return role is None or task.role in (None, role)

    waiting = [task for task in todo if task.unmet_deps]
    ready = [task for task in todo if not task.unmet_deps and suits(task)]
    other_role = [task for task in todo if not task.unmet_deps and not suits(task)]
    lapsed = [task for task in held if task.lease_expired(now) and suits(task)]
    live = [task for task in held if not task.lease_expired(now)]
    leases = sorted(task.lease_until for task in live if task.lease_until is not None)
    yours = held_live(live, agent, now) if agent is not None else []
    reasons = []
    if yours:
        ids = ", ".join(task.id for task in yours[:LISTED])
        reasons.append(
            f"you ({agent}) already hold {ids}: go on with it, or release it to take other work"
        )
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
        held_by_you=[task.id for task in yours[:LISTED]],
    )


# A task as claim-next ranks it: the row and its `seq` (creation order, the last tie-break of the
# ready index: equal priority and change time go to the older task).
Ranked = tuple[Task, int]


def preview_claim(
    pick: Ranked | None,
    held: Sequence[Ranked],
    todo: Sequence[Task],
    now: int,
    *,
    role: str | None = None,
    team_id: str | None = None,
    respect_deps: bool = True,
    agent: str | None = None,
) -> ClaimPreview:
    """What `Board.claim_next` would do at `now`, without doing it. `pick` is the ready task its
    claim statement picks (`Tx.best_ready`), `held` every in-progress task, `todo` the todo
    column. While any lease has lapsed the claim statement picks nothing: claim-next releases
    every lapsed lease (back to todo, changed now) and picks again, so a released task competes
    with `pick` as a todo task changed at `now`."""
    lapsed = [(task, seq) for task, seq in held if task.lease_expired(now)]

    def suits(task: Task) -> bool:
        return (
            not task.dropped
            and (not task.unmet_deps or not respect_deps)
            and (role is None or task.role in (None, role))
            and (team_id is None or task.team_id == team_id)
        )

    candidates = [(pick[0].priority, pick[0].updated_at, -pick[1], pick[0])] if pick else []
    candidates += [(task.priority, now, -seq, task) for task, seq in lapsed if suits(task)]
    chosen = max(candidates, key=lambda entry: entry[:3])[3] if candidates else None
    idle = explain_idle(todo, [task for task, _ in held if not task.dropped], now, role, agent)
    reasons = []
    if lapsed:
        holders = ", ".join(f"{task.id} ({task.assignee_agent_id})" for task, _ in lapsed[:LISTED])
        reasons.append(f"claim-next would first release {len(lapsed)} lapsed lease(s): {holders}")
    if chosen is not None:
        reasons.append(f"claim-next would claim {chosen.id} now (priority {chosen.priority})")
    else:
        reasons.append("claim-next would claim nothing now")
    return ClaimPreview(
        claimable=chosen is not None,
        would_claim=chosen,
        would_release=[
            LapsedLease(task.id, task.assignee_agent_id, task.lease_until, task.claim_epoch)
            for task, _ in lapsed
        ],
        reasons=reasons + idle.reasons,
        explain=idle,
    )
