"""The board API: one method per verb of the seeds, every rule enforced inside one transaction.

Each write method opens a `BEGIN IMMEDIATE` transaction through the store, re-reads the rows it
judges, decides with the rule modules (`transitions`, `lifecycle`, `caps`, `recovery`; `explain`
for the reads that say why), writes, appends exactly one event per changed task, and returns the
new records. A refusal raises `BoardError` before anything commits, so
"refused" always means "changed nothing". Reads go through the store's query-only connection.

Every surface (CLI, HTTP, TUI, the demo's agents) calls these methods and nothing below them.
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import fields, replace
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import budgets, caps
from . import transitions as t
from . import validation as validate
from .actors import GATE, OPERATOR, SYSTEM, author_type_of, comment_actor, is_agent
from .clock import Clock, SystemClock, moment
from .columns import (
    FINISHED,
    PAGE_SIZE,
    FinishedKey,
    PageRequest,
    TaskSearch,
    ViewRead,
    read_view,
)
from .config import MAX_LEASE_MINUTES, MAX_LEASE_MS, BoardConfig, minutes_to_ms
from .errors import BoardError, Reason, invalid_input, not_found, wrong_state
from .events import EventKind, wire, wire_key
from .explain import explain_idle, explain_task, held_live, preview_claim
from .graph import closing_a_cycle, cycle_path, find_cycles, topological_order
from .leases import renewal
from .lifecycle import (
    SEED_CREATE_PATHS,
    check_editor,
    check_epoch,
    check_mover,
    check_worker,
    claim_conflict,
    not_in_review,
    override_route,
    plan_move,
    seed_block_reason,
    stale_claim,
    verdict_blocks_done,
)
from .location import BoardLocation, DatabaseUrl, board_location
from .paging import PAGE_DEFAULT, TaskDocuments, TaskPage, cursor_after, rows_to_read, seq_of
from .plan_match import (
    AppliedPlan,
    Comparison,
    Difference,
    compare,
    differs_refusal,
    plan_key,
)
from .plan_match import PlanItem as PlanItem  # where callers have always found it
from .processes import machine_id, process_token
from .records import (
    AUTHOR_TYPES,
    BOARD_SCOPE,
    BUDGET_BOARD_DAILY,
    BUDGET_TASK,
    BUDGET_TEAM_DAILY,
    BUDGET_TOKENS,
    BUDGET_USD,
    EXECUTION_CANCELLED,
    EXECUTION_LEDGER,
    EXECUTION_OUTCOMES,
    EXECUTION_RUNNING,
    OVERRIDE_ACTION,
    TASK_ID_PREFIX,
    TOKENS_MAX,
    USD_MAX,
    WORKSPACE_STATUSES,
    Ancestor,
    AuditEntry,
    BudgetReport,
    BudgetStanding,
    CheckReport,
    ClaimPreview,
    ClosedExecution,
    Comment,
    DailyBudget,
    Event,
    Execution,
    Explanation,
    GateRun,
    IdleExplanation,
    Inbox,
    LandingRun,
    LinkedTask,
    Marks,
    ReconcileReport,
    Task,
    TaskView,
    Workspace,
)
from .recovery import RELEASE_BATCH, StaleTaskReconciler, release_expired_leases
from .store import open_store
from .store.base import Row, RowEvent, Store, Tx
from .wontland import ABANDON_ACTION, wont_land

if TYPE_CHECKING:  # types only: see boardlib/payloads.py
    from .archive import ImportReport, PruneReport
    from .payloads import (
        BudgetChanged,
        CommentAdded,
        DepLinked,
        DepUnlinked,
        ExecutionCompleted,
        ExecutionStarted,
        LeaseRenewed,
        Payload,
        ProgressLogged,
        StatusChanged,
        TaskClaimed,
        TaskCreated,
        TaskDropped,
        TaskRestored,
        TaskTransferred,
        TaskUpdated,
        VerificationRecorded,
        VerificationStarted,
        VerificationStopped,
        WorkspaceProvisioned,
        WorkspaceUpdated,
    )
    from .review import ReviewNote
    from .stats import Stats


_TASK_FIELDS = frozenset(field.name for field in fields(Task)) - {"id"}


def _import_models_before_the_turn() -> None:
    """Import the pydantic schemas (ancestor rows, verdicts) before a write that may check with
    them. They load lazily so a claim never pays for pydantic, but never inside a write
    transaction: there the first import (~0.4 s, seconds under load) held the writers' turn, and
    of 20 agents racing capped creates on a loaded 2-core machine 10-15 waited out their 30 s
    budget (busy) behind one import after another."""
    from . import models  # noqa: F401


def unknown_reference(key: str, field: str, ref: str) -> dict[str, Any]:
    """The problem a plan reference to nothing is reported as, by `plans.lint` and by
    `Board.create_plan` alike: the same kind, words and fields."""
    return {
        "kind": "unknown_key",
        "message": f"{key}.{field} refers to {ref!r}, which is neither a key of this plan nor a "
        "task on the board",
        "key": key,
        "field": field,
        "ref": ref,
    }


def cancelled_reference(key: str, ref: str, blocker: str) -> dict[str, Any]:
    """The problem a plan's dependency on a cancelled task is reported as, by `plan lint` and
    `Board.apply_plan` alike: a cancelled task is never done, so its dependent never ready."""
    named = ref if ref == blocker else f"{ref} ({blocker})"
    return {
        "kind": "cancelled_dependency",
        "message": f"{key}.depends_on refers to {named}, which is cancelled: {key} could never "
        "become ready (depend on a task that can still finish, or leave the link out)",
        "key": key,
        "field": "depends_on",
        "ref": ref,
        "id": blocker,
    }


def cancelled_links(
    tx: Tx, items: Sequence[PlanItem], comparison: Comparison, update: bool
) -> list[dict[str, Any]]:
    """A plan's new links onto cancelled tasks, as `cancelled_dependency` problems: every
    dependency of an item it creates, and with `update` those it adds to an item on the board
    (a link already there is the board's, not the plan's)."""
    keys = {item.key for item in items}
    matched = comparison.matched
    problems = []
    for item in items:
        if item.key in matched:
            refs = [
                str(d.plan) for d in comparison.updates()
                if update and d.key == item.key and d.field == "depends_on"
            ]  # fmt: skip
        else:
            refs = list(item.depends_on)
        for ref in dict.fromkeys(refs):
            if ref in matched:
                blocker: Task | None = matched[ref]
            elif ref in keys:
                continue  # created by this plan now
            else:
                row = tx.task(ref)
                blocker = Task.from_row(row) if row is not None else None
            if blocker is not None and blocker.status == t.CANCELLED:
                problems.append(cancelled_reference(item.key, ref, blocker.id))
    return problems


def plan_order(items: Sequence[PlanItem]) -> list[str]:
    """An acyclic plan's keys in creation order: each after its dependencies and parent."""
    return topological_order(
        {item.key: [*item.depends_on, *([item.parent] if item.parent else [])] for item in items}
    )


LINK_VERB = "link a dependency to"  # how the agent contract names a link, in its refusals


def held_links(comparison: Comparison, actor: str, update: bool) -> list[dict[str, Any]]:
    """The links `update` would add to items on the board that `actor` may not link (the agent
    contract, `check_worker(planning=True)`: never onto another agent's task), as
    `not_assignee` problems: the same refusal as `deps add`, for the whole plan."""
    problems = []
    for difference in comparison.updates() if update else ():
        if difference.field != "depends_on":
            continue
        try:
            check_worker(comparison.matched[difference.key], LINK_VERB, actor=actor, planning=True)
        except BoardError as refusal:
            problems.append({
                "kind": str(Reason.NOT_ASSIGNEE), "message": f"{difference.key}: {refusal.message}",
                "key": difference.key, "field": "depends_on", "ref": str(difference.plan),
                "id": difference.task_id, "assignee": refusal.details.get("assignee"),
            })  # fmt: skip
    return problems


def plan_problems_refusal(reason: Reason, problems: list[dict[str, Any]]) -> BoardError:
    """A plan refused for `problems` (each with its `message`), all named, with `reason`."""
    return BoardError(
        reason,
        f"the plan has {len(problems)} problem(s): "
        + "; ".join(problem["message"] for problem in problems[:3])
        + (f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""),
        problems=problems,
    )


def cancelled_blocker(task: str, blocker: str) -> BoardError:
    """The refusal of a link onto a cancelled task: the stall seed 000 refuses cycles for (a
    dependent that can never become ready), changing nothing."""
    return BoardError(
        Reason.INVALID_STATE,
        f"{task} cannot depend on {blocker}: {blocker} is cancelled and will never be done, so "
        f"{task} could never become ready; depend on a task that can still finish, or on none",
        id=blocker,
        current=t.CANCELLED,
        dependsOn=blocker,
    )


MARKED_BATCH = 500  # won't-land tasks per read: under SQLite's oldest bound-parameter limit (999)
PURGE_BATCH = 2_000  # expired events per purge transaction: each holds the write turn briefly


def _closed_already(
    execution_id: str, row: Row, spent: BudgetStanding | None, late_cost: bool
) -> BoardError:
    """A closed run closed again: still `not_found` (no running run of that id, as the seed's
    HTTP 404 says), but saying how it closed: a run the budget's block cancelled was answered
    `execution not found` while `exec show` showed it. A run the board closed before its cost
    was reported takes that report once (`Board._record_late`); this close reported none
    (`costPending`: what that run cost is not counted yet; a closed run without it has its cost
    counted, at its close or its one late report). Under
    a spent budget (`spent`) it says no new run starts either, so no hint offers one."""
    said = str(row["error"] or "")
    said = said if len(said) <= 160 else said[:159] + "…"  # an agent's words may be 20,000
    how = f"{row['status']}: {said}" if said else row["status"]
    details: dict[str, Any] = {}
    then = ""
    if spent is not None:
        details = {"budget_spent": True, "budget": spent.to_json()}
        then = "; " + budgets.no_new_run(str(row["task_id"]), spent)
    if (
        late_cost
        and row["recovery_tombstone"]
        and all(row[name] is None for name in EXECUTION_LEDGER)
    ):
        then = "; what it cost is counted once when you report it (cost, tokens)" + then
        details["cost_pending"] = True  # the MCP hint sends its holder to report it, not away
    return BoardError(
        Reason.NOT_FOUND,
        f"{execution_id} is not running: it was closed ({how}); a closed run is not closed again, "
        f"so what this close reports is not recorded{then}",
        id=execution_id,
        what="execution",
        status=row["status"],  # how it closed: the MCP hint for a closed run (not a wrong id)
        **details,
    )


