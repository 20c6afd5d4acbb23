"""The board's side of landing: who may land a task, the per-branch landing queue with its lease
and intent, and the record of a landing on the task (`landed_*` columns, one `task_landed`
event, audit rows; from in_review, approve-and-land in the same transaction).

Landing itself (the git work) is `boardlib.worktrees.landing`; what must be shared across
processes and machines is here, in a table, so it works on SQLite and Postgres alike. A dead
lander's row is settled by the next lander of its branch from the row's intent. Design notes:
docs/landing.md.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from . import transitions as t
from .actors import is_operator, is_system
from .clock import local_time
from .config import LAND_LEASE
from .errors import BoardError, Reason
from .events import EventKind
from .lifecycle import check_epoch, verdict_blocks_done
from .processes import process_gone, process_token
from .records import LAND_STRATEGIES, QueueEntry, Task
from .wontland import ABANDON_ACTION, ABANDON_PREFIX, abandon_detail

if TYPE_CHECKING:
    from .board import Board
    from .payloads import CommentAdded, TaskLanded, WorkspaceUpdated
    from .store.base import Row, Tx

T = TypeVar("T")

LAND_VERB = "land"
DEFAULT_LEASE_MS = 30_000
REFUSAL_MESSAGE_MAX = 1000  # characters of a refusal's message kept for the inbox


def lease_ms_from_env() -> int:
    """`KANBAN_LAND_LEASE_MS`: how long a lander's turn (or place in the queue) lasts without a
    renewal; the lander renews it every third of that while it works."""
    return int(LAND_LEASE.read(DEFAULT_LEASE_MS))


# -- who may land -------------------------------------------------------------------------------


def not_landable(message: str, why: str, **details: Any) -> BoardError:
    """`not_landable` with a machine-readable `why`: no_worktree, not_reviewed, already_landed,
    empty, no_base_branch, dropped, changed_since_review, elsewhere (on another machine)."""
    return BoardError(Reason.NOT_LANDABLE, message, why=why, **details)


def check_lander(task: Task, actor: str, verb: str = LAND_VERB) -> None:
    """Builder is not judge, for landing as for approval: no holder of the task's current attempt
    (nor its first claimer) may land it. Operators and the board's own passes may."""
    if is_operator(actor) or is_system(actor):
        return
    if actor in task.builders:
        raise BoardError(
            Reason.SELF_REVIEW,
            f"cannot {verb} {task.id}: {actor} worked on it; another agent or an operator lands it",
            id=task.id,
            holders=task.holders,
        )


def check_landable(task: Task, actor: str, *, epoch: int | None = None) -> bool:
    """Refuse what may not land (nothing is written); True when landing also approves (the task
    is in review), False when it lands work approved earlier (done)."""
    check_reviewed(task)
    check_lander(task, actor)
    check_epoch(task, LAND_VERB, epoch)
    if task.status == t.IN_REVIEW and verdict_blocks_done(task.verification):
        raise BoardError(
            Reason.VERIFICATION_REQUIRED,
            f"cannot approve and land {task.id}: its verification verdict is not promotable",
            id=task.id,
            verification=task.verification,
        )
    return task.status == t.IN_REVIEW


def unreviewed_refusal(task: Task) -> BoardError | None:
    """Why a task's work may not land whoever asks (landed already, dropped, or not reviewed;
    the preview says the same, as `unavailable`), None when it may: the one rule `check_reviewed`
    refuses by and a surface offers Land by (`may_land_reviewed`)."""
    if task.landed_commit is not None:
        return not_landable(
            f"{task.id} already landed: {task.landed_commit[:12]} on {task.landed_into} "
            f"(by {task.landed_by}); landing twice changes nothing",
            "already_landed",
            id=task.id,
            landed_commit=task.landed_commit,
            landed_into=task.landed_into,
            landed_by=task.landed_by,
            landed_at=task.landed_at,
        )
    if task.dropped:
        return not_landable(f"cannot land {task.id}: it is dropped", "dropped", id=task.id)
    if task.status not in (t.IN_REVIEW, t.DONE):
        return not_landable(
            f"cannot land {task.id}: it is {task.status}; only reviewed work lands (in_review: "
            "approve and land in one decision; done: land work approved earlier)",
            "not_reviewed",
            id=task.id,
            current=task.status,
        )
    return None


