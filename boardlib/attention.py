"""The inbox rule, declared once: what needs a person now, why, since when, and the one obvious
action. Every surface (`kanban inbox`, `GET /api/board/inbox`, the MCP tool, the TUI) shows the
list `collect` builds, so they agree item for item.

The store finds the candidates through indexes (the few tasks in review or blocked, lapsed leases,
quiet runs, live worktrees whose done work has not landed, standing landing refusals, held
deliveries: never a scan of the whole board); this module turns each into an item, but for a task
in review whose verification gate still runs, or whose landing is under way: none until it
ends. `why` is built
from fixed words and fields; the fields may be agent text (a blocked reason, a builder's name),
which every surface shows inert. Design: docs/inbox.md
"""

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import transitions as t
from .budgets import BLOCKED_PREFIX as BUDGET_BLOCKED_PREFIX
from .budgets import blocked_by_budget, blocked_reason, first_spent, raise_hint, standings
from .clock import local_time
from .config import BoardConfig
from .errors import Reason
from .events import EventKind, read
from .lifecycle import verdict_blocks_done
from .processes import process_gone
from .records import BudgetStanding, Event, GateRun, InboxItem, LandingRun, QueueEntry, Task
from .store.base import Row, Tx

if TYPE_CHECKING:  # types only: see boardlib/payloads.py
    from .payloads import VerificationStarted

# -- the kinds, in the order a tie on `since` is shown ------------------------------------------
REVIEW = "review"  # in review: a judge approves or rejects
UNLANDED = "unlanded"  # done (approved, or passed by the gate) in a live worktree, not landed
DEBT = "debt"  # its verify command passed, with debt, and the gate blocked it: accept the debt
VERIFICATION_FAILED = "verification_failed"  # the gate's attempt budget is spent: blocked
BLOCKED = "blocked"  # blocked with a reason
LEASE_EXPIRED = "lapsed_lease"  # a lease ran out and nobody released the task yet
QUIET_RUN = "quiet_run"  # an execution running, no beat for `overdue_leases` leases
LANDING_REFUSED = "landing_refused"  # its landing was refused on the work or the base
BUDGET_EXCEEDED = "budget_exceeded"  # blocked because a budget over it is spent
WATCH_HELD = "watch_held"  # a `kanban watch` delivery keeps failing: held, not skipped

KINDS: tuple[str, ...] = (
    REVIEW, LANDING_REFUSED, UNLANDED, DEBT, VERIFICATION_FAILED, BLOCKED, LEASE_EXPIRED,
    QUIET_RUN, BUDGET_EXCEEDED, WATCH_HELD,
)  # fmt: skip

# The words each kind's why opens with: a surface that shows the kind beside the why may leave
# them out (`short_why`); the why keeps them, as every surface's JSON does.
OPENS: dict[str, str] = {
    REVIEW: "waiting for review",
    DEBT: "completed with debt",
    VERIFICATION_FAILED: "verification failed",
    BUDGET_EXCEEDED: "budget exceeded",
    BLOCKED: "blocked",
    LANDING_REFUSED: "landing refused",
}


def short_why(kind: str, why: str) -> str:
    """A why without the words its kind opens with (`blocked: ` beside `blocked`): at 80 columns
    they took a line's room twice. Whole where it opens otherwise or nothing would be left."""
    opening = OPENS.get(kind)
    if opening is None or not why.startswith(opening):
        return why
    return why[len(opening) :].lstrip(" :") or why