class Board:
    """One shared board: a SQLite file or a PostgreSQL schema. Thread-safe; open one per process
    (or per simulated agent)."""

    def __init__(
        self,
        path: str | Path | DatabaseUrl,
        *,
        clock: Clock | None = None,
        config: BoardConfig | None = None,
        read_only: bool = False,
        reconcile_orphans: bool = True,
        create: bool = True,
        pool_size: int | None = None,
        background_checkpoints: bool = False,
    ) -> None:
        """Open the board at `path`: a file path (SQLite) or a `postgresql://` URL (see
        `location.board_location`). `create=False` refuses a missing board (`no_board`) instead
        of making a new one there; a file or schema that is not a kanban board is always refused
        (`not_a_board`) and left untouched. `created` says whether this call made the board.
        With `reconcile_orphans`, orphan reconciliation runs at open, best effort: skipped when
        another writer holds the lock or the board is read-only (the next claim reclaims).
        `pool_size` is for processes that live long and write from several threads (server, TUI,
        MCP): a Postgres board then keeps a connection pool. `background_checkpoints` is for a
        process whose writes must not wait for a checkpoint's fsyncs (the server, which answers
        claims on its event loop): a SQLite board's checkpoints then run on a thread of their
        own (store/checkpoints.py)."""
        self.location: BoardLocation = board_location(path)
        self.path = self.location  # the file on SQLite; the URL (printed without password) on PG
        self.clock = clock or SystemClock()
        self.config = config or BoardConfig()
        self.read_only = read_only
        self.store: Store = open_store(
            self.location,
            self.config,
            read_only=read_only,
            create=create,
            pool_size=pool_size,
            background_checkpoints=background_checkpoints,
        )
        self.created = self.store.created
        self._reconciler: StaleTaskReconciler | None = None
        self._claim_events: dict[str, RowEvent] = {}
        # a board this call made has no lease to have expired while nobody watched
        if reconcile_orphans and not read_only and not self.created:
            try:
                self.reconcile_orphans(best_effort=True)
            except BaseException:  # no Board to close is handed back: its store closes here
                self.store.close()
                raise

    # -- plumbing -------------------------------------------------------------------------------

    def __enter__(self) -> "Board":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._reconciler is not None:
            self._reconciler.stop()
            self._reconciler = None
        self.store.close()

    def now(self) -> int:
        return self.clock.now_ms()

    def at_once(self) -> "AbstractContextManager[None]":
        """Calls in this block on this thread raise `WouldWait` rather than wait for the board
        (a lock, the writers' turn, a database round trip), until one write has committed:
        for an event loop that answers a short call itself when it can (`Store.at_once`)."""
        return self.store.at_once()

    def _emit(
        self,
        tx: Tx,
        kind: EventKind,
        task: Task | None,
        actor: str | None,
        now: int,
        payload: "Payload",
    ) -> None:
        tx.insert_event(
            str(kind),  # a plain str: sqlite3 binds a str subclass through its adapter lookup
            task.id if task else None,
            actor,
            wire(payload),
            now,
            self.config.event_ttl_seconds,
            task.tenant_id if task else None,
        )

    @staticmethod
    def _load(tx: Tx, task_id: str) -> Task:
        if not isinstance(task_id, str) or not task_id:
            raise invalid_input("task id must be a non-empty string", field="id")
        validate.identifier(task_id, "id")
        row = tx.task(task_id)
        if row is None:
            raise not_found("task", task_id)
        return Task.from_row(row)

    def _check_holder(
        self, tx: Tx, task: Task, verb: str, agent: str, epoch: int | None, now: int
    ) -> None:
        """The lease-protected verbs: only the current holder, with a current claim, may act.

        A caller quoting an epoch older than the task's has had its claim superseded (its lease
        lapsed and the task was claimed again, by anyone): that is `stale_claim` whatever the
        task became since, so a lapsed worker learns its claim is gone rather than that someone
        else holds the task (`not_assignee`) or that the task moved on (`invalid_state`).
        """
        if epoch is not None:
            validate.integer(epoch, "epoch", minimum=0)
        if epoch is not None and epoch < task.claim_epoch:
            raise stale_claim(task, verb, epoch, agent)
        if task.status != t.IN_PROGRESS:
            # A task its budget blocked says so, not just `blocked`
            spent = budgets.blocked_by_budget(tx, task) and budgets.first_spent(
                budgets.standings(tx, task, now)
            )
            if spent:
                raise budgets.held_refusal(task.id, verb, task.status, spent)
            raise wrong_state(verb, task.status, t.IN_PROGRESS, id=task.id)
        if task.assignee_agent_id != agent:
            raise BoardError(
                Reason.NOT_ASSIGNEE,
                f"cannot {verb}: {task.id} is held by {task.assignee_agent_id}, not {agent}",
                id=task.id,
                assignee=task.assignee_agent_id,
            )
        check_epoch(task, verb, epoch, agent)
        if task.lease_expired(now):
            raise BoardError(
                Reason.STALE_CLAIM,
                f"cannot {verb}: the lease on {task.id} expired "
                f"({moment(task.lease_until or 0, now)}); "
                "the task is being released for another claim",
                id=task.id,
                lease_until=task.lease_until,
            )

    def _apply_move(
        self,
        tx: Tx,
        task: Task,
        target: str,
        *,
        actor: str,
        now: int,
        verb: str,
        reason: str | None = None,
        human_override: bool = False,
        extra: dict[str, Any] | None = None,
        event_data: "StatusChanged | None" = None,
        via: tuple[str, ...] = (),
        holder: str | None = None,
        emit: bool = True,
        via_takes: bool = True,
        holder_runtime: str | None = None,
        renew: Mapping[str, int] | None = None,
    ) -> Task:
        """Move `task` to `target` with every side effect: the lifecycle's column changes, readiness
        of dependents on done, executions of abandoned work, the audit row of an override, and one
        event. `via` names intermediate statuses for a verb the table only allows in legal steps
        (seed 002's reject is in_review -> in_progress -> todo here); each step is checked, the
        result is written once; `via_takes=False` passes through without taking the task (an
        override's way out of blocked). `emit=False` leaves the one event to a verb that has its
        own kind (a landing's `task_landed`, which also carries the move). `renew`: the lease
        columns of the holder's sign of life (`_beat`), written with the edit."""
        changes: dict[str, Any] = {}
        passing = task
        for step in via:
            hop = plan_move(
                passing, step, actor=actor, now=now, lease_ms=self.config.lease_ms, reason=reason,
                takes=via_takes,
            )  # fmt: skip
            changes |= hop.changes
            passing = replace(passing, **hop.changes)
        move = plan_move(
            passing,
            target,
            actor=actor,
            now=now,
            lease_ms=self.config.lease_ms,
            reason=reason,
            human_override=human_override,
            holder=holder,
            holder_runtime=holder_runtime,
        )
        changes |= move.changes
        if via:
            changes["attempts"] = task.attempts  # passing through is not a new attempt
        changes |= extra or {}
        if move.is_noop and not extra:
            return task
        changes |= renew or {}
        if extra and "updated_at" not in changes:
            changes["updated_at"] = now
        # Runs belong to a holder's stay in progress: leaving it ends them.
        ends_runs = task.status == t.IN_PROGRESS or target in (*t.PENDING, t.CANCELLED)
        close_runs = (
            (EXECUTION_CANCELLED, now,
             f"still running when the task moved to {target} by {actor} ({verb})")
            if ends_runs and not move.is_noop
            else None
        )  # fmt: skip
        row, closed = tx.move_task(
            task.id,
            changes,
            satisfy_dependents=target == t.DONE and not move.is_noop,
            close_runs=close_runs,
        )
        new = Task.from_row(row)
        if not move.is_noop and target == t.DONE and human_override:
            tx.insert_audit(
                task_id=task.id,
                actor=actor,
                action=OVERRIDE_ACTION,
                from_status=task.status,
                to_status=target,
                verdict_overridden=task.verification,
                detail=reason,
                now=now,
                tenant=task.tenant_id,
            )
        data: StatusChanged = {"verb": verb}
        if event_data:
            data.update(event_data)
        if not move.is_noop:
            data["from"], data["to"] = task.status, target
            if target == t.IN_PROGRESS and new.assignee_agent_id != actor:
                data["assignee"] = new.assignee_agent_id  # handed to someone (the gate's handback)
            if human_override and target == t.DONE:
                data["human_override"] = True  # also in the audit table; said in the event feed
            if via:
                data["via"] = list(via)
            if closed:
                data["closed_executions"] = [row["id"] for row in closed]
        if reason:
            data["reason"] = reason
        if extra:
            data["fields"] = sorted(key for key in extra if key != "updated_at")
        # A move that moved nothing is an edit: the same payload minus from/to (TaskUpdated).
        kind = EventKind.TASK_UPDATED if move.is_noop else EventKind.STATUS_CHANGED
        if not emit:
            return new
        if renew:  # only on an edit (a move that moved nothing): the holder's, renewing its lease
            edited: TaskUpdated = {"verb": verb, "lease_until": renew["lease_until"]}
            if "reason" in data:
                edited["reason"] = data["reason"]
            if "fields" in data:
                edited["fields"] = data["fields"]
            self._emit(tx, kind, new, actor, now, edited)
            return new
        self._emit(tx, kind, new, actor, now, data)
        return new

    # -- creating -------------------------------------------------------------------------------

    def _validate_new(
        self,
        tx: Tx,
        *,
        title: Any,
        description: Any,
        status: Any,
        priority: Any,
        team_id: Any,
        role: Any,
        kind: Any,
        parent_task_id: Any,
        assignee_runtime: Any,
        source_delegation_id: Any,
        tenant_id: Any,
        scheduled_by: Any,
        now: int,
        budget_usd: Any = None,
        budget_tokens: Any = None,
    ) -> dict[str, Any]:
        if not t.is_status(status) or status not in t.CREATABLE:
            raise invalid_input(
                f"a new task starts in backlog or todo, not {status!r}",
                field="status",
                allowed=sorted(t.CREATABLE),
            )
        if parent_task_id is not None:
            parent_task_id = validate.name(parent_task_id, "parentTaskId")
            if tx.task(parent_task_id) is None:
                raise not_found("parent task", parent_task_id)
        return {
            "title": validate.text(title, "title", limit=validate.TITLE_MAX),
            "description": validate.text(description, "description", required=False),
            "status": status,
            "priority": validate.integer(priority, "priority"),
            "team_id": validate.optional_name(team_id, "teamId"),
            "role": validate.optional_name(role, "role"),
            "kind": validate.name(kind, "kind"),
            "parent_task_id": parent_task_id,
            "assignee_runtime": validate.optional_name(assignee_runtime, "assigneeRuntime"),
            "source_delegation_id": validate.optional_name(
                source_delegation_id, "sourceDelegationId"
            ),
            "tenant_id": validate.optional_name(tenant_id, "tenantId"),
            "scheduled_by": validate.name(scheduled_by, "scheduledBy"),
            "budget_usd": budgets.usd_limit(budget_usd, "budgetUsd"),
            "budget_tokens": budgets.token_limit(budget_tokens, "budgetTokens"),
            "created_at": now,
            "updated_at": now,
            "holders": [],
        }

    def _cap_violations(
        self, tx: Tx, new_tasks: Sequence[caps.NewTask], now: int
    ) -> list[dict[str, Any]]:
        """The capped create path (`caps.py`) for tasks about to be created together, with the
        counts read from this transaction."""
        reads = caps.CapReads(
            agent_roots_since=lambda since: {
                creator: count
                for creator, count in tx.root_creators_since(since).items()
                if is_agent(creator)
            },
            ancestor_count=lambda parent: len(self._validated_ancestors(tx, parent)),
            live_children=tx.live_children,
        )
        return caps.cap_violations(new_tasks, self.config, now, reads)

    def _enforce_caps(self, tx: Tx, parent_task_id: str | None, now: int) -> None:
        """The caps for one new task: the first violation, as the refusal."""
        violations = self._cap_violations(tx, [("new", parent_task_id, False)], now)
        if violations:
            raise caps.create_refusal(violations)

    def _insert_task(
        self, tx: Tx, values: dict[str, Any], depends_on: Sequence[str], actor: str, now: int
    ) -> Task:
        values = {**values, "id": tx.next_id("tasks", TASK_ID_PREFIX), "status_since": now}
        row = tx.insert_task(values)
        task_id = row["id"]
        for blocker in depends_on:
            if blocker == task_id:
                raise BoardError(
                    Reason.DEPENDENCY_CYCLE,
                    f"{task_id} would depend on itself (its own id, given before it existed): "
                    "it could never become ready",
                    id=task_id,
                    dependsOn=blocker,
                    cycle=[task_id, task_id],
                )
            blocker_row = tx.task(blocker)
            if blocker_row is None:
                raise not_found("dependency", blocker)
            if blocker_row["status"] == t.CANCELLED:
                raise cancelled_blocker("a new task", blocker)
            tx.insert_dependency(task_id, blocker, now, values.get("tenant_id"))
        if depends_on:
            unmet = tx.count_unmet_dependencies(task_id)
            if unmet:
                row = tx.update_task(task_id, {"unmet_deps": unmet})
        task = Task.from_row(row)
        created: TaskCreated = {"status": task.status, "depends_on": list(depends_on)}
        self._emit(tx, EventKind.TASK_CREATED, task, actor, now, created)
        return task

    def create_task(
        self,
        title: str,
        *,
        description: str | None = None,
        status: str = t.TODO,
        priority: int = 0,
        team_id: str | None = None,
        role: str | None = None,
        kind: str = "code",
        parent_task_id: str | None = None,
        depends_on: Iterable[str] = (),
        assignee_runtime: str | None = None,
        source_delegation_id: str | None = None,
        tenant_id: str | None = None,
        scheduled_by: str = "manual",
        actor: str = OPERATOR,
        capped: bool | None = None,
        budget_usd: float | None = None,
        budget_tokens: int | None = None,
        seed_route: str | None = None,
    ) -> Task:
        """File a task (todo by default, or backlog). An identified agent's create is capped
        (`actors.is_agent(actor)`; `capped` overrides that, for tests and tools): depth,
        live-children and root-rate ceilings apply in the same transaction, so racing creators
        cannot overshoot them. Operators' creates are not capped; only the board's config
        (`BoardConfig`, `KANBAN_MAX_DEPTH`...) raises the ceilings.

        `seed_route` marks a seed 003 client's create (`POST /api/board`), whose `status` may be
        any of the seven: the task is filed in the status it reaches from todo through legal
        moves (`lifecycle.SEED_CREATE_PATHS`; in progress means held by the creator under a
        lease, blocked records `seed_block_reason`), one row and one `task_created` event. An
        agent's create never lands in done (builder is not judge)."""
        actor = validate.name(actor, "actor")
        if seed_route is not None:
            seed_route = validate.name(seed_route, "seedRoute")
            if status == t.DONE and is_agent(actor):
                raise BoardError(
                    Reason.NOT_ASSIGNEE,
                    f"cannot create a task in done as {actor}: an agent's task reaches done "
                    "by another agent's approve, or an operator's move",
                    current=t.TODO,
                    requested=t.DONE,
                )
        capped = is_agent(actor) if capped is None else validate.flag(capped, "capped")
        if not isinstance(depends_on, (list, tuple, set, frozenset)):  # a str would be its letters
            raise invalid_input("dependsOn must be a list of task ids", field="dependsOn")
        blockers = [validate.name(blocker, "dependsOn") for blocker in depends_on]
        if capped and parent_task_id is not None:
            _import_models_before_the_turn()  # the depth cap validates the ancestor chain

        path = SEED_CREATE_PATHS.get(status, ()) if seed_route is not None else ()

        def work(tx: Tx) -> Task:
            now = self.now()
            values = self._validate_new(
                tx,
                title=title,
                description=description,
                status=t.TODO if path else status,
                priority=priority,
                team_id=team_id,
                role=role,
                kind=kind,
                parent_task_id=parent_task_id,
                assignee_runtime=assignee_runtime,
                source_delegation_id=source_delegation_id,
                tenant_id=tenant_id,
                scheduled_by=scheduled_by,
                now=now,
                budget_usd=budget_usd,
                budget_tokens=budget_tokens,
            )
            if capped:
                self._enforce_caps(tx, values["parent_task_id"], now)
            if path:
                values = self._seed_arrival(values, path, actor, str(seed_route), now)
            return self._insert_task(tx, values, list(dict.fromkeys(blockers)), actor, now)

        return self.store.write(work)

    def _seed_arrival(
        self, values: dict[str, Any], path: Sequence[str], actor: str, route: str, now: int
    ) -> dict[str, Any]:
        """A new task's columns once it has made the legal moves of `path` from todo (each
        checked by `plan_move`, as if made one by one): what a seed client's create in that
        status files, in one insert."""
        passing = Task(
            id="(new)",
            **{name: value for name, value in values.items() if name in _TASK_FIELDS},
        )
        changes: dict[str, Any] = {}
        for step in path:
            reason = seed_block_reason(actor, route) if step == t.BLOCKED else None
            move = plan_move(
                passing, step, actor=actor, now=now, lease_ms=self.config.lease_ms, reason=reason
            )
            changes |= move.changes
            passing = replace(passing, **move.changes)
        return {**values, **changes, "updated_at": now}

    def create_plan(
        self, items: Sequence[PlanItem], *, actor: str = OPERATOR, capped: bool | None = None
    ) -> dict[str, Task]:
        """Create a whole plan in one transaction, or nothing: items refer to each other by key.
        An anonymous plan: its keys are not recorded, so creating it again creates it again
        (`apply_plan` names the plan and finds its tasks instead). Returns key -> new task."""
        applied = self._apply_plan(items, None, actor=actor, capped=capped, update=False)
        return applied.tasks

    def apply_plan(
        self,
        items: Sequence[PlanItem],
        *,
        plan: str,
        actor: str = OPERATOR,
        capped: bool | None = None,
        update: bool = False,
    ) -> AppliedPlan:
        """Apply plan `plan` in one transaction, or nothing. Each item's key is recorded on its
        task, unique per plan: items already on the board are found, not created again (two
        appliers racing create each task once), and only the rest is created. An item that
        differs from its task refuses the plan (`invalid_input`, one `differs` problem each, as
        `plans.lint` reports them) unless `update`, which changes what is still safe to change
        (`plan_match`): the title and description of a task nobody claimed, and dependencies
        that close no cycle; any other difference still refuses it.

        The plan must be acyclic (tasks are created in topological order). References that are
        neither keys nor tasks on the board are refused all at once (`unknown_key` problems). An
        identified agent's plan is capped like its single creates (`capped` overrides): every
        new task that would break a ceiling is named by key in one `cap_exceeded` refusal."""
        plan = validate.name(plan, "plan")
        update = validate.flag(update, "update")
        return self._apply_plan(items, plan, actor=actor, capped=capped, update=update)

    def compare_plan(self, items: Sequence[PlanItem], *, plan: str) -> Comparison:
        """Which of plan `plan`'s items are on the board and how each differs from its task,
        read in one snapshot: what `apply_plan` would find (and `plan lint` reports)."""
        plan = validate.name(plan, "plan")
        self._check_plan_items(items)
        return self.store.read(lambda tx: compare(tx, items, plan))

    def plan_problems(
        self,
        items: Sequence[PlanItem],
        *,
        plan: str | None,
        actor: str = OPERATOR,
        update: bool = False,
    ) -> list[dict[str, Any]]:
        """What `apply_plan` by `actor` would refuse beyond the plan's own shape and its
        differences, read in one snapshot as problems (`plan lint` reports them): links onto
        cancelled tasks, links an agent may not make (onto another agent's task), and for an
        agent the create caps its new tasks would break (kind `cap`, as apply's violations)."""
        actor = validate.name(actor, "actor")
        plan = validate.optional_name(plan, "plan")
        update = validate.flag(update, "update")
        self._check_plan_items(items)
        capped = is_agent(actor)
        if capped:
            _import_models_before_the_turn()  # the depth cap validates ancestor chains

        def work(tx: Tx) -> list[dict[str, Any]]:
            comparison = compare(tx, items, plan) if plan else Comparison("")
            found = cancelled_links(tx, items, comparison, update)
            found += held_links(comparison, actor, update)
            if capped:
                on_board = {key: task.id for key, task in comparison.matched.items()}
                parents = {item.key: item.parent for item in items}
                new_tasks = caps.plan_tasks(plan_order(items), parents, on_board)
                found += caps.problems(self._cap_violations(tx, new_tasks, self.now()))
            return found

        return self.store.read(work)

    @staticmethod
    def _check_plan_items(items: Sequence[PlanItem]) -> None:
        if not isinstance(items, (list, tuple)) or not all(
            isinstance(item, PlanItem) for item in items
        ):
            raise invalid_input("a plan is a list of PlanItem", field="items")
        for item in items:  # the references, before any of them is looked up or hashed
            plan_key(item.key)
            if not isinstance(item.depends_on, (list, tuple)):
                raise invalid_input(f"{item.key}.depends_on must be a list", field="depends_on")
            for ref in item.depends_on:
                validate.identifier(ref, f"{item.key}.depends_on")
            validate.optional_identifier(item.parent, f"{item.key}.parent")
        keys = [item.key for item in items]
        if len(set(keys)) != len(keys):
            raise invalid_input(
                "duplicate plan keys", keys=sorted({k for k in keys if keys.count(k) > 1})
            )

    def _apply_plan(
        self,
        items: Sequence[PlanItem],
        plan_name: str | None,
        *,
        actor: str,
        capped: bool | None,
        update: bool,
    ) -> AppliedPlan:
        actor = validate.name(actor, "actor")
        self._check_plan_items(items)
        capped = is_agent(actor) if capped is None else validate.flag(capped, "capped")
        if capped:
            _import_models_before_the_turn()  # the depth cap validates ancestor chains
        by_key = {item.key: item for item in items}
        parents = {item.key: item.parent for item in items}
        order = plan_order(items)

        def work(tx: Tx) -> AppliedPlan:
            now = self.now()
            comparison = compare(tx, items, plan_name) if plan_name else Comparison("")
            blocking = comparison.blocking(update)
            if blocking:
                raise differs_refusal(blocking)
            matched = comparison.matched
            unknown = [
                unknown_reference(item.key, field, ref)
                for item in items
                for field, refs in (("depends_on", item.depends_on), ("parent", (item.parent,)))
                for ref in dict.fromkeys(refs)
                if ref is not None and ref not in by_key and tx.task(ref) is None
            ]
            if unknown:
                raise plan_problems_refusal(Reason.INVALID_INPUT, unknown)
            cancelled = cancelled_links(tx, items, comparison, update)
            if cancelled:
                raise plan_problems_refusal(Reason.INVALID_STATE, cancelled)
            not_held = held_links(comparison, actor, update)
            if not_held:
                raise plan_problems_refusal(Reason.NOT_ASSIGNEE, not_held)
            fresh = [key for key in order if key not in matched]
            if capped:
                new_tasks = caps.plan_tasks(order, parents, {k: v.id for k, v in matched.items()})
                violations = self._cap_violations(tx, new_tasks, now)
                if violations:
                    raise caps.plan_refusal(violations)

            created: dict[str, Task] = {}

            def resolve(ref: str) -> str:
                if ref in created:
                    return created[ref].id
                return matched[ref].id if ref in matched else ref

            for key in fresh:
                item = by_key[key]
                parent = resolve(item.parent) if item.parent else None
                values = self._validate_new(
                    tx,
                    title=item.title,
                    description=item.description,
                    status=item.status,
                    priority=item.priority,
                    team_id=item.team_id,
                    role=item.role,
                    kind=item.kind,
                    parent_task_id=parent,
                    assignee_runtime=None,
                    source_delegation_id=None,
                    tenant_id=None,
                    scheduled_by="plan",
                    now=now,
                    budget_usd=item.budget_usd,
                    budget_tokens=item.budget_tokens,
                )
                if plan_name:
                    values |= {"plan_name": plan_name, "plan_key": key}
                blockers = [resolve(ref) for ref in dict.fromkeys(item.depends_on)]
                created[key] = self._insert_task(tx, values, blockers, actor, now)
            updates = comparison.updates() if update else []
            changed = self._plan_updates(tx, updates, resolve, actor, now)
            tasks = {
                item.key: created.get(item.key) or changed.get(item.key) or matched[item.key]
                for item in items
            }
            return AppliedPlan(
                plan_name=plan_name,
                tasks=tasks,
                created=[key for key in tasks if key in created],
                existing=[key for key in tasks if key in matched],
                updated=updates,
            )

        return self.store.write(work)

    def _plan_updates(
        self,
        tx: Tx,
        updates: Sequence[Difference],
        resolve: Callable[[str], str],
        actor: str,
        now: int,
    ) -> dict[str, Task]:
        """`apply_plan --update`: the safe differences written, one event per change (a link
        re-checked for a cycle against the board as this transaction leaves it). Returns the
        changed tasks by key."""
        changed: dict[str, Task] = {}
        edits: dict[str, dict[str, Any]] = {}
        for difference in updates:
            if difference.field != "depends_on":
                edits.setdefault(difference.key, {"id": difference.task_id})[difference.field] = (
                    difference.plan
                )
                continue
            blocker = difference.blocker or resolve(str(difference.plan))
            if self._link(tx, self._load(tx, difference.task_id), blocker, actor, now):
                changed[difference.key] = self._load(tx, difference.task_id)
        for key, edit in edits.items():
            task_id = edit.pop("id")
            task = changed[key] = Task.from_row(
                tx.update_task(task_id, {**edit, "updated_at": now})
            )
            edited: TaskUpdated = {"verb": "plan_update", "fields": sorted(edit)}
            self._emit(tx, EventKind.TASK_UPDATED, task, actor, now, edited)
        return changed

    # -- reading --------------------------------------------------------------------------------

    def get_task(self, task_id: str) -> Task:
        return self.store.read(lambda tx: self._load(tx, task_id))

    def find_task(self, task_id: str) -> Task | None:
        task_id = validate.identifier(task_id, "id")
        row = self.store.read(lambda tx: tx.task(task_id))
        return Task.from_row(row) if row is not None else None

    @staticmethod
    def _list_filter(
        status: str | None,
        team_id: str | None,
        assignee: str | None,
        role: str | None,
        include_dropped: bool,
        ready: bool,
    ) -> dict[str, Any]:
        """A task list's filters, checked: the keyword arguments of the store's list reads."""
        checked = {
            "team_id": validate.optional_name(team_id, "teamId"),
            "assignee": validate.optional_name(assignee, "assignee"),
            "role": validate.optional_name(role, "role"),
            "include_dropped": validate.flag(include_dropped, "includeDropped"),
            "ready": validate.flag(ready, "ready"),
        }
        if status is not None and not t.is_status(status):
            raise invalid_input(f"unknown status {status!r}", allowed=list(t.STATUSES))
        return {"status": status, **checked}

    def list_tasks(
        self,
        *,
        status: str | None = None,
        team_id: str | None = None,
        assignee: str | None = None,
        role: str | None = None,
        include_dropped: bool = False,
        ready: bool = False,
        limit: int | None = None,
    ) -> list[Task]:
        """Tasks, newest change first; `ready=True` gives the claimable ones in claim order.
        `limit` keeps the first ones of that order (for pages, see `task_page`)."""
        where = self._list_filter(status, team_id, assignee, role, include_dropped, ready)
        limit = validate.optional_integer(limit, "limit", minimum=1)
        rows = self.store.read(lambda tx: tx.list_tasks(**where, limit=limit))
        return Task.from_rows(rows)

    def task_page(
        self,
        *,
        status: str | None = None,
        team_id: str | None = None,
        assignee: str | None = None,
        role: str | None = None,
        include_dropped: bool = False,
        ready: bool = False,
        cursor: str | None = None,
        limit: int = PAGE_DEFAULT,
    ) -> TaskPage:
        """One page of a task list in creation order, newest first, after `cursor` (a previous
        page's `next_cursor`; None for the first page). Stable under concurrent writes: a walk
        sees every task that stayed in the list all along exactly once (boardlib/paging.py)."""
        where = self._list_filter(status, team_id, assignee, role, include_dropped, ready)
        size = validate.integer(limit, "limit", minimum=1)
        before = None if cursor is None else seq_of(cursor)
        rows = self.store.read(
            lambda tx: tx.list_tasks(
                **where, limit=rows_to_read(size), page=True, before_seq=before
            )
        )
        more = len(rows) > size
        rows = rows[:size]
        return TaskPage(Task.from_rows(rows), cursor_after(rows[-1]["seq"]) if more else None)

    def task_documents(
        self,
        *,
        status: str | None = None,
        team_id: str | None = None,
        assignee: str | None = None,
        role: str | None = None,
        include_dropped: bool = False,
        ready: bool = False,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> TaskDocuments:
        """A task list as JSON documents written by the database, and the board version it was
        read at, in one snapshot: the whole list in `list_tasks`'s order, or, when a cursor or
        a limit is given, one page as `task_page` walks them."""
        where = self._list_filter(status, team_id, assignee, role, include_dropped, ready)
        paged = cursor is not None or limit is not None
        size = validate.optional_integer(limit, "limit", minimum=1)
        if paged and size is None:
            size = PAGE_DEFAULT
        before = None if cursor is None else seq_of(cursor)

        def work(tx: Tx) -> tuple[list[Row], str]:
            rows = tx.task_documents(
                **where, limit=None if size is None else rows_to_read(size), page=paged,
                before_seq=before,
            )  # fmt: skip
            return rows, tx.list_version()

        rows, version = self.store.read(work)
        more = size is not None and len(rows) > size
        if more:
            rows = rows[:size]
        return TaskDocuments(
            [row[1] for row in rows],
            cursor_after(rows[-1][0]) if more else None,
            paged,
            version,
        )

    def list_version(self) -> str:
        """The board's version for its lists: it changes whenever any task changes (every task
        write appends an event), so an unchanged version means every list reads the same."""
        return self.store.read(lambda tx: tx.list_version())

    def ready_tasks(self, *, team_id: str | None = None, role: str | None = None) -> list[Task]:
        return self.list_tasks(ready=True, team_id=team_id, role=role)

    def search(self, text: str, *, include_dropped: bool = False, limit: int = 200) -> list[Task]:
        """Tasks whose id, title or description holds `text`, ignoring case: the filter's
        match (a not-found refusal points here with the id as typed, `task-7`); that exact id
        first, then newest change first."""
        query = validate.text(text, "text", limit=validate.NAME_MAX)
        include_dropped = validate.flag(include_dropped, "includeDropped")
        limit = validate.integer(limit, "limit", minimum=1)
        rows = self.store.read(
            lambda tx: tx.list_tasks(text=query, include_dropped=include_dropped, limit=limit)
        )
        return Task.from_rows(rows)

    def all_tasks(self) -> list[Task]:
        """Every task, dropped included, in creation order: the TUI's snapshot."""
        return Task.from_rows(self.store.read(lambda tx: tx.all_tasks()))

    def snapshot(self) -> tuple[list[Task], int]:
        """Every task (as `all_tasks`) and the event cursor they are current to, read in one
        transaction: where a live view starts before it follows `changes_since`."""

        def work(tx: Tx) -> tuple[list[Task], int]:
            return Task.from_rows(tx.all_tasks()), tx.last_event_seq()

        return self.store.read(work)

    def changes_since(self, seq: int, *, limit: int = 500) -> tuple[list[Event], list[Task], int]:
        """What changed after event cursor `seq`, in one snapshot: up to `limit` events, the current
        rows of the tasks they name plus those tasks' direct dependents (a move to done changes a
        dependent's unmet-dependency count without an event of its own), and the new cursor.
        Costs one indexed range read when nothing happened, so a live view polls it freely."""
        since = validate.integer(seq, "since", minimum=0)
        limit = validate.integer(limit, "limit", minimum=1)

        def work(tx: Tx) -> tuple[list[Event], list[Task], int]:
            events = [Event.from_row(row) for row in tx.events(since=since, limit=limit)]
            named = list(dict.fromkeys(e.task_id for e in events if e.task_id is not None))
            touched = dict.fromkeys(named)
            for task_id in named:
                touched.update(dict.fromkeys(row["id"] for row in tx.dependents(task_id)))
            tasks = Task.from_rows(tx.tasks_by_id(list(touched)))
            return events, tasks, events[-1].seq if events else since

        return self.store.read(work)

    def find_tasks(self, search: TaskSearch, *, limit: int = 50) -> list[Task]:
        """Up to `limit` tasks a view's filter matches, in any column, newest first: the store
        searches (a year of finished work is not read to find one task)."""
        if not isinstance(search, TaskSearch):
            raise invalid_input("search must be a TaskSearch", field="search")
        limit = validate.integer(limit, "limit", minimum=1)
        return Task.from_rows(self.store.read(lambda tx: tx.search_tasks(search, limit)))

    def tasks_by_id_prefix(self, prefix: str, *, limit: int = 50) -> list[Task]:
        """Up to `limit` tasks whose id starts with `prefix` (any case), the unfinished first and
        each part newest first: what a shell offers when a person completes a task id."""
        start = validate.text(prefix, "prefix", limit=validate.NAME_MAX, required=False) or ""
        limit = validate.integer(limit, "limit", minimum=1)
        return Task.from_rows(self.store.read(lambda tx: tx.tasks_by_id_prefix(start, limit)))

    def live_view(
        self,
        search: TaskSearch | None = None,
        *,
        since: int | None = None,
        rematch: bool = False,
        pages: Sequence[PageRequest] = (),
        anchors: Mapping[str, FinishedKey] | None = None,
        limit: int = 500,
        page_size: int = PAGE_SIZE,
        changes: bool = True,
    ) -> ViewRead:
        """A live view's read, in one snapshot (`boardlib.columns`). With `since` None: every
        unfinished task, each finished column's first page and counts, and the event cursor.
        With a cursor: what changed since it (as `changes_since`), which of those rows `search`
        matches, every unfinished task's match too after a new search (`rematch`), the pages
        asked for, and each finished column a change touched re-counted, with the row its
        window's first key (`anchors`) is at now. More than `limit` events: `overflow`.
        `changes=False` reads no changes (a paused view still scrolls and filters)."""
        search = search if search is not None else TaskSearch()
        if not isinstance(search, TaskSearch):
            raise invalid_input("search must be a TaskSearch", field="search")
        if since is not None:
            since = validate.integer(since, "since", minimum=0)
        limit = validate.integer(limit, "limit", minimum=1)
        page_size = validate.integer(page_size, "pageSize", minimum=1)
        rematch = validate.flag(rematch, "rematch")
        changes = validate.flag(changes, "changes")
        if not isinstance(pages, (list, tuple)):
            raise invalid_input("pages must be a list of PageRequest", field="pages")
        if anchors is not None and not (
            isinstance(anchors, Mapping)
            and all(
                isinstance(status, str)
                and isinstance(key, tuple)
                and len(key) == 2
                and all(type(part) is int for part in key)
                for status, key in anchors.items()
            )
        ):
            raise invalid_input(
                "anchors maps a finished column to its window's first key (two integers)",
                field="anchors",
            )
        for request in pages:
            if not isinstance(request, PageRequest) or not (
                request.status in FINISHED or (request.status is None and request.around)
            ):
                raise invalid_input("a page is a PageRequest of a finished column", field="pages")
        return self.store.read(
            lambda tx: read_view(
                tx,
                search,
                since=since,
                rematch=rematch,
                pages=pages,
                anchors=anchors or {},
                limit=limit,
                page_size=page_size,
                changes=changes,
            )
        )

    def status_counts(self) -> dict[str, int]:
        counts = self.store.read(lambda tx: tx.status_counts())
        return {status: counts.get(status, 0) for status in t.STATUSES}

    def comments(self, task_id: str) -> list[Comment]:
        return self.store.read(
            lambda tx: (
                self._load(tx, task_id),
                [Comment.from_row(r) for r in tx.comments(task_id)],
            )
        )[1]

    def _validated_ancestors(self, tx: Tx, task_id: str) -> list[Ancestor]:
        rows = tx.ancestors(task_id)
        if not rows:  # most tasks: no need to import the checker (pydantic, 0.15 s the first time)
            return []
        from .models import AncestorRow  # raw recursive rows are checked, not trusted

        chain = []
        for row in rows:
            checked = AncestorRow.model_validate(dict(row))
            chain.append(
                Ancestor(
                    id=checked.id,
                    parent_task_id=checked.parent_task_id,
                    title=checked.title,
                    status=checked.status,
                )
            )
        return chain

    def ancestors(self, task_id: str) -> list[Ancestor]:
        """The parent chain, nearest parent first."""

        def work(tx: Tx) -> list[Ancestor]:
            self._load(tx, task_id)
            return self._validated_ancestors(tx, task_id)

        return self.store.read(work)

    def dependencies(self, task_id: str) -> list[LinkedTask]:
        def work(tx: Tx) -> list[LinkedTask]:
            self._load(tx, task_id)
            return [LinkedTask.from_row(row) for row in tx.dependencies(task_id)]

        return self.store.read(work)

    def dependents(self, task_id: str) -> list[LinkedTask]:
        def work(tx: Tx) -> list[LinkedTask]:
            self._load(tx, task_id)
            return [LinkedTask.from_row(row) for row in tx.dependents(task_id)]

        return self.store.read(work)

    def executions(self, task_id: str) -> list[Execution]:
        def work(tx: Tx) -> list[Execution]:
            self._load(tx, task_id)
            return [Execution.from_row(row) for row in tx.executions(task_id)]

        return self.store.read(work)

    def get_execution(self, execution_id: str) -> Execution:
        execution_id = validate.identifier(execution_id, "executionId")
        row = self.store.read(lambda tx: tx.execution(execution_id))
        if row is None:
            raise not_found("execution", execution_id)
        return Execution.from_row(row)

    def workspaces(self, task_id: str) -> list[Workspace]:
        task_id = validate.identifier(task_id, "id")
        return [Workspace.from_row(r) for r in self.store.read(lambda tx: tx.workspaces(task_id))]

    def view(self, task_id: str) -> TaskView:
        """One task with its comments, parent chain, dependencies both ways, executions and
        workspaces, since when its verification gate judges it (if it does) and the landing of
        it under way (if one is), read in one snapshot."""
        from .attention import gate_since, landing_of

        def work(tx: Tx) -> TaskView:
            task = self._load(tx, task_id)
            decided = None
            if task.status == t.DONE and task.landed_commit is None:  # only then may one stand
                decided = wont_land(task, [AuditEntry.from_row(row) for row in tx.audit(task_id)])
            return TaskView(
                task=task,
                comments=[Comment.from_row(r) for r in tx.comments(task_id)],
                ancestors=self._validated_ancestors(tx, task_id),
                dependencies=[LinkedTask.from_row(r) for r in tx.dependencies(task_id)],
                dependents=[LinkedTask.from_row(r) for r in tx.dependents(task_id)],
                executions=[Execution.from_row(r) for r in tx.executions(task_id)],
                workspaces=[Workspace.from_row(r) for r in tx.workspaces(task_id)],
                verifying_since=gate_since(task, tx.gate_entry(task.id), self.now()),
                wont_land=decided,
                landing=landing_of(tx.land_queue_entry_of_task(task_id), self.now(), task.title),
            )

        return self.store.read(work)

    def events(
        self, *, since: int = 0, task_id: str | None = None, limit: int = 1000
    ) -> list[Event]:
        """Events after cursor `since`, oldest first: follow the board by passing the last seq."""
        since = validate.integer(since, "since", minimum=0)
        task_id = validate.optional_identifier(task_id, "taskId")
        limit = validate.integer(limit, "limit", minimum=1)
        rows = self.store.read(lambda tx: tx.events(since=since, task_id=task_id, limit=limit))
        return [Event.from_row(row) for row in rows]

    def recent_events(self, *, task_id: str | None = None, limit: int = 50) -> list[Event]:
        """The newest events (of one task, if given), newest first: what a person reads to learn
        what just happened (the TUI's activity pane, a task's history)."""
        task_id = validate.optional_identifier(task_id, "taskId")
        limit = validate.integer(limit, "limit", minimum=1)
        rows = self.store.read(lambda tx: tx.recent_events(task_id=task_id, limit=limit))
        return [Event.from_row(row) for row in rows]

    def last_event_seq(self) -> int:
        """The newest event's cursor (0 on an empty log): where a follower that only wants what
        happens from now on starts."""
        return self.store.read(lambda tx: tx.last_event_seq())

    def newest_event_if_ahead(self, seq: int) -> int | None:
        """The newest event's seq when `seq` is above it and names no event (a cursor another
        board handed out: this one was re-created or restored since), else None. An event the
        log holds above a store's safe horizon (Postgres, several writers) is not ahead."""
        seq = validate.integer(seq, "seq", minimum=0)

        def look(tx: Tx) -> int | None:
            newest = tx.last_event_seq()
            return newest if seq > newest and not tx.events_at([seq]) else None

        return self.store.read(look)

    def audit(self, task_id: str | None = None) -> list[AuditEntry]:
        task_id = validate.optional_identifier(task_id, "taskId")
        return [AuditEntry.from_row(r) for r in self.store.read(lambda tx: tx.audit(task_id))]

    def change_token(self) -> int:
        """A cheap "has anything changed since I last asked": equal tokens mean nothing new for a
        live view (see `Store.change_token`). Ask it before reading, so no commit slips between."""
        return self.store.change_token()

    def data_version(self) -> int:
        """The former name of `change_token`, for callers written when the board was SQLite only."""
        return self.store.change_token()

    def schema_is_newer(self) -> bool:
        """Whether this file was written by a newer kanban than this code: it can still be read,
        but nothing here may write to it (a writable open refuses it). A live view checks this to
        open read-only and say so, instead of failing every write."""
        from .store.schema import SCHEMA_VERSION

        return self.store.read(lambda tx: tx.schema_version()) > SCHEMA_VERSION

    def overridden_task_ids(self) -> set[str]:
        """Tasks a person moved to done over the verdict (`OVERRIDE_ACTION` audit rows): a
        board view marks them, since the override is otherwise invisible on the task itself."""
        return set(self.marked_task_ids().overridden)

    def wont_land_task_ids(self) -> set[str]:
        """Done tasks whose work an operator decided won't land, the decision still standing
        (`wontland.wont_land`): a board view marks their cards, as the row does not say it."""
        return set(self.marked_task_ids().wont_land)

    def marked_task_ids(self) -> Marks:
        """Both marks of a board view, read together: one read of the audit rows of both
        actions (through its index on action, migration 11), and the won't-land tasks read in
        batches, not a task and its audit per decision."""

        def work(tx: Tx) -> Marks:
            overridden: set[str] = set()
            decided: dict[str, list[AuditEntry]] = {}
            for row in tx.audit_of((OVERRIDE_ACTION, ABANDON_ACTION)):
                if row["action"] == OVERRIDE_ACTION:
                    overridden.add(row["task_id"])
                else:  # `wont_land` reads only these of a task's rows, oldest first
                    decided.setdefault(row["task_id"], []).append(AuditEntry.from_row(row))
            found = set()
            ids = sorted(decided)
            for start in range(0, len(ids), MARKED_BATCH):
                for row in tx.tasks_by_id(ids[start : start + MARKED_BATCH]):
                    if row["status"] != t.DONE or row["landed_commit"] is not None:
                        continue
                    if wont_land(Task.from_row(row), decided[row["id"]]) is not None:
                        found.add(row["id"])
            return Marks(frozenset(overridden), frozenset(found))

        return self.store.read(work)

    def explain(self, task_id: str, *, role: str | None = None) -> Explanation:
        """Why `task_id` is or is not claimable right now (by an agent of `role`, if given):
        `explain.explain_task` over the task and its unmet dependencies, read together."""

        def work(tx: Tx) -> Explanation:
            task = self._load(tx, task_id)
            unmet = [
                LinkedTask.from_row(row)
                for row in tx.dependencies(task_id)
                if row["status"] != t.DONE
            ]
            return explain_task(task, unmet, self.now(), role)

        return self.store.read(work)

    def explain_idle(self, *, role: str | None = None, agent: str | None = None) -> IdleExplanation:
        """What claim-next would find for `role` now (`explain.explain_idle`), and what `agent`
        holds already. An agent asks before or after an empty claim; either way it is true."""
        role = validate.optional_name(role, "role")
        agent = validate.optional_name(agent, "agent")

        def work(tx: Tx) -> IdleExplanation:
            now = self.now()
            todo = Task.from_rows(tx.list_tasks(status=t.TODO))
            held = Task.from_rows(tx.list_tasks(status=t.IN_PROGRESS))
            return explain_idle(todo, held, now, role, agent)

        return self.store.read(work)

    def held_by(self, agent: str) -> list[str]:
        """The ids of the tasks `agent` holds under a live lease, oldest change first: what an
        empty claim-next names (`heldByYou`), so an agent that lost its context takes its own
        work back up instead of waiting while the lease runs out."""
        agent = validate.name(agent, "agent")
        now = self.now()
        rows = self.store.read(lambda tx: tx.list_tasks(status=t.IN_PROGRESS, assignee=agent))
        return [task.id for task in held_live(Task.from_rows(rows), agent, now)]

    def preview_claim_next(
        self,
        *,
        role: str | None = None,
        respect_deps: bool = True,
        team_id: str | None = None,
        agent: str | None = None,
    ) -> ClaimPreview:
        """What `claim_next` would do now for `role` (and `team_id`), found in one read-only
        snapshot and written nothing (`explain.preview_claim`): the task it would claim, the
        lapsed leases it would release first (reported, not released) and the idle view. The
        diagnosis of `claim-next --explain`/`--dry-run`; claiming stays `claim_next`."""
        role = validate.optional_name(role, "role")
        team = validate.optional_name(team_id, "teamId")
        respect_deps = validate.flag(respect_deps, "respectDeps")
        agent = validate.optional_name(agent, "agent")

        def work(tx: Tx) -> ClaimPreview:
            now = self.now()
            picked = tx.best_ready(role, respect_deps, team)
            pick = (Task.from_row(picked), int(picked["seq"])) if picked is not None else None
            held = [
                (Task.from_row(row), int(row["seq"]))
                for row in tx.list_tasks(status=t.IN_PROGRESS, include_dropped=True)
            ]
            todo = Task.from_rows(tx.list_tasks(status=t.TODO))
            return preview_claim(
                pick,
                held,
                todo,
                now,
                role=role,
                team_id=team,
                respect_deps=respect_deps,
                agent=agent,
            )

        return self.store.read(work)

    def inbox(self, judge: str | None = None) -> Inbox:
        """What needs a person now, oldest first (`attention.collect`): the same list on every
        surface. Reads only what the indexes find, so it costs the same on a 100,000-task board.
        `judge`: read for that agent, leaving out what it built and may not judge
        (`attention.judged_by`), so a reviewer taking the oldest item never loops on its own."""
        from .attention import collect, judged_by

        judge = None if judge is None else validate.name(judge, "agent")

        def work(tx: Tx) -> Inbox:
            now = self.now()
            gates: list[GateRun] = []
            landing: list[LandingRun] = []
            items = collect(tx, now, self.config, gates, landing)
            kept = items if judge is None else [i for i in items if judged_by(i, judge)]
            gates.sort(key=lambda gate: (gate.since, gate.task_id))
            return Inbox(
                items=kept,
                count=len(kept),
                now=now,
                left_out=len(items) - len(kept),
                verifying=gates,
                landing=landing,
            )

        return self.store.read(work)

    # -- claiming -------------------------------------------------------------------------------

    def _reclaim_expired_leases(self, tx: Tx, now: int) -> tuple[bool, bool]:
        """Seed 002's expired-lease reclaim, for a claim that came back empty, one batch of them
        (`RELEASE_BATCH`): whether it released any (then the claim is worth another try, inside
        the same transaction) and whether more may be left (a full batch: the caller's next
        transaction releases the next, as a claim statement claims nothing while any is left)."""
        released, _ = release_expired_leases(
            tx, now, self.config.event_ttl_seconds, limit=RELEASE_BATCH
        )
        return bool(released), len(released) == RELEASE_BATCH

    def _release_in_batches(
        self, now: int | None, *, best_effort: bool = False
    ) -> tuple[list[Task], list[str]]:
        """Release the expired leases a batch per shared write (`RELEASE_BATCH`), so a fleet's
        leases lapsing together do not hold SQLite's one write lock past other writers' patience
        (`busy`); each lease is still released once, by whichever pass takes it. `now` None: the
        time of each batch. `best_effort` stops when the write lock is taken (`try_write`)."""
        released: list[Task] = []
        timed_out: list[str] = []
        ttl = self.config.event_ttl_seconds

        def batch(tx: Tx) -> tuple[list[Task], list[str]]:
            at = self.now() if now is None else now
            return release_expired_leases(tx, at, ttl, limit=RELEASE_BATCH)

        while True:
            if best_effort:
                done = self.store.try_write(batch, shared=True)
                if done is None:
                    break
            else:
                done = self.store.write(batch, shared=True)
            released += done[0]
            timed_out += done[1]
            if len(done[0]) < RELEASE_BATCH:
                break
        return released, timed_out

    def _lease_ms(self, lease_ms: int | None) -> int:
        if lease_ms is None:
            return self.config.lease_ms
        return validate.integer(lease_ms, "leaseMs", minimum=1, maximum=MAX_LEASE_MS)

    def _claim_event(self, verb: str) -> RowEvent:
        """The `task_claimed` event a claim statement writes with itself: the payload's epoch is
        the claimed row's new one, the rest as declared. Made once per verb."""
        made = self._claim_events.get(verb)
        if made is None:
            made = self._claim_events[verb] = self._new_claim_event(verb)
        return made

    def _new_claim_event(self, verb: str) -> RowEvent:
        template: TaskClaimed = {"epoch": 0, "verb": verb}
        data = wire(template)
        epoch_key = wire_key("epoch")
        del data[epoch_key]
        return RowEvent(str(EventKind.TASK_CLAIMED), data, self.config.event_ttl_seconds, epoch_key)

    def claim(
        self,
        task_id: str,
        agent: str,
        *,
        runtime: str | None = None,
        lease_ms: int | None = None,
    ) -> Task:
        """Claim one todo task by id (the atomic guarded UPDATE). Losing a race is `conflict`:
        data, never to be retried. Unmet dependencies refuse the claim."""
        task_id = validate.identifier(task_id, "id")
        agent = validate.name(agent, "agent")
        runtime = validate.optional_name(runtime, "runtime")
        lease = self._lease_ms(lease_ms)

        event = self._claim_event("claim")
        now = self.now()
        task = self.store.one_statement(
            lambda tx: tx.claim_by_id(task_id, agent, runtime, now, now + lease, event)
        )
        if task is not None:  # the common case: one statement, its event written with it
            return task

        def work(tx: Tx) -> Task | None:
            now = self.now()
            task = tx.claim_by_id(task_id, agent, runtime, now, now + lease, event)
            if task is None:
                released, more = self._reclaim_expired_leases(tx, now)
                if released:
                    task = tx.claim_by_id(task_id, agent, runtime, now, now + lease, event)
                if task is None and more:
                    return None  # the next batch, in a transaction of its own
            if task is None:
                current = self._load(tx, task_id)
                if current.status == t.TODO and not current.dropped and current.unmet_deps:
                    unmet = [r["id"] for r in tx.dependencies(task_id) if r["status"] != t.DONE]
                    raise BoardError(
                        Reason.UNMET_DEPENDENCIES,
                        f"task {task_id} has unmet dependencies: {', '.join(unmet)}",
                        id=task_id,
                        unmet=unmet,
                    )
                raise claim_conflict(current, agent)
            return task

        while (claimed := self.store.write(work, shared=True)) is None:
            pass
        return claimed

    def claim_next(
        self,
        agent: str,
        *,
        role: str | None = None,
        respect_deps: bool = True,
        runtime: str | None = None,
        lease_ms: int | None = None,
        team_id: str | None = None,
    ) -> Task | None:
        """Claim the best ready task for `role` (role-less tasks suit every role), of `team_id`
        when given, or None. Expired leases are released in the same transaction, so an abandoned
        task is claimable the moment its lease lapses: the claim statement claims nothing while
        any lease has expired, and the reclaim runs then (and on an empty board) instead of before
        every claim, a batch per transaction (`RELEASE_BATCH`) while more are left."""
        agent = validate.name(agent, "agent")
        role = validate.optional_name(role, "role")
        team = validate.optional_name(team_id, "teamId")
        runtime = validate.optional_name(runtime, "runtime")
        respect_deps = validate.flag(respect_deps, "respectDeps")
        lease = self._lease_ms(lease_ms)

        event = self._claim_event("claim_next")

        def claim(tx: Tx, now: int) -> Task | None:
            # The hot path: keep Python work inside the write lock to the statement itself.
            return tx.claim_best_ready(
                agent, role, respect_deps, runtime, now, now + lease, team, event
            )

        def claim_once(tx: Tx) -> tuple[Task | None, bool]:
            task = claim(tx, now)
            return task, task is None and tx.claim_held_back(now)

        now = self.now()
        task, held_back = self.store.one_statement(claim_once)
        if task is not None or not held_back:
            return task

        def release_then_claim(tx: Tx) -> tuple[Task | None, bool]:
            now = self.now()
            task = claim(tx, now)
            if task is not None:
                return task, False
            released, more = self._reclaim_expired_leases(tx, now)
            if released:
                task = claim(tx, now)
            return task, task is None and more

        while True:  # a batch of expired leases per transaction, until one is claimed or none left
            task, more = self.store.write(release_then_claim, shared=True)
            if not more:
                return task

    # -- the holder's verbs (lease-protected) ---------------------------------------------------

    def heartbeat(self, task_id: str, agent: str, *, epoch: int | None = None) -> Task:
        """Renew the lease. Liveness has its own columns: `updated_at` does not move, so a heartbeat
        never reorders a list."""
        return self._renew(task_id, agent, epoch=epoch, verb="heartbeat", lease_ms=None, note=None)

    def log_progress(
        self, task_id: str, agent: str, note: str, *, epoch: int | None = None
    ) -> Task:
        """Record a progress note as the holder's comment and renew the lease."""
        text = validate.text(note, "note")
        return self._renew(
            task_id, agent, epoch=epoch, verb="log_progress", lease_ms=None, note=text
        )

    def extend_lease(
        self,
        task_id: str,
        agent: str,
        *,
        minutes: float | None = None,
        epoch: int | None = None,
    ) -> Task:
        """Set the lease to now + `minutes` (default: the board's lease), for a long quiet step."""
        lease_ms = None
        if minutes is not None:
            minutes = validate.positive_number(minutes, "minutes", maximum=MAX_LEASE_MINUTES)
            lease_ms = minutes_to_ms(minutes)
        return self._renew(
            task_id, agent, epoch=epoch, verb="extend_lease", lease_ms=lease_ms, note=None
        )

    def _renew(
        self,
        task_id: str,
        agent: str,
        *,
        epoch: int | None,
        verb: str,
        lease_ms: int | None,
        note: str | None,
    ) -> Task:
        agent = validate.name(agent, "agent")
        if note is None:
            renewed = self._renew_at_once(task_id, agent, epoch, verb, lease_ms)
            if renewed is not None:
                return renewed

        def work(tx: Tx) -> Task:
            now = self.now()
            task = self._load(tx, task_id)
            self._check_holder(tx, task, verb.replace("_", "-"), agent, epoch, now)
            renewed_columns = renewal(now, lease_ms or self.config.lease_ms)
            lease_until = renewed_columns["lease_until"]
            new = Task.from_row(tx.update_task(task_id, renewed_columns))
            if note is not None:
                tx.insert_comment(task_id, note, "agent", agent, now, task.tenant_id)
            if note is not None:
                logged: ProgressLogged = {"lease_until": lease_until, "verb": verb}
                self._emit(tx, EventKind.PROGRESS_LOGGED, new, agent, now, logged)
            else:
                renewed: LeaseRenewed = {"lease_until": lease_until, "verb": verb}
                self._emit(tx, EventKind.LEASE_RENEWED, new, agent, now, renewed)
            return new

        return self.store.write(work)

    def _renew_at_once(
        self, task_id: str, agent: str, epoch: int | None, verb: str, lease_ms: int | None
    ) -> Task | None:
        """The usual renewal as one guarded statement (one round trip on Postgres, beside the
        claims rather than in the board's write turn); None when the guard did not hold or the
        input needs judging, and the full check then says why."""
        try:
            validate.identifier(task_id, "id")
            if epoch is not None:
                validate.integer(epoch, "epoch", minimum=0)
        except BoardError:
            return None
        now = self.now()
        lease_until = now + (lease_ms or self.config.lease_ms)
        renewed: LeaseRenewed = {"lease_until": lease_until, "verb": verb}
        event = RowEvent(str(EventKind.LEASE_RENEWED), wire(renewed), self.config.event_ttl_seconds)
        return self.store.one_statement(
            lambda tx: tx.renew_lease(task_id, agent, epoch, now, lease_until, event)
        )

    def _beat(self, task: Task, who: str | None, now: int) -> dict[str, int]:
        """A call of the task's holder is its sign of life (seed 000 counts the holder's calls,
        seed 003 has no heartbeat route): the columns that renew its lease for as long as its
        claim or last renewal gave it, for the call's own write to carry. Nothing for anyone
        else's call, a task not in progress, a lease already run out (the release pass takes
        it: a late call revives nothing), or a lease that runs longer already (an extended one
        is not cut short)."""
        if who is None or task.status != t.IN_PROGRESS or task.assignee_agent_id != who:
            return {}
        if task.lease_expired(now):
            return {}
        span = self.config.lease_ms
        if task.lease_until is not None and task.last_heartbeat_at is not None:
            # the length its claim or last renewal gave it: a holder that chose a short lease
            # keeps it short (its liveness is what it asked for), a seed client's is the board's
            span = max(1, task.lease_until - task.last_heartbeat_at)
        columns = renewal(now, span)
        if task.lease_until is not None and task.lease_until >= columns["lease_until"]:
            return {}
        return columns

    def _beat_in(self, tx: Tx, task: Task, who: str | None, now: int) -> tuple[Task, int | None]:
        """`_beat` written in this transaction, for a call that writes no task row of its own
        (a comment, a run's start): the task as it is then, and its new lease's end, if any."""
        renew = self._beat(task, who, now)
        if not renew:
            return task, None
        return Task.from_row(tx.update_task(task.id, renew)), renew["lease_until"]

    def complete(
        self,
        task_id: str,
        agent: str,
        *,
        summary: str | None = None,
        epoch: int | None = None,
        gate_ms: int | None = None,
        beat_ms: int | None = None,
    ) -> Task:
        """The holder is done building: in_review with no owner, awaiting a different judge.
        `gate_ms`: this process's verification gate judges it first, for at most that long; the
        move and the gate's start are one write, so no reader sees it waiting on a person.
        `beat_ms`: the gate beats that often (`gate_beat`)."""
        agent = validate.name(agent, "agent")
        text = validate.text(summary, "summary", required=False)
        if gate_ms is not None:
            gate_ms = validate.integer(gate_ms, "gateMs", minimum=1)
        if beat_ms is not None:
            beat_ms = validate.integer(beat_ms, "beatMs", minimum=1)

        def work(tx: Tx) -> Task:
            now = self.now()
            task = self._load(tx, task_id)
            self._check_holder(tx, task, "complete", agent, epoch, now)
            new = self._apply_move(tx, task, t.IN_REVIEW, actor=agent, now=now, verb="complete")
            if text:
                tx.insert_comment(task_id, text, "agent", agent, now, task.tenant_id)
            if gate_ms is not None:
                self._gate_started(tx, new, now, gate_ms, beat_ms)
            return new

        return self.store.write(work)

    def _gate_started(
        self, tx: Tx, task: Task, now: int, gate_ms: int, beat_ms: int | None
    ) -> None:
        started: VerificationStarted = {"holder": process_token(), "until": now + gate_ms}
        if beat_ms is not None:
            started["beat_ms"] = beat_ms
        self._emit(tx, EventKind.VERIFICATION_STARTED, task, GATE, now, started)

    def gate_started(self, task_id: str, *, gate_ms: int, beat_ms: int | None = None) -> Task:
        """The gate judges an in_review task again (one interrupted before its verdict): until it
        ends, the task waits on it, not on a person (`attention.gate_since`)."""
        gate_ms = validate.integer(gate_ms, "gateMs", minimum=1)
        if beat_ms is not None:
            beat_ms = validate.integer(beat_ms, "beatMs", minimum=1)

        def work(tx: Tx) -> Task:
            now = self.now()
            task = self._load(tx, task_id)
            if task.status != t.IN_REVIEW:
                raise wrong_state("run the verification gate", task.status, t.IN_REVIEW, id=task_id)
            self._gate_started(tx, task, now, gate_ms, beat_ms)
            return task

        return self.store.write(work)

    def gate_beat(self, task_id: str) -> bool:
        """The running gate of an in_review task says it lives (its `last_heartbeat_at`, no
        event): one small write a beat, so a reader on another machine, which cannot see the
        gate's process, takes it for dead three beats after it stops (`attention.gate_since`),
        not at its bound. False, writing nothing, once the gate's start is no longer the task's
        newest move or gate event (its verdict is in)."""

        def work(tx: Tx) -> bool:
            task = self._load(tx, task_id)
            entry = tx.gate_entry(task_id)
            if task.status != t.IN_REVIEW or entry is None:
                return False
            if entry["kind"] != EventKind.VERIFICATION_STARTED:
                return False
            tx.update_task(task_id, {"last_heartbeat_at": self.now()})
            return True

        return self.store.write(work)

    def gate_stopped(self, task_id: str, reason: str) -> None:
        """The gate this process started ended without a verdict (an error): the task in review
        waits on a person again at once, not at the gate's time bound. Nothing when the gate's
        start is no longer the task's newest move or gate event."""
        said = validate.text(reason, "reason") or "the gate stopped without a verdict"

        def work(tx: Tx) -> None:
            task = self._load(tx, task_id)  # a task id checked before any SQL sees it
            entry = tx.gate_entry(task_id)
            if entry is None or entry["kind"] != EventKind.VERIFICATION_STARTED:
                return
            stopped: VerificationStopped = {"reason": said}
            self._emit(tx, EventKind.VERIFICATION_STOPPED, task, GATE, self.now(), stopped)

        self.store.write(work)

    def block(self, task_id: str, agent: str, reason: str, *, epoch: int | None = None) -> Task:
        """The holder cannot go on: blocked with a reason, lease cleared."""
        agent = validate.name(agent, "agent")
        text = validate.text(reason, "reason")

        def work(tx: Tx) -> Task:
            now = self.now()
            task = self._load(tx, task_id)
            self._check_holder(tx, task, "block", agent, epoch, now)
            return self._apply_move(
                tx, task, t.BLOCKED, actor=agent, now=now, verb="block", reason=text
            )

        return self.store.write(work)

    def release(self, task_id: str, agent: str, *, epoch: int | None = None) -> Task:
        """The holder gives the task back to todo for someone else."""
        agent = validate.name(agent, "agent")

        def work(tx: Tx) -> Task:
            now = self.now()
            task = self._load(tx, task_id)
            self._check_holder(tx, task, "release", agent, epoch, now)
            return self._apply_move(tx, task, t.TODO, actor=agent, now=now, verb="release")

        return self.store.write(work)

    def transfer(
        self, task_id: str, from_agent: str, to_agent: str, *, epoch: int | None = None
    ) -> Task:
        """Hand an in-progress task to another agent with a fresh lease and a new epoch."""
        from_agent = validate.name(from_agent, "agent")
        to_agent = validate.caller_name(to_agent, "to")
        if to_agent == from_agent:
            raise invalid_input("cannot transfer a task to yourself", field="to")

        def work(tx: Tx) -> Task:
            now = self.now()
            task = self._load(tx, task_id)
            self._check_holder(tx, task, "transfer", from_agent, epoch, now)
            closed = tx.close_running_executions(
                task_id, EXECUTION_CANCELLED, now,
                f"still running when {from_agent} transferred the task to {to_agent}",
            )  # fmt: skip
            holders = task.holders if to_agent in task.holders else [*task.holders, to_agent]
            new = Task.from_row(
                tx.update_task(
                    task_id,
                    {
                        "assignee_agent_id": to_agent,
                        "assignee_runtime": None,
                        "holders": holders,
                        "claim_epoch": task.claim_epoch + 1,
                        "lease_until": now + self.config.lease_ms,
                        "last_heartbeat_at": now,
                        "updated_at": now,
                    },
                )
            )
            transferred: TaskTransferred = {
                "to": to_agent, "epoch": new.claim_epoch, "verb": "transfer"
            }  # fmt: skip
            if closed:
                transferred["closed_executions"] = [row["id"] for row in closed]
            self._emit(tx, EventKind.TASK_TRANSFERRED, new, from_agent, now, transferred)
            return new

        return self.store.write(work)

    # -- review ---------------------------------------------------------------------------------

    def _check_reviewer(self, task: Task, verb: str, reviewer: str) -> None:
        if task.status != t.IN_REVIEW:
            raise not_in_review(task, verb)
        if reviewer in task.builders:
            raise BoardError(
                Reason.SELF_REVIEW,
                f"cannot {verb}: {reviewer} worked on {task.id}; another agent must review",
                id=task.id,
                holders=task.holders,
            )

    def approve(self, task_id: str, reviewer: str, *, epoch: int | None = None) -> Task:
        """A different agent judges the work good: done, with a pass verdict recorded. `epoch`
        (the claim epoch of the attempt the reviewer read) refuses a verdict on a later attempt."""
        reviewer = validate.name(reviewer, "agent")
        _import_models_before_the_turn()  # the done-gate and the review read verdicts

        def work(tx: Tx) -> Task:
            now = self.now()
            task = self._load(tx, task_id)
            self._check_reviewer(task, "approve", reviewer)
            check_epoch(task, "approve", epoch)
            if verdict_blocks_done(task.verification):
                raise BoardError(
                    Reason.VERIFICATION_REQUIRED,
                    f"cannot approve {task_id}: its verification verdict is not promotable",
                    id=task_id,
                    verification=task.verification,
                )
            verdict = _with_review(task.verification, reviewer, "approve", now, None, status="pass")
            return self._apply_move(
                tx, task, t.DONE, actor=reviewer, now=now, verb="approve",
                extra={"verification": verdict},
            )  # fmt: skip

        return self.store.write(work)

    def reject(
        self,
        task_id: str,
        reviewer: str,
        reason: str,
        *,
        epoch: int | None = None,
        comments: "Iterable[ReviewNote | dict[str, Any]]" = (),
    ) -> Task:
        """A different agent sends the work back: todo for a fresh attempt, reason as a comment.
        The table has no in_review -> todo, so the reviewer takes the task back (in_progress) and
        releases it (todo) in the same transaction: two legal moves, one event. `comments`: review
        comments anchored to lines (`boardlib.review`), kept in the same transaction."""
        from .review import notes

        reviewer = validate.name(reviewer, "agent")
        text = validate.text(reason, "reason")
        assert text is not None
        anchored = notes(comments)

        def work(tx: Tx) -> Task:
            now = self.now()
            task = self._load(tx, task_id)
            self._check_reviewer(task, "reject", reviewer)
            check_epoch(task, "reject", epoch)
            new = self._apply_move(
                tx, task, t.TODO, actor=reviewer, now=now, verb="reject", reason=text,
                via=(t.IN_PROGRESS,),
            )  # fmt: skip
            tx.insert_comment(task_id, f"rejected: {text}", "agent", reviewer, now, task.tenant_id)
            for note in anchored:
                tx.insert_comment(
                    task_id, note.body, "agent", reviewer, now, task.tenant_id, note.anchor
                )
            return new

        return self.store.write(work)

    # -- the generic, gated move and field edits ------------------------------------------------

    def update_task(
        self,
        task_id: str,
        *,
        status: str | None = None,
        title: str | None = None,
        description: str | None = None,
        priority: int | None = None,
        role: str | None = None,
        team_id: str | None = None,
        kind: str | None = None,
        human_override: bool = False,
        reason: str | None = None,
        actor: str = OPERATOR,
        epoch: int | None = None,
        holder: str | None = None,
        seed_route: str | None = None,
        holder_runtime: str | None = None,
        by_holder: bool = False,
    ) -> Task:
        """Change the status (through the transition table, the done-gate and the agent contract
        of `lifecycle.check_mover`) and/or edit fields, all in one transaction: either everything
        applies or nothing does. `epoch` refuses the move and the edits once the task was
        reclaimed (a same-status move with no edits writes nothing, and is not judged); `holder`
        names who takes an unowned task moved to in_progress (default: the mover), for operators
        and the board's own passes (the gate hands failed work back to its builder), and
        `holder_runtime` the runtime it works in (the builder's, which its complete cleared).
        `seed_route` marks a seed 003 client's request (`PATCH /api/board/:taskId`): a move to
        blocked without a reason then records `lifecycle.seed_block_reason`, naming the actor and
        the route, as the seed (whose body has no reason) expects. Without it a move to blocked
        needs a reason, as on every surface of the board's own.

        A change by the task's holder (the actor, or whoever holds it when `by_holder` says the
        caller is the holder though it names nobody: seed 003's PATCH on a server without
        per-caller tokens) that leaves it in progress renews its lease in the same write
        (`_beat`); a PATCH that changes nothing else writes only that, as a heartbeat."""
        seed_route = validate.optional_name(seed_route, "seedRoute")
        actor = validate.name(actor, "actor")
        holder = validate.optional_name(holder, "holder")
        if holder is not None and is_agent(actor):
            raise invalid_input("only an operator names who takes a task", field="holder")
        holder_runtime = validate.optional_name(holder_runtime, "holderRuntime")
        if holder_runtime is not None and holder is None:
            raise invalid_input("a holder's runtime goes with a holder", field="holderRuntime")
        if epoch is not None:
            epoch = validate.integer(epoch, "epoch", minimum=0)
        edits: dict[str, Any] = {}
        if title is not None:
            edits["title"] = validate.text(title, "title", limit=validate.TITLE_MAX)
        if description is not None:
            edits["description"] = validate.text(description, "description", required=False)
        if priority is not None:
            edits["priority"] = validate.integer(priority, "priority")
        if role is not None:
            edits["role"] = validate.clearable_name(role, "role")
        if team_id is not None:
            edits["team_id"] = validate.clearable_name(team_id, "teamId")
        if kind is not None:
            edits["kind"] = validate.name(kind, "kind")
        if status is None and not edits:
            raise invalid_input("at least one field is required")
        if status == t.DONE:
            _import_models_before_the_turn()  # the done-gate reads the verdict
        if human_override and status != t.DONE:
            raise invalid_input(
                "humanOverride applies only to a move to done", field="humanOverride"
            )
        note = validate.text(reason, "reason", required=False)

        def work(tx: Tx) -> Task:
            now = self.now()
            task = self._load(tx, task_id)
            target = task.status if status is None else status
            check_mover(task, target, actor=actor, now=now, epoch=epoch)
            if edits:  # the epoch holds the edit too, not the move alone
                check_epoch(task, f"edit {task.id}", epoch, actor)
            check_editor(task, edits, actor=actor)
            if "team_id" in edits:
                budgets.check_team_move(tx, task, edits["team_id"], actor)
            self._refuse_move_if_spent(tx, task, target, now)
            reason = note
            if reason is None and seed_route and target == t.BLOCKED != task.status:
                reason = seed_block_reason(actor, seed_route)
            # An override out of blocked passes through the table's steps (lifecycle.OVERRIDE_VIA)
            via = (override_route(task) or ()) if human_override and target != task.status else ()
            beating = task.assignee_agent_id if by_holder else actor
            current = epoch is None or epoch == task.claim_epoch  # a moved-on claim beats nothing
            renew = self._beat(task, beating, now) if target == task.status and current else {}
            if renew and not edits:  # a bare sign of life: the lease alone, as a heartbeat
                new = Task.from_row(tx.update_task(task.id, renew))
                renewed: LeaseRenewed = {"lease_until": renew["lease_until"], "verb": "move"}
                self._emit(tx, EventKind.LEASE_RENEWED, new, beating or actor, now, renewed)
                return new
            return self._apply_move(
                tx, task, target, actor=actor, now=now, verb="move",
                reason=reason, human_override=human_override, extra=edits or None, holder=holder,
                via=via, via_takes=False, holder_runtime=holder_runtime, renew=renew,
            )  # fmt: skip

        return self.store.write(work)

    def move(
        self,
        task_id: str,
        to: str,
        *,
        actor: str = OPERATOR,
        human_override: bool = False,
        reason: str | None = None,
        epoch: int | None = None,
        holder: str | None = None,
        holder_runtime: str | None = None,
    ) -> Task:
        """The generic transition (an operator's drag): the table, the done-gate and the agent
        contract apply (an identified agent moves only a task it holds, never into done)."""
        return self.update_task(
            task_id, status=to, actor=actor, human_override=human_override, reason=reason,
            epoch=epoch, holder=holder, holder_runtime=holder_runtime,
        )  # fmt: skip

    def unblock(
        self,
        task_id: str,
        *,
        note: str | None = None,
        actor: str = OPERATOR,
        epoch: int | None = None,
    ) -> Task:
        """blocked -> todo: released for a fresh claim, the note kept as a comment."""
        actor = validate.name(actor, "actor")
        text = validate.text(note, "note", required=False)

        def work(tx: Tx) -> Task:
            now = self.now()
            task = self._load(tx, task_id)
            if task.status != t.BLOCKED:
                raise wrong_state("unblock", task.status, t.BLOCKED, id=task_id)
            check_mover(task, t.TODO, actor=actor, now=now, epoch=epoch, verb="unblock")
            if budgets.blocked_by_budget(tx, task):
                self._refuse_if_spent(tx, task, now, "unblock {task}")
            new = self._apply_move(
                tx, task, t.TODO, actor=actor, now=now, verb="unblock", reason=text
            )
            if text:
                tx.insert_comment(
                    task_id, f"unblocked: {text}", author_type_of(actor), actor, now, task.tenant_id
                )
            return new

        return self.store.write(work)

    def cancel(self, task_id: str, *, actor: str = OPERATOR, reason: str | None = None) -> Task:
        return self.move(task_id, t.CANCELLED, actor=actor, reason=reason)

    def drop(self, task_id: str, *, actor: str = OPERATOR, epoch: int | None = None) -> Task:
        """Soft-delete: hidden from lists and never claimable, restorable. Actively owned tasks
        cannot be dropped from under their worker."""
        return self._set_dropped(task_id, 1, actor, epoch)

    def restore(self, task_id: str, *, actor: str = OPERATOR, epoch: int | None = None) -> Task:
        """Undo a drop. An agent's restore is held to the live-children ceiling (`caps`), which
        counts dropped children already: dropping never made room for more creates."""
        return self._set_dropped(task_id, 0, actor, epoch)

    def _set_dropped(self, task_id: str, dropped: int, actor: str, epoch: int | None) -> Task:
        actor = validate.name(actor, "actor")

        def work(tx: Tx) -> Task:
            now = self.now()
            task = self._load(tx, task_id)
            check_epoch(task, "drop" if dropped else "restore", epoch)
            if task.dropped == dropped:
                return task
            if dropped and task.status in t.LOCKED:
                allowed = tuple(s for s in t.STATUSES if s not in t.LOCKED)
                raise wrong_state("drop", task.status, allowed, id=task_id)
            parent = task.parent_task_id
            live = task.status not in t.TERMINAL
            if not dropped and live and parent is not None and is_agent(actor):
                refusal = caps.restore_violation(
                    task_id, parent, tx.live_children(parent), self.config
                )
                if refusal is not None:
                    raise refusal
            new = Task.from_row(tx.update_task(task_id, {"dropped": dropped, "updated_at": now}))
            if dropped:
                nothing_dropped: TaskDropped = {}
                self._emit(tx, EventKind.TASK_DROPPED, new, actor, now, nothing_dropped)
            else:
                nothing_restored: TaskRestored = {}
                self._emit(tx, EventKind.TASK_RESTORED, new, actor, now, nothing_restored)
            return new

        return self.store.write(work)

    # -- dependencies ---------------------------------------------------------------------------

    def link_dependency(self, task_id: str, depends_on: str, *, actor: str = OPERATOR) -> Task:
        """`task_id` will not be ready until `depends_on` is done. Re-linking is harmless; a link
        that would close a cycle is refused by a reachability check in the same transaction as the
        insert, so two writers racing A->B and B->A cannot both win."""
        return self.link_dependencies(task_id, [depends_on], actor=actor)

    def link_dependencies(
        self, task_id: str, depends_on: Sequence[str], *, actor: str = OPERATOR
    ) -> Task:
        """`link_dependency` for each of `depends_on`, in one transaction: every link, or none
        (a refusal of any of them writes nothing)."""
        actor = validate.name(actor, "actor")
        if isinstance(depends_on, str) or not isinstance(depends_on, (list, tuple)):
            raise invalid_input("dependsOn must be a list of task ids", field="dependsOn")
        if not depends_on:
            raise invalid_input("name at least one task to depend on", field="dependsOn")
        blockers = list(dict.fromkeys(validate.identifier(b, "dependsOn") for b in depends_on))

        def work(tx: Tx) -> Task:
            now = self.now()
            task = self._load(tx, task_id)
            check_worker(task, LINK_VERB, actor=actor, planning=True)
            for blocker in blockers:
                self._link(tx, task, blocker, actor, now)
            return self._load(tx, task_id)

        return self.store.write(work)

    def _link(self, tx: Tx, task: Task, depends_on: str, actor: str, now: int) -> bool:
        """One link `task -> depends_on` inside the caller's transaction (`link_dependency`, a
        plan's update): refused on a cycle or a cancelled blocker; False when already linked."""
        task_id = task.id
        blocker_row = tx.task(depends_on)
        if blocker_row is None:
            raise not_found("dependency", depends_on)
        blocker = Task.from_row(blocker_row)
        if tx.depends_transitively(depends_on, task_id):
            cycle = cycle_path(task_id, depends_on, tx.dependency_edges_from(depends_on))
            raise BoardError(
                Reason.DEPENDENCY_CYCLE,
                closing_a_cycle(task_id, depends_on, cycle),
                id=task_id,
                dependsOn=depends_on,
                cycle=cycle,
            )
        if not tx.insert_dependency(task_id, depends_on, now, task.tenant_id):
            return False  # already linked
        if blocker.status == t.CANCELLED:  # a new link only: re-linking stays harmless
            raise cancelled_blocker(task_id, depends_on)
        if blocker.status != t.DONE:
            tx.add_unmet_dependency(task_id, 1)
        linked: DepLinked = {"depends_on": depends_on}
        self._emit(tx, EventKind.DEP_LINKED, self._load(tx, task_id), actor, now, linked)
        return True

    def unlink_dependency(self, task_id: str, depends_on: str, *, actor: str = OPERATOR) -> Task:
        actor = validate.name(actor, "actor")
        depends_on = validate.identifier(depends_on, "dependsOn")

        def work(tx: Tx) -> Task:
            now = self.now()
            task = self._load(tx, task_id)
            check_worker(task, "unlink a dependency of", actor=actor, planning=True)
            blocker_row = tx.task(depends_on)
            if blocker_row is None or not tx.delete_dependency(task_id, depends_on):
                raise not_found("dependency", depends_on)
            if blocker_row["status"] != t.DONE:
                tx.add_unmet_dependency(task_id, -1)
            new = self._load(tx, task_id)
            unlinked: DepUnlinked = {"depends_on": depends_on}
            self._emit(tx, EventKind.DEP_UNLINKED, new, actor, now, unlinked)
            return new

        return self.store.write(work)

    def cancel_dependents(self, task_id: str, *, actor: str = OPERATOR) -> list[Task]:
        """Cancel the still-pending (todo/backlog) transitive dependents of a failed blocker in one
        statement; dependents already claimed, done or cancelled are left alone."""
        actor = validate.name(actor, "actor")

        def work(tx: Tx) -> list[Task]:
            now = self.now()
            blocker = self._load(tx, task_id)
            if is_agent(actor) and blocker.status not in (t.BLOCKED, t.CANCELLED):
                raise BoardError(
                    Reason.INVALID_STATE,
                    f"cannot cancel the dependents of {task_id} as {actor}: it is "
                    f"{blocker.status}, not failed; an agent cancels the chain of a blocked or "
                    "cancelled task only (an operator may cut any)",
                    id=task_id,
                    current=blocker.status,
                )
            cancelled: list[Task] = []
            for left, row in tx.cancel_pending_dependents(task_id, now):
                task = Task.from_row(row)
                changed: StatusChanged = {
                    "from": left, "to": t.CANCELLED, "reason": "blocker_failed",
                    "blocker": task_id, "verb": "cancel_dependents",
                }  # fmt: skip
                self._emit(tx, EventKind.STATUS_CHANGED, task, actor, now, changed)
                cancelled.append(task)
            return cancelled

        return self.store.write(work)

    # -- comments -------------------------------------------------------------------------------

    def add_comment(
        self,
        task_id: str,
        body: str,
        *,
        author_agent_id: str | None = None,
        author_type: str = "agent",
        path: str | None = None,
        line: int | None = None,
        side: str | None = None,
        line_text: str | None = None,
    ) -> Comment:
        """A comment on the task; with `path` (and `line`, `side`, `line_text`) a review comment
        anchored to a line of its diff (checked by `boardlib.review.anchor`)."""
        from .review import anchor

        text = validate.text(body, "body")
        assert text is not None
        author = validate.optional_name(author_agent_id, "authorAgentId")
        if author_type not in AUTHOR_TYPES:
            raise invalid_input(
                f"authorType must be one of {', '.join(AUTHOR_TYPES)}", field="authorType"
            )
        where = anchor(path, line, side, line_text)

        def work(tx: Tx) -> Comment:
            now = self.now()
            task = self._load(tx, task_id)
            comment = Comment.from_row(
                tx.insert_comment(task_id, text, author_type, author, now, task.tenant_id, where)
            )
            task, lease_until = self._beat_in(tx, task, author, now)  # the holder's note
            added: CommentAdded = {"comment_id": comment.id}
            if lease_until is not None:
                added["lease_until"] = lease_until
            if where is not None:
                added["path"] = where.path
                if where.line is not None:
                    added["line"] = where.line
            actor = comment_actor(author, author_type)  # the operator's note names the operator
            self._emit(tx, EventKind.COMMENT_ADDED, task, actor, now, added)
            return comment

        return self.store.write(work)

    # -- executions -----------------------------------------------------------------------------

    def open_execution(
        self,
        task_id: str,
        executor_type: str,
        *,
        agent: str | None = None,
        epoch: int | None = None,
        workspace_id: str | None = None,
        run_reason: str | None = None,
        before_commit: str | None = None,
    ) -> Execution:
        """Open a run in the ledger: only for a claimed (in-progress) task, by its holder, and
        only while no budget over it is spent (`budget_exceeded`, naming the budget: the task's
        own or an ancestor's, its team's or the board's daily one). The check reads the spend
        in this transaction, which every close also writes in its own: serialised, so no run
        starts once a budget is spent."""
        executor = validate.name(executor_type, "executorType", limit=validate.EXECUTOR_MAX)
        opener = validate.optional_name(agent, "agent")
        reason = validate.text(run_reason, "runReason", limit=2000, required=False)
        before = validate.text(
            before_commit, "beforeCommit", limit=validate.NAME_MAX, required=False
        )

        def work(tx: Tx) -> Execution:
            now = self.now()
            task = self._load(tx, task_id)
            holder = opener or task.assignee_agent_id or ""
            if budgets.blocked_by_budget(tx, task):
                self._refuse_if_spent(
                    tx, task, now, "start a run on {task}"
                )  # say why, not just "blocked"
            self._check_holder(tx, task, "open an execution", holder, epoch, now)
            self._refuse_if_spent(tx, task, now, "start a run on {task}", budgets.HOLDER_NEXT)
            if workspace_id is not None:
                found = tx.workspace(workspace_id) if isinstance(workspace_id, str) else None
                if found is None or found["task_id"] != task_id:
                    raise invalid_input(
                        f"workspaceId names no workspace of {task_id}", field="workspaceId"
                    )
            execution = Execution.from_row(
                tx.insert_execution(
                    {
                        "task_id": task_id,
                        "workspace_id": workspace_id,
                        "executor_type": executor,
                        "agent_id": holder,
                        "claim_epoch": task.claim_epoch,
                        "status": EXECUTION_RUNNING,
                        "claimed_at": now,
                        "started_at": now,
                        "before_commit": before,
                        "run_reason": reason,
                        "tenant_id": task.tenant_id,
                        "created_at": now,
                    }
                )
            )
            task, lease_until = self._beat_in(tx, task, holder, now)  # opening a run
            started: ExecutionStarted = {"execution_id": execution.id}
            if lease_until is not None:
                started["lease_until"] = lease_until
            self._emit(tx, EventKind.EXECUTION_STARTED, task, holder, now, started)
            return execution

        return self.store.write(work)

    def close_execution(
        self,
        execution_id: str,
        status: str,
        *,
        agent: str,
        epoch: int | None = None,
        summary: str | None = None,
        error: str | None = None,
        after_commit: str | None = None,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        cache_read: int | None = None,
        cache_write: int | None = None,
        cost_usd: float | None = None,
        late_cost: bool = True,
    ) -> ClosedExecution:
        """Close a running execution once, with its outcome and ledger; the task's cost becomes
        the sum of its executions, and the run's cost and tokens are added to the spend of the
        task's subtree and ancestors and to today's daily spend, in the same transaction. A
        closed (or unknown) execution is `not_found`.

        When a budget over the task is spent once this run is counted, the cost is recorded all
        the same and the task moves to blocked (`budget_exceeded: ...` as the reason, its lease
        ended): the result's `budget_exceeded` names the budget.

        `agent` is who closes it. An identified agent must be the run's holder: the task's
        current assignee, in progress under a live lease (`not_assignee`, `invalid_state`,
        `stale_claim` otherwise), with `epoch` current when given; so nobody closes another
        agent's run or rewrites a finished task's cost. Operators may close any running run.

        A run the board closed before its cost was reported takes that report once
        (`_record_late`); `late_cost=False` refuses it as closed, as seed 003's HTTP route does
        (404: nothing closed, no event)."""
        execution_id = validate.identifier(execution_id, "executionId")  # as get_execution
        closer = validate.name(agent, "agent")
        if epoch is not None:
            epoch = validate.integer(epoch, "epoch", minimum=0)
        if status not in EXECUTION_OUTCOMES:
            raise invalid_input(
                f"status must be one of {', '.join(EXECUTION_OUTCOMES)}", field="status"
            )
        changes: dict[str, Any] = {"status": status}
        for name, count in (
            ("input_tokens", input_tokens),
            ("output_tokens", output_tokens),
            ("cache_read", cache_read),
            ("cache_write", cache_write),
        ):
            if count is not None:  # at most a budget's ceiling: sums of them stay 64-bit
                changes[name] = validate.integer(count, name, minimum=0, maximum=TOKENS_MAX)
        if cost_usd is not None:  # the ledger counts micro-dollars in 64 bits: a sane ceiling
            changes["cost_usd"] = budgets.whole_micros(
                validate.number(cost_usd, "costUsd", minimum=0, maximum=USD_MAX)
            )
        for name, text, limit in (
            ("summary", summary, validate.TEXT_MAX),
            ("error", error, validate.TEXT_MAX),
            ("after_commit", after_commit, validate.NAME_MAX),
        ):
            if text is not None:
                changes[name] = validate.text(text, name, limit=limit, required=False)

        def work(tx: Tx) -> ClosedExecution:
            now = self.now()
            existing = tx.execution(execution_id)
            if existing is None:
                raise not_found("execution", execution_id)
            if existing["status"] != EXECUTION_RUNNING:
                if late_cost:
                    late = self._record_late(tx, existing, closer, epoch, changes, now)
                    if late is not None:
                        return late
                held = tx.task(existing["task_id"])
                spent = held and budgets.first_spent(
                    budgets.standings(tx, Task.from_row(held), now)
                )
                raise _closed_already(execution_id, existing, spent or None, late_cost)
            task = self._load(tx, existing["task_id"])
            if is_agent(closer):
                self._check_holder(tx, task, f"close {execution_id}", closer, epoch, now)
                if existing["agent_id"] not in (None, closer):
                    raise BoardError(
                        Reason.NOT_ASSIGNEE,
                        f"cannot close {execution_id}: it is the run of {existing['agent_id']}, "
                        f"not {closer}",
                        id=task.id,
                        execution_id=execution_id,
                        assignee=existing["agent_id"],
                    )
            else:
                check_epoch(task, f"close {execution_id}", epoch)
            row = tx.close_running_execution(execution_id, {**changes, "completed_at": now})
            if row is None:
                raise not_found("execution", execution_id)
            execution = self._count_run(tx, task, row, closer, now)
            spent = budgets.first_spent(budgets.standings(tx, task, now))
            if spent is not None and task.status == t.IN_PROGRESS:
                # The cost is recorded; the work stops here until an operator raises the budget.
                self._apply_move(
                    tx, self._load(tx, task.id), t.BLOCKED, actor=SYSTEM, now=now,
                    verb=budgets.BLOCK_VERB, reason=budgets.blocked_reason(task.id, spent),
                )  # fmt: skip
                execution.budget_exceeded = spent
            return execution

        return self.store.write(work)

    def _count_run(self, tx: Tx, task: Task, row: Row, closer: str, now: int) -> ClosedExecution:
        """A run's ledger counted, once, when it is written: the task's cost (the sum of its runs)
        and tokens, the spend of its subtree and ancestors, today's board and team spend, and
        its `execution_completed` event (`late` when the board had closed it already)."""
        execution = ClosedExecution.from_row(row)
        micros = budgets.to_micros(execution.cost_usd or 0.0)
        tokens = budgets.run_tokens(row)
        tx.update_task(
            task.id, {"cost_usd": tx.execution_cost(task.id), "tokens": task.tokens + tokens}
        )
        if micros or tokens:
            tx.add_subtree_spend(task.id, micros, tokens)
            scopes = budgets.daily_scopes(task.team_id)
            tx.add_daily_spend(scopes, budgets.run_day(row), micros, tokens)
        completed: ExecutionCompleted = {
            "execution_id": execution.id, "status": execution.status,
            "cost_usd": execution.cost_usd, "agent_id": execution.agent_id,
            "team_id": task.team_id, "runtime": execution.executor_type,
        }  # fmt: skip
        if execution.recovery_tombstone:
            completed["late"] = True
        self._emit(tx, EventKind.EXECUTION_COMPLETED, task, closer, now, completed)
        return execution

    def _record_late(
        self, tx: Tx, existing: Row, closer: str, epoch: int | None, changes: dict[str, Any],
        now: int,
    ) -> ClosedExecution | None:  # fmt: skip
        """A closed run's late cost: money spent is spent. A run the board closed (its task left
        in progress, its lease expired) before its holder reported what it cost takes that
        report once: counted in every ledger as a close is, the run staying as it closed (its
        status, its reason) and its task where it is. None: not such a run, or nothing to
        report (the close is refused as closed, `_closed_already`)."""
        ledger = {name: changes[name] for name in EXECUTION_LEDGER if name in changes}
        if not ledger or not existing["recovery_tombstone"]:
            return None
        if any(existing[name] is not None for name in EXECUTION_LEDGER):
            return None  # reported once already
        run_id = existing["id"]
        if is_agent(closer) and existing["agent_id"] not in (None, closer):
            raise BoardError(
                Reason.NOT_ASSIGNEE,
                f"cannot report the cost of {run_id}: it is the run of {existing['agent_id']}, "
                f"not {closer}",
                id=existing["task_id"],
                execution_id=run_id,
                assignee=existing["agent_id"],
            )
        if epoch is not None and epoch != existing["claim_epoch"]:
            raise BoardError(
                Reason.STALE_CLAIM,
                f"cannot report the cost of {run_id}: it ran under claim epoch "
                f"{existing['claim_epoch']}, not {epoch}",
                id=existing["task_id"],
                epoch=epoch,
                current_epoch=existing["claim_epoch"],
            )
        row = tx.record_late_ledger(run_id, ledger)
        if row is None:
            return None
        return self._count_run(tx, self._load(tx, existing["task_id"]), row, closer, now)

    # -- budgets (budgets.py) -------------------------------------------------------------------

    def _refuse_move_if_spent(self, tx: Tx, task: Task, target: str, now: int) -> None:
        """A task a spent budget blocked goes back to work only once no budget over it is."""
        if target in (t.TODO, t.IN_PROGRESS) and budgets.blocked_by_budget(tx, task):
            self._refuse_if_spent(tx, task, now, f"move {{task}} to {target}")

    def _refuse_if_spent(self, tx: Tx, task: Task, now: int, action: str, then: str = "") -> None:
        spent = budgets.first_spent(budgets.standings(tx, task, now))
        if spent is not None:
            raise budgets.refusal(task.id, action, spent, then)

    @staticmethod
    def _check_operator(actor: str, verb: str) -> None:
        if is_agent(actor):
            raise BoardError(
                Reason.OPERATOR_ONLY,
                f"cannot {verb} as {actor}: only an operator sets budgets (agents never raise "
                "them; ask a person)",
                actor=actor,
            )

    def budgets_of(self, task_id: str) -> list[BudgetStanding]:
        """Every budget over a task and what has been spent against it (`budgets.standings`)."""

        def work(tx: Tx) -> list[BudgetStanding]:
            return budgets.standings(tx, self._load(tx, task_id), self.now())

        return self.store.read(work)

    def set_budget(
        self,
        task_id: str,
        *,
        reason: str,
        usd: float | object | None = budgets.KEEP,
        tokens: int | object | None = budgets.KEEP,
        actor: str = OPERATOR,
    ) -> Task:
        """Set, raise, lower or remove (None) a task's budgets; `budgets.KEEP` leaves one as it
        is. Operators only (`operator_only` for an agent). Each change is audited (who, from, to,
        why) and is one `budget_changed` event in the task's history. A task blocked by a spent
        budget stays blocked: unblock it once the budget covers what was spent."""
        actor = validate.name(actor, "actor")
        self._check_operator(actor, "set a budget")
        why = validate.text(reason, "reason", limit=2000)
        changes: dict[str, Any] = {}
        if usd is not budgets.KEEP:
            changes["budget_usd"] = budgets.usd_limit(usd, "usd")
        if tokens is not budgets.KEEP:
            changes["budget_tokens"] = budgets.token_limit(tokens, "tokens")
        if not changes:
            raise invalid_input("name a budget to set: usd and/or tokens")

        def work(tx: Tx) -> Task:
            now = self.now()
            task = self._load(tx, task_id)
            moved = {
                column: value for column, value in changes.items() if getattr(task, column) != value
            }
            if not moved:
                return task
            new = Task.from_row(tx.update_task(task.id, {**moved, "updated_at": now}))
            for column, value in moved.items():
                unit = BUDGET_USD if column == "budget_usd" else BUDGET_TOKENS
                changed: BudgetChanged = {
                    "scope": BUDGET_TASK, "unit": unit, "from": getattr(task, column),
                    "to": value, "reason": why or "",
                }  # fmt: skip
                self._audit_budget(tx, task.id, actor, changed, now, task.tenant_id)
                self._emit(tx, EventKind.BUDGET_CHANGED, new, actor, now, changed)
            return new

        return self.store.write(work)

    def set_daily_budget(
        self,
        *,
        reason: str,
        team_id: str | None = None,
        usd: float | object | None = budgets.KEEP,
        tokens: int | object | None = budgets.KEEP,
        actor: str = OPERATOR,
    ) -> DailyBudget | None:
        """Set or remove (None) the board's daily budget, or a team's with `team_id`: dollars
        and/or tokens per UTC day. Operators only, audited and announced like `set_budget`;
        returns the budget as it now stands (None once both limits are removed)."""
        actor = validate.name(actor, "actor")
        self._check_operator(actor, "set a daily budget")
        why = validate.text(reason, "reason", limit=2000)
        team = validate.optional_name(team_id, "teamId")
        scope = budgets.team_scope(team) if team else BOARD_SCOPE
        wanted: dict[str, Any] = {}
        if usd is not budgets.KEEP:
            wanted["daily_usd"] = budgets.usd_limit(usd, "dailyUsd")
        if tokens is not budgets.KEEP:
            wanted["daily_tokens"] = budgets.token_limit(tokens, "dailyTokens")
        if not wanted:
            raise invalid_input("name a daily budget to set: usd and/or tokens")

        def work(tx: Tx) -> DailyBudget | None:
            now = self.now()
            row = tx.daily_budget(scope)
            before = {
                "daily_usd": row["daily_usd"] if row else None,
                "daily_tokens": row["daily_tokens"] if row else None,
            }
            after = {**before, **wanted}
            if after == before:
                return _daily(row, team)
            stored = tx.put_daily_budget(
                scope, after["daily_usd"], after["daily_tokens"], now, actor
            )
            for column, value in after.items():
                if value == before[column]:
                    continue
                changed: BudgetChanged = {
                    "scope": BUDGET_TEAM_DAILY if team else BUDGET_BOARD_DAILY,
                    "unit": BUDGET_USD if column == "daily_usd" else BUDGET_TOKENS,
                    "from": before[column], "to": value, "reason": why or "",
                }  # fmt: skip
                if team:
                    changed["team_id"] = team
                self._audit_budget(tx, None, actor, changed, now, None)
                self._emit(tx, EventKind.BUDGET_CHANGED, None, actor, now, changed)
            return _daily(stored, team)

        return self.store.write(work)

    def _audit_budget(
        self,
        tx: Tx,
        task_id: str | None,
        actor: str,
        changed: "BudgetChanged",
        now: int,
        tenant: str | None,
    ) -> None:
        tx.insert_audit(
            task_id=task_id, actor=actor, action=budgets.AUDIT_ACTION, from_status=None,
            to_status=None, verdict_overridden=None, detail=budgets.audit_detail(changed),
            now=now, tenant=tenant,
        )  # fmt: skip

    def budget_report(self) -> BudgetReport:
        """Every daily budget with today's spend, and every budgeted task, the most spent first
        (one read; a list cut at 50 said "every budget" and left the rest out)."""

        def work(tx: Tx) -> BudgetReport:
            day = budgets.day_of(self.now())
            rows = tx.budgeted_tasks()
            return BudgetReport(
                day=day,
                daily=budgets.daily_standings(tx.daily_budgets(day), day),
                tasks=budgets.task_standings(rows),
                titles={row["id"]: row["title"] for row in rows},
                statuses={row["id"]: row["status"] for row in rows},
            )

        return self.store.read(work)

    # -- verification ---------------------------------------------------------------------------

    def record_verification(
        self,
        task_id: str,
        verdict_json: str,
        *,
        actor: str = SYSTEM,
        detail: str | None = None,
        expected_status: str | None = None,
    ) -> Task:
        """Store a verdict (validated `VerificationResult` JSON) on a task, audited.
        `expected_status` refuses the write (`invalid_state`) when the task has moved on meanwhile,
        e.g. a reviewer judged it while a slow gate was still running. The gate records its
        verdict and its move together: `record_gate_verdict`."""
        detail = validate.text(detail, "detail", required=False)
        stored, status = self._valid_verdict(verdict_json)

        def work(tx: Tx) -> Task:
            task = self._load(tx, task_id)
            if expected_status is not None and task.status != expected_status:
                raise wrong_state("record a verdict", task.status, expected_status, id=task_id)
            return self._record_verdict(tx, task, stored, status, actor, detail, self.now())

        return self.store.write(work)

    @staticmethod
    def _valid_verdict(verdict_json: str) -> tuple[str, str]:
        """The verdict as stored, and its status; `invalid_input` when it is no verdict."""
        from .models import parse_verdict

        try:
            verdict = parse_verdict(verdict_json)
        except ValueError as error:
            raise invalid_input(f"invalid verification verdict: {error}") from None
        return verdict.dumps(), verdict.status

    def _record_verdict(
        self, tx: Tx, task: Task, stored: str, status: str, actor: str, detail: str | None, now: int
    ) -> Task:
        """A verdict's writes: the task's column, the audit row and one event."""
        new = Task.from_row(tx.update_task(task.id, {"verification": stored, "updated_at": now}))
        tx.insert_audit(
            task_id=task.id, actor=actor, action="verification", from_status=task.status,
            to_status=task.status, verdict_overridden=None, detail=detail or status, now=now,
            tenant=task.tenant_id,
        )  # fmt: skip
        recorded: VerificationRecorded = {"status": status}
        self._emit(tx, EventKind.VERIFICATION_RECORDED, new, actor, now, recorded)
        return new

    def record_gate_verdict(
        self,
        task_id: str,
        verdict_json: str,
        to: str,
        *,
        detail: str | None = None,
        reason: str | None = None,
        holder: str | None = None,
        holder_runtime: str | None = None,
    ) -> tuple[Task, BoardError | None]:
        """The verification gate's verdict on a task in review and the move it decides (`to`:
        done, back to in_progress for `holder` in `holder_runtime`, or blocked with `reason`), in
        one transaction: no reader ever sees the verdict in without the move (a task in review
        with no gate judging it waits on a person: "needs review" rang between two writes). The
        move is judged as `move` judges it (the table, the done-gate reading this verdict, the
        budgets); a move so refused leaves the verdict recorded, the task where it is and nothing
        of the move written: the task and that refusal. `invalid_state`, recording nothing, when
        the task left review meanwhile (a reviewer judged it while the gate ran)."""
        detail = validate.text(detail, "detail", required=False)
        stored, status = self._valid_verdict(verdict_json)

        def work(tx: Tx) -> tuple[Task, BoardError | None]:
            now = self.now()
            task = self._load(tx, task_id)
            if task.status != t.IN_REVIEW:
                raise wrong_state("record a verdict", task.status, t.IN_REVIEW, id=task_id)
            judged = self._record_verdict(tx, task, stored, status, GATE, detail, now)
            try:  # every refusal before the move's first write: a refused move writes nothing
                note = validate.text(reason, "reason", required=False)
                taker = validate.optional_name(holder, "holder")
                runtime = validate.optional_name(holder_runtime, "holderRuntime")
                check_mover(judged, to, actor=GATE, now=now)
                self._refuse_move_if_spent(tx, judged, to, now)
                plan_move(
                    judged, to, actor=GATE, now=now, lease_ms=self.config.lease_ms, reason=note,
                    holder=taker, holder_runtime=runtime,
                )  # fmt: skip
            except BoardError as refusal:
                return judged, refusal
            moved = self._apply_move(
                tx, judged, to, actor=GATE, now=now, verb="move", reason=note, holder=taker,
                holder_runtime=runtime,
            )  # fmt: skip
            return moved, None

        return self.store.write(work)

    # -- workspaces (the worktree subsystem's pointers) ------------------------------------------

    def record_workspace(
        self,
        task_id: str,
        *,
        repo_path: str,
        branch: str,
        worktree_path: str,
        base_commit: str,
        base_ref: str | None = None,
        actor: str = SYSTEM,
    ) -> Workspace:
        """Record a provisioned worktree: a new `active` workspaces row, and the task's
        `worktree_ref`/`branch_ref` pointing at it, in one transaction with one event. The checkout
        itself is the worktree subsystem's business; the board keeps only the pointer."""
        actor = validate.name(actor, "actor")
        values = {
            "repo_path": validate.text(repo_path, "repoPath", limit=4000),
            "branch": validate.text(branch, "branch", limit=validate.NAME_MAX),
            "worktree_path": validate.text(worktree_path, "worktreePath", limit=4000),
            "base_commit": validate.text(base_commit, "baseCommit", limit=validate.NAME_MAX),
            "base_ref": validate.text(base_ref, "baseRef", limit=validate.NAME_MAX, required=False),
        }

        def work(tx: Tx) -> Workspace:
            now = self.now()
            task = self._load(tx, task_id)
            workspace = Workspace.from_row(
                tx.insert_workspace(
                    {
                        **values,
                        "task_id": task_id,
                        "status": "active",
                        "tenant_id": task.tenant_id,
                        "created_at": now,
                        "last_used_at": now,
                        "host": machine_id(),
                    }
                )
            )
            refs = {"worktree_ref": values["worktree_path"], "branch_ref": values["branch"]}
            if (task.worktree_ref, task.branch_ref) != (refs["worktree_ref"], refs["branch_ref"]):
                tx.update_task(task_id, {**refs, "updated_at": now})
            provisioned: WorkspaceProvisioned = {
                "workspace_id": workspace.id, "branch": workspace.branch,
                "worktree_path": workspace.worktree_path, "base_commit": workspace.base_commit,
            }  # fmt: skip
            self._emit(tx, EventKind.WORKSPACE_PROVISIONED, task, actor, now, provisioned)
            return workspace

        return self.store.write(work)

    def update_workspace(
        self,
        workspace_id: str,
        *,
        status: str | None = None,
        actor: str = SYSTEM,
        reason: str | None = None,
        base_commit: str | None = None,
        only_from: str | None = None,
        here: bool = False,
    ) -> Workspace:
        """Move a workspace along its lifecycle (`active`, `archived` on cleanup, `stale` on garbage
        collection) and mark it used now; one event either way, so live views see pauses and
        handoffs too. `base_commit` moves the baseline (a sync with the base branch). `only_from`
        changes it only while in that status, else `conflict` and nothing written (two janitors
        of two machines: one marks it, one event); `here` records this machine as its host (its
        checkout was made again here)."""
        actor = validate.name(actor, "actor")
        baseline = validate.text(base_commit, "baseCommit", limit=validate.NAME_MAX, required=False)
        note = validate.text(reason, "reason", limit=2000, required=False)
        for given in (status, only_from):
            if given is not None and given not in WORKSPACE_STATUSES:
                raise invalid_input(
                    f"workspace status must be one of {', '.join(WORKSPACE_STATUSES)}",
                    field="status",
                )

        def work(tx: Tx) -> Workspace:
            now = self.now()
            row = tx.workspace(workspace_id) if isinstance(workspace_id, str) else None
            if row is None:
                raise not_found("workspace", str(workspace_id))
            before = Workspace.from_row(row)
            task = self._load(tx, before.task_id)
            changes: dict[str, Any] = {"last_used_at": now}
            if status is not None:
                changes["status"] = status
            if baseline is not None:
                changes["base_commit"] = baseline
            if here:
                changes["host"] = machine_id()
            updated = tx.update_workspace(workspace_id, changes, only_from=only_from)
            if updated is None:  # only with `only_from`: another writer moved it first
                raise BoardError(
                    Reason.CONFLICT,
                    f"workspace {workspace_id} is no longer {only_from}",
                    id=workspace_id,
                )
            workspace = Workspace.from_row(updated)
            data: WorkspaceUpdated = {"workspace_id": workspace_id, "status": workspace.status}
            if workspace.status != before.status:
                data["from"] = before.status
            if baseline is not None and baseline != before.base_commit:
                data["base_commit"] = baseline
            if note:
                data["reason"] = note
            self._emit(tx, EventKind.WORKSPACE_UPDATED, task, actor, now, data)
            return workspace

        return self.store.write(work)

    def workspaces_with_status(self, status: str) -> list[Workspace]:
        """Every workspace in one lifecycle status, oldest first (garbage collection reads them)."""
        if status not in WORKSPACE_STATUSES:
            raise invalid_input(
                f"workspace status must be one of {', '.join(WORKSPACE_STATUSES)}",
                field="status",
            )
        rows = self.store.read(lambda tx: tx.workspaces_with_status(status))
        return [Workspace.from_row(row) for row in rows]

    # -- the flow figures (stats.py) ------------------------------------------------------------

    def stats(
        self,
        *,
        since: str | int | None = None,
        team_id: str | None = None,
        by_runtime: bool = False,
    ) -> "Stats":
        """The flow figures of the last `since` (`24h`, `7d`..., or milliseconds; default
        `stats.DEFAULT_WINDOW`), of one team if given: throughput, cycle and review times, lease
        expiries, gate verdicts, cost, agents (`by_runtime`: a runtime's session names folded
        under its name, `stats.by_runtime`). One query per figure, all in one snapshot
        (`stats.compute`). The module loads here, not at import: its fourteen record classes
        would add ~10% to every CLI call's start-up."""
        from . import stats

        since = stats.DEFAULT_WINDOW if since is None else since
        window = (
            validate.integer(since, "since", minimum=1, maximum=stats.MAX_WINDOW_MS)
            if isinstance(since, int)
            else stats.parse_window(since)
        )
        team = validate.optional_name(team_id, "teamId")
        figures = self.store.read(
            lambda tx: stats.compute(tx, now=self.now(), window_ms=window, team=team)
        )
        return stats.by_runtime(figures) if by_runtime else figures

    # -- reconciliation (recovery.py) -----------------------------------------------------------

    def reconcile_orphans(self, *, best_effort: bool = False) -> list[Task]:
        """Orphan reconciliation (seed 000: once at startup; `recovery.py`): release the tasks
        whose lease expired while nobody watched. Cheap when nothing expired: one read, no lock.
        The release is a shared write, as the stale-task pass's is: servers starting together
        (or beside a long writer) release beside each other, each lease once, and none fails
        `busy` for another's turn at the board. `best_effort` gives up (returning []) when the
        write lock is taken (SQLite's one writer), the file is read-only or the look itself
        stays `busy` (a table locked on the server), so opening a board to read it never waits
        on, or fails for, a writer: the caller's own call says busy."""
        now = self.now()
        try:
            expired = self.store.read(lambda tx: tx.any_lease_expired(now))
        except BoardError as error:
            if not best_effort or error.reason is not Reason.BUSY:
                raise
            return []
        if not expired:
            return []

        return self._release_in_batches(None, best_effort=best_effort)[0]

    def reclaim(self, task_id: str, *, actor: str = OPERATOR) -> Task:
        """Release one task whose lease ran out, now, as the reconciliation pass would (back to
        todo, a new epoch, its runs timed out, one `lease_expired` event). A live lease is
        `invalid_state`: that is the holder's, to be ended with a move if at all."""
        validate.name(actor, "actor")

        def work(tx: Tx) -> Task:
            now = self.now()
            task = self._load(tx, task_id)
            if task.status != t.IN_PROGRESS:
                raise wrong_state("reclaim", task.status, t.IN_PROGRESS, id=task.id)
            if not task.lease_expired(now):
                raise BoardError(
                    Reason.INVALID_STATE,
                    f"cannot reclaim {task.id}: the lease of {task.assignee_agent_id} runs until "
                    f"{moment(task.lease_until or now, now)} (move it to end the claim)",
                    id=task.id,
                    lease_until=task.lease_until,
                )
            released, _ = release_expired_leases(
                tx, now, self.config.event_ttl_seconds, only=task.id
            )
            return released[0]

        return self.store.write(work)

    def prune_events(
        self, before: str | int, archive: Path, *, next_free_name: bool = False
    ) -> "PruneReport":
        """Archive events older than `before` (`90d`, `2025-01-31`, or epoch ms) to a new file
        and delete them from the board, within `boardlib.archive`'s rules: never a task, never
        an event a consumer (`boardlib.watch`) has not read, never a live task's history.
        `next_free_name`: when `archive` is taken, the next free numbered name beside it."""
        from .archive import cut_off, prune_events

        if isinstance(before, bool) or not isinstance(before, (str, int)):
            raise invalid_input("before must be an age, a date or epoch milliseconds")
        before_ms = (
            validate.integer(before, "before", minimum=0)
            if isinstance(before, int)
            else cut_off(before, self.now())
        )
        return prune_events(self, before_ms, _archive_path(archive), next_free_name=next_free_name)

    def import_events(self, archive: Path) -> "ImportReport":
        """Put an archive's events back as they were (`boardlib.archive`); twice is once."""
        from .archive import import_events

        return import_events(self, _archive_path(archive))

    def purge_events(self) -> int:
        """Delete events past their TTL (those of live tasks stay until the task finishes, and
        those a consumer (`boardlib.watch`) has not read stay too), a short transaction at a
        time."""
        return self._purge_rest(self.now(), PURGE_BATCH)

    def _purge_rest(self, now: int, last: int, *, give_way: bool = False) -> int:
        """More purge transactions while the last one was full: a year of expired events goes in
        many short writes, so agents' writes take turns with it instead of timing out.
        `give_way`: a purge that stays `busy` stops there, quietly (a later pass goes on)."""
        purged = 0
        while last == PURGE_BATCH:
            try:
                last = self.store.write(lambda tx: tx.purge_expired_events(now, PURGE_BATCH))
            except BoardError as error:
                if not give_way or error.reason is not Reason.BUSY:
                    raise
                break
            purged += last
        return purged

    def reconcile_stale_tasks(self) -> ReconcileReport:
        """One stale-task reconciliation pass (seed 000: on an interval; `recovery.py`): release
        expired leases, time out their executions, purge events past their TTL. The release is a
        shared write, as claim-next's reclaim is: every server and TUI runs a pass, and none
        waits for another's (or a writer's) turn at the board. The purge takes that turn and
        gives way when it stays taken: the next pass purges."""
        now = self.now()
        released, timed_out = self._release_in_batches(now)
        purged = self._purge_rest(now, PURGE_BATCH, give_way=True)
        return ReconcileReport(
            released=released, timed_out_executions=timed_out, purged_events=purged
        )

    def start_stale_task_reconciler(self, interval_ms: int | None = None) -> StaleTaskReconciler:
        """Stale-task reconciliation every `interval_ms` (default: the config's) in a background
        thread, for processes that outlive one command; `close()` stops it."""
        if self._reconciler is None:
            interval = (interval_ms or self.config.reconcile_interval_ms) / 1000
            self._reconciler = StaleTaskReconciler(self.reconcile_stale_tasks, interval).start()
        return self._reconciler

    def checkpoint(self) -> bool:
        """Fold the write-ahead log into the board file (a server's clean shutdown calls it)."""
        return self.store.checkpoint()

    def schema_current(self) -> bool:
        """Whether the file's schema is the one this code expects: a cheap readiness probe (one
        pragma read), unlike `check`, which reads the whole file."""
        from .store.schema import SCHEMA_VERSION

        return self.store.schema_version() == SCHEMA_VERSION

    def schema_version(self) -> int:
        """The board's schema version (one pragma or row read; `check` reads the whole file)."""
        return self.store.schema_version()

    def build_text_index(self) -> str:
        """Give a board made where its text index could not be had the index, now that it can
        (`kanban db migrate`): "built", "present" or "unavailable" (`store.base.TEXT_INDEX_*`).
        Never on an open: the build is long on a large board (docs/postgresql.md)."""
        return self.store.build_text_index()

    def check(self, *, full: bool = False) -> CheckReport:
        """Integrity report: the database's own checks (`full`: the thorough one, every index
        against its table), schema version, foreign keys, the readiness counters, cycles."""
        full = validate.flag(full, "full")

        def work(tx: Tx) -> CheckReport:
            from .store.schema import SCHEMA_VERSION

            problems = tx.integrity_problems(full=full)
            drift = [dict(row) for row in tx.unmet_dependency_drift()]
            problems += [
                f"unmet_deps of {row['id']} is {row['kept']}, recount says {row['actual']}"
                for row in drift
            ]
            graph: dict[str, list[str]] = {}
            for source, target in tx.dependency_cycle_edges():
                graph.setdefault(source, []).append(target)
                graph.setdefault(target, [])
            cycles, complete = find_cycles(graph)
            problems += [
                f"dependency cycle: {' -> '.join(cycle)} (none of them can become ready)"
                for cycle in cycles
            ]
            if not complete:
                problems.append(f"more dependency cycles than reported ({len(cycles)})")
            version = tx.schema_version()
            if version != SCHEMA_VERSION:
                problems.append(f"schema version {version}, expected {SCHEMA_VERSION}")
            return CheckReport(
                ok=not problems,
                path=self.store.display,
                schema_version=version,
                expected_schema_version=SCHEMA_VERSION,
                problems=problems,
                counts=tx.status_counts(),
                last_event_seq=tx.last_event_seq(),
                full=full,
            )

        return self.store.read(work)


def check_board_to_watch(location: BoardLocation, *, read_only: bool) -> bool:
    """Check the board a live view (`kanban tui`, `python -m tui`) is about to open, before it
    takes the screen, so both refuse alike: a typo is `no_board`, never a new empty board the
    operator then watches (only the per-user default board is made, on first use, and not for
    a read-only look); a foreign file or a server that does not answer is refused (a
    `StoreError`, for the caller to word); a newer kanban's board passes (the view opens it
    read-only and says so). Returns whether the board was created here."""
    from .paths import is_default_board

    create = not read_only and is_default_board(location)
    try:
        with Board(
            location, config=BoardConfig.from_env(), reconcile_orphans=False, create=create
        ) as board:
            return board.created
    except BoardError as error:
        if error.reason != Reason.NEWER_SCHEMA:
            raise
        return False


def _archive_path(archive: object) -> Path:
    """An events archive's path, or `invalid_input`: the fuzz and the surfaces pass anything."""
    if not isinstance(archive, (str, PathLike)):
        raise invalid_input("archive must be a file path")
    path = Path(archive)
    if "\x00" in str(path):  # `Path.exists` answers False for it; `open` raises ValueError
        raise invalid_input("an archive path holds no NUL byte", path=repr(str(path)))
    if not path.name:
        raise invalid_input("an archive is a file, not a folder", path=str(path))
    return path


def _daily(row: Row | None, team: str | None) -> DailyBudget | None:
    if row is None:
        return None
    return DailyBudget(
        team_id=team,
        daily_usd=None if row["daily_usd"] is None else float(row["daily_usd"]),
        daily_tokens=row["daily_tokens"],
        updated_at=row["updated_at"],
        updated_by=row["updated_by"],
    )


def _with_review(
    verification: str | None,
    reviewer: str,
    decision: str,
    now: int,
    reason: str | None,
    *,
    status: str,
) -> str:
    """The stored verdict with one more review appended (a new verdict when there was none)."""
    from .models import Review, VerificationResult, parse_verdict

    review = Review(reviewer=reviewer, decision=decision, at=now, reason=reason)  # type: ignore[arg-type,unused-ignore]
    if verification:
        verdict = parse_verdict(verification)
        verdict = verdict.model_copy(
            update={"status": status, "reviews": [*verdict.reviews, review], "updated_at": now}
        )
    else:
        verdict = VerificationResult(status=status, reviews=[review], updated_at=now)  # type: ignore[arg-type,unused-ignore]
    return verdict.dumps()