def check_reviewed(task: Task) -> None:
    """Refuse a task whose work may not land whoever asks (`unreviewed_refusal`)."""
    refusal = unreviewed_refusal(task)
    if refusal is not None:
        raise refusal


def may_land_reviewed(task: Task) -> bool:
    """Whether `check_reviewed` lets the task's work land: what a surface offers Land for, so
    the offer and the board's answer cannot disagree."""
    return unreviewed_refusal(task) is None


def check_abandonable(task: Task, actor: str) -> None:
    """Refuse a "won't land" decision (nothing is written) unless an operator takes it on done
    work that has not landed: in review it is a reject, landed or dropped there is nothing to
    decide."""
    if not is_operator(actor):
        raise BoardError(
            Reason.OPERATOR_ONLY,
            f"cannot decide that {task.id} won't land as {actor}: only an operator does; ask a "
            "person",
            actor=actor,
        )
    check_reviewed(task)
    if task.status != t.DONE:
        raise BoardError(
            Reason.INVALID_STATE,
            f"cannot decide that {task.id} won't land: it is {task.status}, not done; reject it "
            "instead, back to its builder",
            id=task.id,
            current=task.status,
        )


# -- who holds a place in a queue ---------------------------------------------------------------


# A queue holder is a process token (`processes.py`): gone at once when its process on this machine
# is, otherwise only when its lease runs out.
holder_token = process_token
holder_gone = process_gone