# The landing refusals a person must resolve (the work or the base must change, or an operator
# must allow an unverified landing): `boardlib.landings` keeps the last one of a task for the
# inbox. The others (self_review, not_landable, bad input) are the caller's, answered at once.
LANDING_REFUSALS: frozenset[str] = frozenset({
    Reason.MERGE_CONFLICT, Reason.VERIFICATION_FAILED, Reason.BASE_MOVED,
    Reason.BASE_CHECKED_OUT_DIRTY, Reason.VERIFICATION_REQUIRED,
})  # fmt: skip
# A landing refusal stands for the task until it lands, moves on, or is refused again.
SUPERSEDED_BY_REFUSAL = frozenset({REVIEW, UNLANDED})
# The kinds whose action is a judge's (approve, land, an override from review): refused to the
# task's builders (`self_review`), so an inbox read for one agent leaves out its own.
JUDGED = frozenset({REVIEW, UNLANDED, LANDING_REFUSED})

# -- the one obvious action of each kind -----------------------------------------------------
APPROVE = "approve"  # in review -> done, with a pass verdict (`kanban task approve`)
OVERRIDE = "override"  # -> done over the verdict, audited (`kanban task move --to done --override`)
UNBLOCK = "unblock"  # blocked -> todo, for a fresh claim (`kanban task unblock`)
RECLAIM = "reclaim"  # release the lapsed lease now (`kanban task reclaim`)
RELEASE = "release"  # end the quiet holder's claim: back to todo (`kanban task move --to todo`)
RETRY = "retry"  # try the held delivery again now (`kanban consumers retry`)
LAND = "land"  # land the work onto its base branch, verified (`kanban task land`)
RAISE_BUDGET = "raise_budget"  # raise the spent budget, then unblock (`kanban budget set`)

ACTIONS: dict[str, str] = {
    APPROVE: "approve the work: done, with a pass verdict",
    OVERRIDE: "accept it as it is: done, with a human override in the audit table",
    UNBLOCK: "unblock it: back to todo for a fresh claim",
    RECLAIM: "reclaim it: release the lapsed lease so another agent can claim it",
    RELEASE: "release it: end the silent holder's claim, back to todo",
    RETRY: "retry the held delivery now",
    LAND: "land it: onto its base branch, verified on the merged tree",
    RAISE_BUDGET: "raise the spent budget (the reason names it and the command), then unblock",
}

ACTION_OF: dict[str, str] = {
    REVIEW: APPROVE,
    DEBT: OVERRIDE,
    VERIFICATION_FAILED: UNBLOCK,
    BLOCKED: UNBLOCK,
    LEASE_EXPIRED: RECLAIM,
    QUIET_RUN: RELEASE,
    WATCH_HELD: RETRY,
    UNLANDED: LAND,
    LANDING_REFUSED: LAND,
    BUDGET_EXCEEDED: RAISE_BUDGET,
}

WHY_MAX = 200  # characters of a field (a reason, an error) quoted in `why`


def _clip(text: str | None) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= WHY_MAX else text[: WHY_MAX - 1] + "…"


def _verdict(task: Task) -> dict[str, Any]:
    """The stored verdict as plain JSON (no pydantic on this read), {} when none or unreadable."""
    if not task.verification:
        return {}
    try:
        value = json.loads(task.verification)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _item(
    task: Task, kind: str, why: str, since: int, action: str | None = None, command: str = ""
) -> InboxItem:
    return InboxItem(
        kind=kind,
        task_id=task.id,
        why=why,
        since=since,
        action=action or ACTION_OF[kind],
        title=task.title,
        status=task.status,
        builders=task.builders,
        command=command or None,
    )


def awaiting(
    task: Task, over_budget: bool = False, spent_now: BudgetStanding | None = None
) -> InboxItem:
    """A task in review or blocked: why a person is needed, from its status and verdict.
    `over_budget`: the board blocked it because a budget is spent (`budgets.blocked_by_budget`,
    which reads the move itself, never the reason's words alone); `spent_now`, the budget over
    it that is spent now, if one still is: its figures are today's, not the block's (a budget raised
    to the blocked reason's figure was still refused)."""
    since = task.status_since or task.updated_at
    verdict = _verdict(task)
    if task.status == t.IN_REVIEW:
        builder = task.builder
        by = f" from {builder}" if builder else ""
        if verdict and verdict_blocks_done(task.verification):
            why = f"in review{by}; its verdict ({verdict.get('status')}) blocks approval"
            return _item(task, REVIEW, why, since, OVERRIDE)
        return _item(task, REVIEW, f"{OPENS[REVIEW]}{by}", since)
    status = verdict.get("status")
    # No verify command ran (no attempt): the gate could not judge, nothing passed with debt. Its
    # reason says what moves it, an unblock for an agent to name the command (it was filed as debt
    # to override, unverified).
    if status == "completed_with_debt" and verdict.get("attempts"):
        notes = verdict.get("debtNotes") or []
        criteria = [str(n.get("criterion", "")) for n in notes if isinstance(n, dict)]
        owed = f": {_clip('; '.join(c for c in criteria if c))}" if any(criteria) else ""
        return _item(task, DEBT, f"{OPENS[DEBT]}{owed}", since)
    if status == "fail":
        runs = verdict.get("attempts") or []
        count = len(runs) if isinstance(runs, list) else 0
        why = f"{OPENS[VERIFICATION_FAILED]} {count} time(s)"
        return _item(task, VERIFICATION_FAILED, why, since)
    if over_budget and spent_now is not None:
        said = blocked_reason(task.id, spent_now).removeprefix(BUDGET_BLOCKED_PREFIX)
        why = f"{OPENS[BUDGET_EXCEEDED]}: {said}"
        return _item(task, BUDGET_EXCEEDED, why, since, command=raise_hint(spent_now))
    if over_budget:  # raised since, or a daily budget on a new day: nothing stops it now
        why = "blocked when a budget over it was spent; none is spent now: unblock it"
        return _item(task, BUDGET_EXCEEDED, why, since, UNBLOCK)
    return _item(
        task, BLOCKED, f"{OPENS[BLOCKED]}: {_clip(task.blocked_reason) or 'no reason given'}", since
    )


def lapsed(task: Task, now: int) -> InboxItem:
    holder = task.assignee_agent_id or "its holder"
    # An absolute time, so the words stay the same from one read to the next (`since` says when).
    why = f"the lease of {holder} expired at {local_time(task.lease_until or now)}; not reclaimed"
    return _item(task, LEASE_EXPIRED, why, task.lease_until or now)


def quiet(row: Row, overdue_ms: int, leases: int) -> InboxItem:
    task = Task.from_row(row)
    last = task.last_heartbeat_at or row["run_started_at"] or task.updated_at
    holder = task.assignee_agent_id or "its holder"
    why = f"{row['run_id']} still running, no beat from {holder} for over {leases} leases"
    return _item(task, QUIET_RUN, why, last + overdue_ms)


def held(row: Row) -> InboxItem:
    seq = row["failing_seq"]
    kind = row["event_kind"] or "event"
    why = (
        f"watch {row['name']} holds event {seq} ({kind}) after {row['failures']} failed "
        f"deliveries: {_clip(row['last_error']) or 'no error text'}"
    )
    return InboxItem(
        kind=WATCH_HELD,
        task_id=row["event_task_id"],
        why=why,
        since=row["held_since"],
        action=RETRY,
        title=row["event_task_title"],  # its task's, as every task's item shows (none: None)
        consumer=row["name"],
        event_seq=seq,
    )


# A gate beats while it runs (`payloads.VerificationStarted.beat_ms`); one that missed this many
# beats is taken for dead wherever it is read: another machine cannot see its process go.
GATE_BEATS_MISSED = 3
VERIFYING = "verifying"  # what every surface says of a task its gate judges now


def verifying_since(at: str) -> str:
    """The words for a task its gate judges now, with when it began as the surface says a time."""
    return f"{VERIFYING} since {at}"