class LandQueue:
    """The landing queue and the landing record of one board. Each method is one transaction."""

    def __init__(self, board: "Board", *, lease_ms: int | None = None) -> None:
        self.board = board
        self.lease_ms = lease_ms_from_env() if lease_ms is None else lease_ms

    def _write(self, work: "Callable[[Tx], T]", *, shared: bool = False) -> T:
        """`shared`: one guarded update of the caller's own row (its id, its holder, a lease
        still running), which needs no turn at the board (`Store.write`)."""
        return self.board.store.write(work, shared=shared)

    # -- reads ----------------------------------------------------------------------------------

    def entries(self, repo_path: str, ref: str) -> list[QueueEntry]:
        return QueueEntry.from_rows(self.board.store.read(lambda tx: tx.land_queue(repo_path, ref)))

    def entry(self, entry_id: str) -> QueueEntry | None:
        row = self.board.store.read(lambda tx: tx.land_queue_entry(entry_id))
        return None if row is None else QueueEntry.from_row(row)

    def entry_of_task(self, task_id: str) -> QueueEntry | None:
        row = self.board.store.read(lambda tx: tx.land_queue_entry_of_task(task_id))
        return None if row is None else QueueEntry.from_row(row)

    def under_way_and_refused(self, task_id: str) -> "tuple[QueueEntry | None, Row | None]":
        """What a preview says beside git's answer, in one read: the task's landing under way
        (its queue entry), and its last refusal while that still stands."""

        def work(tx: "Tx") -> "tuple[Row | None, Row | None]":
            return tx.land_queue_entry_of_task(task_id), tx.land_refusal_standing(task_id)

        entry, refusal = self.board.store.read(work)
        return (None if entry is None else QueueEntry.from_row(entry)), refusal

    def all_entries(self) -> list[QueueEntry]:
        return QueueEntry.from_rows(self.board.store.read(lambda tx: tx.land_queue_all()))

    # -- a lander's own row ---------------------------------------------------------------------

    def join(
        self,
        task_id: str,
        *,
        repo_path: str,
        ref: str,
        lander: str,
        holder: str,
        strategy: str,
        fence: str,
        options: dict[str, Any] | None = None,
    ) -> QueueEntry:
        """Take a place at the end of the branch's queue. One landing per task at a time: a task
        already queued is `conflict` with that entry (a dead one is recovered first by the
        caller). The task's landability is checked again here, inside the transaction."""
        assert strategy in LAND_STRATEGIES

        def work(tx: "Tx") -> QueueEntry:
            now = self.board.now()
            task = self.board._load(tx, task_id)
            if task.landed_commit is not None or task.status not in (t.IN_REVIEW, t.DONE):
                check_landable(task, lander)  # raises the precise refusal
            existing = tx.land_queue_entry_of_task(task_id)
            if existing is not None:
                found = QueueEntry.from_row(existing)
                raise BoardError(
                    Reason.CONFLICT,
                    f"{task_id} is already being landed by {found.lander} ({found.id}, "
                    f"{found.state}); land it again once that landing ends (a lander that "
                    "died frees its place at once on its own machine, elsewhere when its "
                    f"lease runs out, within {self.lease_ms / 1000:g} s)",
                    id=task_id,
                    entry=found.id,
                    lander=found.lander,
                    lease_until=found.lease_until,
                )
            row = tx.insert_land_queue_entry(
                {
                    "repo_path": repo_path,
                    "ref": ref,
                    "task_id": task_id,
                    "lander": lander,
                    "holder": holder,
                    "state": "waiting",
                    "lease_until": now + self.lease_ms,
                    "strategy": strategy,
                    "from_status": task.status,
                    "fence": fence,
                    "options": options or {},
                    "tenant_id": task.tenant_id,
                    "created_at": now,
                    "updated_at": now,
                }
            )
            return QueueEntry.from_row(row)

        return self._write(work)

    def take_turn(self, entry: QueueEntry) -> QueueEntry | None:
        """The turn, when `entry` is first in its queue and still its holder's; else None."""

        def work(tx: "Tx") -> QueueEntry | None:
            now = self.board.now()
            queue = tx.land_queue(entry.repo_path, entry.ref)
            if not queue or queue[0]["id"] != entry.id:
                return None
            row = tx.update_land_queue_entry(
                entry.id,
                entry.holder,
                {"state": "active", "lease_until": now + self.lease_ms, "updated_at": now},
                live_at=now,
            )
            return None if row is None else QueueEntry.from_row(row)

        return self._write(work)

    def renew(self, entry: QueueEntry) -> QueueEntry | None:
        """Another lease for a row whose lease still runs; None when it ran out (the row may
        already be a successor's to recover, so the lander must stop). A shared write, as a
        claim's renewal: a writer holding the board's lock cannot keep the heartbeat `busy`
        until a lander still at work loses its turn."""

        def work(tx: "Tx") -> QueueEntry | None:
            now = self.board.now()
            row = tx.update_land_queue_entry(
                entry.id, entry.holder, {"lease_until": now + self.lease_ms}, live_at=now
            )
            return None if row is None else QueueEntry.from_row(row)

        return self._write(work, shared=True)

    def record_intent(self, entry: QueueEntry, old_tip: str, new_commit: str) -> QueueEntry | None:
        """Write the intent (the tip built on, the commit the branch moves to) just before the
        branch moves, renewing the lease; None when the turn is no longer this lander's."""

        def work(tx: "Tx") -> QueueEntry | None:
            now = self.board.now()
            row = tx.update_land_queue_entry(
                entry.id,
                entry.holder,
                {
                    "old_tip": old_tip,
                    "new_commit": new_commit,
                    "lease_until": now + self.lease_ms,
                    "updated_at": now,
                },
                live_at=now,
            )
            return None if row is None else QueueEntry.from_row(row)

        return self._write(work)

    def publish_built(self, entry: QueueEntry, base: str, commit: str | None) -> None:
        """Say which commit this landing would put on the branch, built on `base` (None: none
        any more), so the landing behind it builds and verifies on that commit while it waits.
        Only a guess for the one behind: nothing is decided by it, and a row whose lease ran out
        is left as it is."""

        def work(tx: "Tx") -> None:
            now = self.board.now()
            changes = {"built_base": base, "built_commit": commit, "updated_at": now}
            tx.update_land_queue_entry(entry.id, entry.holder, changes, live_at=now)

        self._write(work, shared=True)

    def leave(
        self, entry: QueueEntry, *, comment: str | None = None, settling: bool = False
    ) -> bool:
        """Remove a row (a landing that refused or gave up, or a dead one a successor cleared),
        with an optional system comment on its task in the same transaction when the task is
        still in review (the approve-and-land that did not land says why). `settling` (a dead
        row): the comment only from the call that removed the row, as two callers may settle
        the same dead landing at once."""

        def work(tx: "Tx") -> bool:
            now = self.board.now()
            removed = tx.delete_land_queue_entry(entry.id, entry.holder)
            if comment and (removed or not settling):
                row = tx.task(entry.task_id)
                if row is not None and row["status"] == t.IN_REVIEW:
                    added = tx.insert_comment(
                        entry.task_id, comment, "system", None, now, row["tenant_id"]
                    )
                    task = Task.from_row(row)
                    self.board._emit(
                        tx, EventKind.COMMENT_ADDED, task, None, now, {"comment_id": added["id"]}
                    )
            return removed

        return self._write(work)

    def explain(self, task_id: str, comment: str) -> bool:
        """A system comment on a task still in review (an approve-and-land that did not land
        says why); False when it is no longer in review."""

        def work(tx: "Tx") -> bool:
            now = self.board.now()
            row = tx.task(task_id)
            if row is None or row["status"] != t.IN_REVIEW:
                return False
            added = tx.insert_comment(task_id, comment, "system", None, now, row["tenant_id"])
            task = Task.from_row(row)
            payload: CommentAdded = {"comment_id": added["id"]}
            self.board._emit(tx, EventKind.COMMENT_ADDED, task, None, now, payload)
            return True

        return self._write(work)

    def record_refusal(self, task_id: str, error: BoardError, actor: str) -> bool:
        """Keep a refusal a person must resolve (`attention.LANDING_REFUSALS`) as the task's last,
        for the inbox, in one transaction; the task row, its events and the queue stay as they
        were. False (nothing written) for another refusal, or a task landed or moved on."""
        from .attention import LANDING_REFUSALS

        if error.reason not in LANDING_REFUSALS:
            return False

        def work(tx: "Tx") -> bool:
            row = tx.task(task_id)
            if row is None or row["landed_commit"] is not None:
                return False
            if row["status"] not in (t.IN_REVIEW, t.DONE) or row["dropped"]:
                return False
            into = error.details.get("into")
            tx.put_land_refusal(
                {
                    "task_id": task_id,
                    "reason": str(error.reason),
                    "message": error.message[:REFUSAL_MESSAGE_MAX],
                    "actor": actor,
                    "into_branch": into if isinstance(into, str) else None,
                    "tenant_id": row["tenant_id"],
                    "refused_at": self.board.now(),
                }
            )
            return True

        return self._write(work)

    def record_abandoned(
        self, task_id: str, *, actor: str, reason: str, workspace_id: str, kept: str | None
    ) -> Task:
        """An operator's "won't land": the workspace archived (its event says why), the standing
        refusal cleared and an audit row (the verdict kept, as a human override's), in one
        transaction; the task keeps its status, so the inbox no longer lists it. Refused, nothing
        written, when the task may no longer be abandoned or a landing of it is under way."""

        def work(tx: "Tx") -> Task:
            now = self.board.now()
            task = self.board._load(tx, task_id)
            check_abandonable(task, actor)
            entry = tx.land_queue_entry_of_task(task_id)
            if entry is not None and not QueueEntry.from_row(entry).dead(now):
                raise BoardError(
                    Reason.CONFLICT,
                    f"{task_id} is being landed by {entry['lander']} ({entry['id']}); decide "
                    "once that landing ends",
                    id=task_id,
                    entry=entry["id"],
                )
            row = tx.workspace(workspace_id)
            assert row is not None
            why = ABANDON_PREFIX.format(actor=actor) + reason
            tx.update_workspace(workspace_id, {"status": "archived", "last_used_at": now})
            data: WorkspaceUpdated = {"workspace_id": workspace_id, "status": "archived",
                                      "reason": why}  # fmt: skip
            if row["status"] != "archived":
                data["from"] = row["status"]
            self.board._emit(tx, EventKind.WORKSPACE_UPDATED, task, actor, now, data)
            tx.delete_land_refusal(task_id)
            branch = row["branch"] or "its branch"
            where = f"its work kept on {branch} at {kept[:12]}" if kept else "no branch left"
            tx.insert_audit(
                task_id=task_id, actor=actor, action=ABANDON_ACTION, from_status=task.status,
                to_status=task.status, verdict_overridden=task.verification,
                detail=abandon_detail(actor, reason, where), now=now, tenant=task.tenant_id,
            )  # fmt: skip
            return task

        return self._write(work)

    # -- the record -----------------------------------------------------------------------------

    def record_landed(
        self,
        task_id: str,
        *,
        commit: str,
        into: str,
        strategy: str,
        actor: str,
        approve: bool,
        old_tip: str | None = None,
        epoch: int | None = None,
        entry: QueueEntry | None = None,
        unverified: str | None = None,
        recovered_by: str | None = None,
        already_on: bool = False,
    ) -> Task:
        """Record that `commit` carries the task's work on `into`: the `landed_*` columns, one
        `task_landed` event and an audit row, the queue row removed, all in one transaction.
        With `approve` (the task was in review), the same transaction moves it to done with the
        lander's review appended to the verdict. The commit is already on the branch, so nothing
        here refuses: a task moved on meanwhile keeps its status, and a task already recorded
        with this commit is returned as it is (recording twice changes nothing).
        `unverified` says why it landed without verification ("no verify command; why: ...",
        the operator's reason): in the event and the audit. `recovered_by`: the actor whose
        call completed the landing of `entry`, whose lander died after moving the branch (the
        event and the audit say so, and when that landing started). `already_on`: `commit` is the
        base's tip, found holding the task's change already (nothing moved, so nothing was on
        the branch for this landing: the task must still be landable, checked here); no strategy
        was applied, so `landed_strategy` and the event's `strategy` are None (null), whichever
        the caller asked for."""
        from .board import _import_models_before_the_turn, _with_review

        if approve:  # the verdict is read and extended inside; landing done work reads none
            _import_models_before_the_turn()

        def work(tx: "Tx") -> Task:
            now = self.board.now()
            task = self.board._load(tx, task_id)
            if entry is not None:
                tx.delete_land_queue_entry(entry.id, entry.holder)
            if task.landed_commit == commit:
                return task
            applied: str | None = strategy
            if already_on:  # nothing of this call is on the branch: refuse as a landing would
                check_reviewed(task)
                check_epoch(task, LAND_VERB, epoch)
                applied = None  # nothing was merged, rebased or squashed
            landed = {
                "landed_commit": commit,
                "landed_into": into,
                "landed_at": now,
                "landed_by": actor,
                "landed_strategy": applied,
            }
            data: TaskLanded = {
                "verb": LAND_VERB,
                "landed_commit": commit,
                "landed_into": into,
                "strategy": applied,
                "base_before": old_tip,
            }
            recovered = ""
            if recovered_by is not None:
                data["recovered"] = True
                data["recovered_by"] = recovered_by
                if entry is not None:
                    data["started_at"] = entry.created_at
                started = f" {actor} started at {local_time(entry.created_at)}" if entry else ""
                recovered = (
                    f"; completed by recovery by {recovered_by}: the landing{started} crashed "
                    "after moving the branch"
                )
            if already_on:
                data["already_on"] = True
                recovered += f"; its change was already on {into}, nothing moved"
            if unverified:
                data["unverified"] = True
                data["unverified_detail"] = unverified  # the history tells it, not only the audit
            can_approve = (
                approve
                and task.status == t.IN_REVIEW
                and epoch in (None, task.claim_epoch)
                and not verdict_blocks_done(task.verification)
            )
            if can_approve:
                said = f"approved by landing it unverified ({unverified})" if unverified else None
                verdict = _with_review(  # a pass is the approver's word: the verdict says so
                    task.verification, actor, "approve", now, said, status="pass"
                )
                new = self.board._apply_move(
                    tx, task, t.DONE, actor=actor, now=now, verb=LAND_VERB,
                    extra={"verification": verdict, **landed}, emit=False,
                )  # fmt: skip
                data["from"], data["to"] = task.status, new.status
                data["fields"] = sorted(["verification", *landed])
            else:
                new = Task.from_row(tx.update_task(task_id, {**landed, "updated_at": now}))
            self.board._emit(tx, EventKind.TASK_LANDED, new, actor, now, data)
            tx.delete_land_refusal(task_id)  # landed: an earlier refusal no longer stands
            if not can_approve and approve and task.status == t.IN_REVIEW:
                tx.insert_comment(
                    task_id,
                    f"Landed as {commit[:12]} on {into}, but not approved: its verdict or "
                    "attempt changed while it landed. A reviewer decides.",
                    "system", None, now, task.tenant_id,
                )  # fmt: skip
            tx.insert_audit(
                task_id=task_id, actor=actor, action="land", from_status=task.status,
                to_status=new.status, verdict_overridden=None,
                detail=f"landed {commit} on {into} ({applied or 'no strategy'}){recovered}",
                now=now, tenant=task.tenant_id,
            )  # fmt: skip
            if unverified:
                tx.insert_audit(
                    task_id=task_id, actor=actor, action="land_unverified",
                    from_status=task.status, to_status=new.status,
                    verdict_overridden=task.verification,
                    detail=f"landed without verification by {actor}: {unverified}",
                    now=now, tenant=task.tenant_id,
                )  # fmt: skip
            return new

        return self._write(work)