def gate_since(task: Task, entry: Row | None, now: int) -> int | None:
    """When the verification gate judging `task` (in review) began, while it still judges it;
    else None. `entry` is the task's newest move or gate event (`Tx.gate_entry`, or
    `Tx.gate_entries` for many tasks in one read). It judges while that is the gate's start
    (no verdict, stop or move since), its process runs, it beat within `GATE_BEATS_MISSED`
    beats (a gate that beats: the task's `last_heartbeat_at`, or the start) and its time bound
    has not passed. Its verdict and its move are one write (`Board.record_gate_verdict`): a task
    in review with a verdict and no gate judging it waits on a person (a refused move). A gate
    killed with -9 is over at once on its own machine (as a dead lander's turn), elsewhere after
    three missed beats (at its bound when it does not beat)."""
    if task.status != t.IN_REVIEW or entry is None:
        return None
    if entry["kind"] != EventKind.VERIFICATION_STARTED:
        return None
    event = Event.from_row(entry)
    started: VerificationStarted = read(event.data)
    if now >= started["until"] or process_gone(started["holder"]):
        return None
    beat_ms = started.get("beat_ms")
    if beat_ms:
        last = max(event.created_at, task.last_heartbeat_at or 0)
        if now > last + GATE_BEATS_MISSED * beat_ms:
            return None
    return event.created_at


LANDING = "landing"  # what every surface says of a task a landing of which is under way
# The kinds a landing under way answers (it approves, lands, or is refused again): left out while
# it runs, so a second operator is not offered a second landing the queue would only serialise.
LANDED_BY_LANDING = frozenset({REVIEW, UNLANDED, LANDING_REFUSED})


def landing_by(lander: str | None, at: str | None = None) -> str:
    """The words for a task being landed: by whom, since when it began as the surface says a
    time (a card too narrow for both says one: `landing by carol`, `landing since 14:35`)."""
    by = f" by {lander}" if lander is not None else ""
    return f"{LANDING}{by}" + (f" since {at}" if at is not None else "")


def landing_of(row: Row | None, now: int, title: str | None = None) -> LandingRun | None:
    """The landing under way that `row` (the task's `land_queue` row) is, unless its lander
    is dead (its lease ran out, or its process is gone: `QueueEntry.dead`), which hides
    nothing: the next lander of its branch settles it."""
    if row is None:
        return None
    entry = QueueEntry.from_row(row)
    if entry.dead(now):
        return None
    return LandingRun(
        task_id=entry.task_id, since=entry.created_at, lander=entry.lander, entry=entry.id,
        title=title,
    )  # fmt: skip


def landings(tx: Tx, now: int) -> list[LandingRun]:
    """The landings under way, oldest first: the queue's live rows (a few: one a landing)."""
    runs = []
    for row in tx.land_queue_all():
        task = tx.task(row["task_id"])
        run = landing_of(row, now, task["title"] if task is not None else None)
        if run is not None:
            runs.append(run)
    return sorted(runs, key=lambda run: (run.since, run.task_id))


def _tasks(
    tx: Tx, now: int, config: BoardConfig, gates: list[GateRun] | None = None
) -> list[InboxItem]:
    items = []
    waiting = [Task.from_row(row) for row in tx.awaiting_person()]
    entries = tx.gate_entries([task.id for task in waiting if task.status == t.IN_REVIEW])
    for task in waiting:
        since = gate_since(task, entries.get(task.id), now)
        if since is not None:  # the gate judges it: its verdict says what it needs then
            if gates is not None:
                gates.append(GateRun(task_id=task.id, since=since, title=task.title))
            continue
        over_budget = blocked_by_budget(tx, task)
        spent = first_spent(standings(tx, task, now)) if over_budget else None
        items.append(awaiting(task, over_budget, spent))
    items += [lapsed(Task.from_row(row), now) for row in tx.lapsed_leases(now)]
    overdue_ms = config.overdue_leases * config.lease_ms
    seen: set[str] = set()
    for row in tx.quiet_runs(now, now - overdue_ms):
        if row["id"] not in seen:  # one item per task, however many runs it left open
            seen.add(row["id"])
            items.append(quiet(row, overdue_ms, config.overdue_leases))
    return items


def unlanded(row: Row) -> InboxItem:
    task = Task.from_row(row)
    branch = row["land_branch"]
    where = f" on {branch}" if branch else " in its worktree"
    verdict = _verdict(task)
    reviews = [r for r in verdict.get("reviews") or [] if isinstance(r, dict)]
    if reviews and reviews[-1].get("decision") == "approve":
        how = f"approved by {reviews[-1].get('reviewer') or 'a reviewer'}"
    elif verdict.get("status") == "pass":
        how = "passed its gate"
    else:
        how = "done"
    why = f"{how}, not landed: its work waits{where}"
    return _item(task, UNLANDED, why, task.status_since or task.updated_at)


def refused(row: Row) -> InboxItem:
    task = Task.from_row(row)
    why = (
        f"{OPENS[LANDING_REFUSED]} ({row['refusal_reason']}) for {row['refusal_actor']}: "
        f"{_clip(row['refusal_message'])}"
    )
    return _item(task, LANDING_REFUSED, why, row["refusal_at"])


def _landing(tx: Tx, _now: int, _config: BoardConfig) -> list[InboxItem]:
    items = [refused(row) for row in tx.land_refusals_waiting()]
    seen = {item.task_id for item in items}
    for row in tx.unlanded_work():
        if row["id"] not in seen:  # one item per task, however many live worktrees it has
            seen.add(row["id"])
            items.append(unlanded(row))
    return items


def _deliveries(tx: Tx, _now: int, _config: BoardConfig) -> list[InboxItem]:
    return [held(row) for row in tx.held_consumers()]


Source = Callable[[Tx, int, BoardConfig], list[InboxItem]]

# Where the items come from beside `_tasks` (which also hands back the gates it leaves out):
# each a function of (tx, now, config) over an index.
SOURCES: list[Source] = [_landing, _deliveries]


def sort_key(item: InboxItem) -> tuple[int, int, str, str]:
    """Oldest first; a tie in the order of `KINDS`, then by task id and consumer."""
    return (item.since, KINDS.index(item.kind), item.task_id or "", item.consumer or "")


def collect(
    tx: Tx,
    now: int,
    config: BoardConfig,
    gates: list[GateRun] | None = None,
    landing: list[LandingRun] | None = None,
) -> list[InboxItem]:
    """Everything that needs a person at `now`, oldest first, read in the caller's transaction.
    `gates`, when given, gets the tasks left out because their gate judges them now; `landing`,
    the landings under way (`landings`), whose tasks' review, land and refusal items are left
    out until they end."""
    items = _tasks(tx, now, config, gates)
    items += [item for source in SOURCES for item in source(tx, now, config)]
    refused_ids = {item.task_id for item in items if item.kind == LANDING_REFUSED}
    runs = landings(tx, now)
    if landing is not None:
        landing += runs
    being_landed = {run.task_id for run in runs}
    items = [
        item
        for item in items
        if not (item.task_id in refused_ids and item.kind in SUPERSEDED_BY_REFUSAL)
        and not (item.task_id in being_landed and item.kind in LANDED_BY_LANDING)
    ]
    return sorted(items, key=sort_key)


def judged_by(item: InboxItem, agent: str) -> bool:
    """Whether `agent` may take `item`'s action as far as builder-is-not-judge goes: not when
    it built the item's task and the action is a judge's (a reviewer that took the oldest item
    looped on its own work, refused self_review)."""
    return item.kind not in JUDGED or agent not in (item.builders or ())


def item_key(item: InboxItem) -> tuple[str, str, str]:
    """What makes an item the same item from one read to the next (a TUI announces new keys)."""
    return (item.kind, item.task_id or "", item.consumer or "")
