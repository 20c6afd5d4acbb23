"""The one interface every board store implements: `Store` runs transactions, `Tx` is the SQL.

`Board` and the recovery rules are typed against these protocols only, so mypy --strict checks that
the SQLite store (`sqlite.py`) and the PostgreSQL store (`postgres.py`) offer the same methods with
the same signatures: a method added to one store and called by the board fails the type check until
the other store has its twin. The rules (transitions, lifecycle, caps, leases, events) live above
this line and are never repeated per backend; below it, only the SQL that must differ differs
(`queries.SharedTx` holds every statement the stores share, once).

Every `Tx` method is one readable statement (or a short fixed sequence) with no rule in it. A write
transaction either commits whole or changes nothing. What "a transaction" costs is the store's
business: SQLite serialises every write (`BEGIN IMMEDIATE` behind its writer queue), Postgres runs
claims side by side on row locks and serialises the rest on one advisory lock per board.
"""

import json
import json.encoder
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ..columns import FinishedKey, TaskSearch
from ..errors import BoardError, Reason
from ..records import Task
from .budget_sql import BudgetTx
from .landing_sql import LandingTx
from .stats_sql import StatsTx

if TYPE_CHECKING:  # types only
    from ..review import Anchor

T = TypeVar("T")


class StoreError(Exception):
    """The database itself failed (unreachable, connection dropped): not a refusal, not a bug in
    the caller. Messages never contain a password. `to_dict` is the CLI's one JSON error line."""

    reason = Reason.DATABASE_UNAVAILABLE.value

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def to_dict(self) -> dict[str, Any]:
        return {"error": self.message, "reason": self.reason}

    def refusal(self) -> "BoardError":
        """The board's refusal for it, for a surface that answers refusals alike."""
        return BoardError(Reason.DATABASE_UNAVAILABLE, self.message)


class WouldWait(Exception):
    """Inside `Store.at_once()`: the transaction would have had to wait (for a lock, the writers'
    turn, or a database round trip). Raised before anything was written, so the caller can run
    the same call again where waiting is fine."""


def _compact_encoder() -> Callable[[Any], str]:
    """`json.dumps(value, separators=(",", ":"))`, the text every event's payload is stored as,
    without building the standard library's C encoder on each call (a claim's two-key payload:
    3.4 -> 1.4 us). Built once, it keeps no table of the containers on the way: no state is
    shared between threads, and a cycle (never in a payload of the board's own values) ends in
    RecursionError rather than ValueError. Where the C encoder is missing or answers otherwise,
    the call itself."""
    standard = json.JSONEncoder(separators=(",", ":"))
    make = getattr(json.encoder, "c_make_encoder", None)  # undeclared in the stubs
    if make is None:  # pragma: no cover - CPython always has it
        return standard.encode
    try:
        encoder = make(
            None, standard.default, json.encoder.encode_basestring_ascii, None, ":", ",",
            False, False, True,
        )  # fmt: skip
        sample = {"a": [1, 2.5, None, True, "\u00e9\n\u2028"], "b": {}, "c": -0.0}
        if "".join(encoder(sample, 0)) != standard.encode(sample):
            return standard.encode  # pragma: no cover - another C encoder's arguments
    except TypeError:  # pragma: no cover - another C encoder's arguments
        return standard.encode

    def encode(value: Any) -> str:
        if value.__class__ is not dict:  # a str is encoded whole, as `encode` does
            return standard.encode(value)
        return "".join(encoder(value, 0))

    return encode


compact_json = _compact_encoder()


@dataclass(frozen=True, slots=True, eq=False)  # compared and hashed by identity
class RowEvent:
    """The event a one-statement write appends about the row it wrote (a claim, a renewed
    lease), handed to the statement itself so a store can write the two at once: its kind, and
    its payload as stored (wire keys). With `epoch_key`, the written row's new claim epoch comes
    first under that key (a claim's epoch is known only once it has claimed), then `data`."""

    kind: str
    data: Mapping[str, Any]
    ttl_seconds: int | None
    epoch_key: str | None = None

    def payload(self, epoch: int) -> dict[str, Any]:
        if self.epoch_key is None:
            return dict(self.data)
        return {self.epoch_key: epoch, **self.data}


# What else makes a board where there is none (a missing file, an empty schema): the tail of
# either store's `no_board`.
CREATING_VERBS = "(or `kanban task dispatch`, which creates the board it files into)"

# What `Store.build_text_index` (`kanban db migrate`) found: the board's text index built now,
# there already, or not to be had here (no FTS5 trigram in this SQLite; no pg_trgm the role may
# use, or a role that does not own the tables).
TEXT_INDEX_BUILT = "built"
TEXT_INDEX_PRESENT = "present"
TEXT_INDEX_UNAVAILABLE = "unavailable"

# Every table of a board, parents before children: the order copies load them in and checks count
# them in. Each is ordered by its first key column when dumped.
TABLES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("tasks", ("seq",)),
    ("task_deps", ("task_id", "depends_on_task_id")),
    ("task_comments", ("seq",)),
    ("workspaces", ("seq",)),
    ("execution_processes", ("seq",)),
    ("events", ("seq",)),
    ("audit", ("seq",)),
    ("land_queue", ("seq",)),
    ("budgets", ("scope",)),
    ("daily_spend", ("scope", "day")),
    ("event_consumers", ("name",)),
    ("land_refusals", ("task_id",)),
)


class Row(Protocol):
    """A result row, by column name or position: `sqlite3.Row` and the Postgres store's rows."""

    def keys(self) -> list[str]: ...

    def __getitem__(self, key: int | str, /) -> Any: ...

    def __iter__(self) -> Iterator[Any]: ...

    def __len__(self) -> int: ...


class Tx(LandingTx, BudgetTx, StatsTx, Protocol):
    """The statements of one transaction. Write methods may only be called inside `Store.write`."""

    # -- ids
    def next_id(self, table: str, prefix: str) -> str:
        """The next short, typeable id of a table (`TASK-42`); unique because writes that create
        rows are serialised."""
        ...

    # -- tasks
    def task(self, task_id: str) -> Row | None:
        """One task. Inside a serialised write it is also locked until the transaction ends, so
        the row the board judges is the row it writes."""
        ...

    def tasks_by_id(self, task_ids: Iterable[str]) -> list[Row]: ...

    def insert_task(self, values: dict[str, Any]) -> Row: ...

    def update_task(self, task_id: str, changes: dict[str, Any]) -> Row: ...

    def move_task(
        self,
        task_id: str,
        changes: dict[str, Any],
        *,
        satisfy_dependents: bool,
        close_runs: tuple[str, int, str] | None,
    ) -> tuple[Row, list[Row]]:
        """`update_task`, then (as told) `satisfy_dependents` and `close_running_executions`:
        the new row and the closed runs."""
        ...

    def claim_by_id(
        self,
        task_id: str,
        agent: str,
        runtime: str | None,
        now: int,
        lease_until: int,
        event: RowEvent | None = None,
    ) -> Task | None:
        """The guarded claim of one task: None when it is not claimable, or when an expired lease
        waits to be released (the board releases expired leases, then claims again). A claim
        appends `event`."""
        ...

    def claim_best_ready(
        self,
        agent: str,
        role: str | None,
        respect_deps: bool,
        runtime: str | None,
        now: int,
        lease_until: int,
        team_id: str | None = None,
        event: RowEvent | None = None,
    ) -> Task | None:
        """The best ready task, claimed in one statement: None when nothing is ready, or when an
        expired lease waits to be released (the board releases expired leases, then claims
        again). A claim appends `event`."""
        ...

    def claim_held_back(self, now: int) -> bool:
        """After a claim statement that claimed nothing: whether an expired lease held it back
        at `now` (then the caller releases expired leases and claims again)."""
        ...

    def renew_lease(
        self,
        task_id: str,
        agent: str,
        epoch: int | None,
        now: int,
        lease_until: int,
        event: RowEvent,
    ) -> Task | None:
        """The holder's renewal as one guarded UPDATE: only while `agent` holds the task in
        progress under a live lease with `epoch` (when given) current, the lease to `lease_until`
        and `event` appended; None otherwise (the board then judges why)."""
        ...

    def best_ready(
        self, role: str | None, respect_deps: bool, team_id: str | None = None
    ) -> Row | None:
        """The task `claim_best_ready` would pick now, read with the same pick, writing and
        locking nothing (what `claim-next --dry-run` reports)."""
        ...

    def expired_leases(self, now: int, limit: int | None = None) -> list[Row]:
        """In-progress tasks whose lease ran out (the `limit` longest expired, when given), each
        taken by this transaction alone: of many releasers at once, each goes to exactly one."""
        ...

    def release_after_lease_expiry(self, task_id: str, now: int) -> Row: ...

    def any_lease_expired(self, now: int) -> bool: ...

    def list_tasks(
        self,
        *,
        status: str | None = None,
        team_id: str | None = None,
        assignee: str | None = None,
        role: str | None = None,
        include_dropped: bool = False,
        ready: bool = False,
        text: str | None = None,
        limit: int | None = None,
        page: bool = False,
        before_seq: int | None = None,
    ) -> list[Row]:
        """Filtered tasks in the list's order; with `page`, creation order newest first, below
        `before_seq`: the order a paged walk needs, since no write changes a task's seq."""
        ...

    def task_documents(
        self,
        *,
        status: str | None = None,
        team_id: str | None = None,
        assignee: str | None = None,
        role: str | None = None,
        include_dropped: bool = False,
        ready: bool = False,
        limit: int | None = None,
        page: bool = False,
        before_seq: int | None = None,
    ) -> list[Row]:
        """`list_tasks` as (seq, the task's JSON document as text) rows, written by the database."""
        ...

    def list_version(self) -> str:
        """A version of this snapshot's tasks: two snapshots with the same version hold the same
        tasks. Every task write appends an event, so the events a snapshot sees decide it."""
        ...

    def plan_tasks(self, plan_name: str) -> list[Row]:
        """The tasks applied from plan `plan_name` (those with a plan key), in creation order."""
        ...

    def all_tasks(self) -> list[Row]: ...

    # -- a live view (boardlib.columns)
    def live_tasks(self) -> list[Row]:
        """Every unfinished task, dropped ones included, in creation order."""
        ...

    def matching_ids(self, search: TaskSearch, task_ids: Sequence[str] | None) -> list[str]:
        """Of these tasks (None: every unfinished one), the ids `search` matches."""
        ...

    def search_tasks(self, search: TaskSearch, limit: int) -> list[Row]:
        """Up to `limit` tasks `search` matches, in any column, newest first."""
        ...

    def tasks_by_id_prefix(self, prefix: str, limit: int) -> list[Row]:
        """Up to `limit` undropped tasks whose id starts with `prefix` (any case): the unfinished
        first, each part newest first."""
        ...

    def finished_page(
        self,
        status: str,
        search: TaskSearch,
        *,
        after: FinishedKey | None = None,
        inclusive: bool = False,
        before: FinishedKey | None = None,
        offset: int = 0,
        limit: int,
    ) -> list[Row]:
        """Up to `limit` tasks of a finished column in its order (by its index): from its top
        (skipping `offset`), after (older than) a key, or the `limit` just before one."""
        ...

    def finished_count(
        self, status: str, search: TaskSearch, newer_than: FinishedKey | None
    ) -> int:
        """How many tasks of a finished column match `search` (above a key, when given)."""
        ...

    def status_counts(self) -> dict[str, int]: ...

    # -- parent chain and caps
    def ancestors(self, task_id: str) -> list[Row]: ...

    def live_children(self, parent_id: str) -> int: ...

    def root_creators_since(self, since_ms: int) -> dict[str, int]: ...

    # -- dependencies
    def insert_dependency(
        self, task_id: str, depends_on: str, now: int, tenant: str | None
    ) -> bool: ...

    def delete_dependency(self, task_id: str, depends_on: str) -> bool: ...

    def depends_transitively(self, start: str, target: str) -> bool: ...

    def dependency_edges_from(self, start: str) -> list[tuple[str, str]]: ...

    def dependencies(self, task_id: str) -> list[Row]: ...

    def dependents(self, task_id: str) -> list[Row]: ...

    def count_unmet_dependencies(self, task_id: str) -> int: ...

    def add_unmet_dependency(self, task_id: str, delta: int) -> None: ...

    def satisfy_dependents(self, done_task_id: str) -> None: ...

    def cancel_pending_dependents(self, task_id: str, now: int) -> list[tuple[str, Row]]: ...

    def unmet_dependency_drift(self) -> list[Row]: ...

    def dependency_cycle_edges(self) -> list[tuple[str, str]]: ...

    # -- comments
    def insert_comment(
        self,
        task_id: str,
        body: str,
        author_type: str,
        author_agent_id: str | None,
        now: int,
        tenant: str | None,
        anchor: "Anchor | None" = None,
    ) -> Row: ...

    def comments(self, task_id: str) -> list[Row]: ...

    # -- executions
    def insert_execution(self, values: dict[str, Any]) -> Row: ...

    def execution(self, execution_id: str) -> Row | None: ...

    def close_running_execution(self, execution_id: str, changes: dict[str, Any]) -> Row | None: ...

    def record_late_ledger(self, execution_id: str, ledger: dict[str, Any]) -> Row | None: ...

    def time_out_running_executions(self, task_id: str, now: int, error: str) -> list[Row]: ...

    def close_running_executions(
        self, task_id: str, status: str, now: int, error: str
    ) -> list[Row]: ...

    def executions(self, task_id: str) -> list[Row]: ...

    def execution_cost(self, task_id: str) -> float: ...

    # -- workspaces
    def insert_workspace(self, values: dict[str, Any]) -> Row: ...

    def update_workspace(
        self, workspace_id: str, changes: dict[str, Any], *, only_from: str | None = None
    ) -> Row | None: ...

    def workspace(self, workspace_id: str) -> Row | None: ...

    def workspaces(self, task_id: str) -> list[Row]: ...

    def workspaces_with_status(self, status: str) -> list[Row]: ...

    # -- what needs a person (boardlib.attention)
    def awaiting_person(self) -> list[Row]:
        """Tasks in review or blocked, not dropped, oldest in that status first (by index)."""
        ...

    def status_entry(self, task_id: str) -> Row | None:
        """The newest `status_changed` event of a task: the move into its status (or None)."""
        ...

    def gate_entry(self, task_id: str) -> Row | None:
        """The newest of a task's moves and gate events (started, recorded, stopped), or None."""
        ...

    def gate_entries(self, task_ids: Sequence[str]) -> dict[str, Row]:
        """`gate_entry` of each of these tasks that has one, by task id, in one read."""
        ...

    def lapsed_leases(self, now: int) -> list[Row]:
        """In-progress tasks whose lease ran out and nobody released yet (a read)."""
        ...

    def quiet_runs(self, now: int, quiet_since: int) -> list[Row]:
        """Live-leased in-progress tasks with a running execution and no beat since
        `quiet_since`, with the run's `run_id` and `run_started_at`."""
        ...

    def held_consumers(self) -> list[Row]:
        """Consumers holding a delivery, with the event's `event_task_id`, that task's
        `event_task_title` and the event's `event_kind`."""
        ...

    def unlanded_work(self) -> list[Row]:
        """Done tasks, not dropped, with a live worktree and nothing landed, each with its
        worktree's `land_branch`, oldest in done first (from the few live worktrees)."""
        ...

    def land_refusals_waiting(self) -> list[Row]:
        """Each task's last landing refusal, refused in the status it is still in (in review or
        done) and not landed since: the task's columns plus `refusal_*` columns."""
        ...

    def land_refusal_standing(self, task_id: str) -> Row | None:
        """The task's row of `land_refusals_waiting`, if its refusal still stands."""
        ...

    def put_land_refusal(self, values: dict[str, Any]) -> None:
        """Keep `values` as the task's last landing refusal (one row per task, replaced)."""
        ...

    def delete_land_refusal(self, task_id: str) -> None: ...

    # -- event consumers (boardlib.watch)
    def consumer(self, name: str) -> Row | None:
        """One consumer. Inside a serialised write it is also locked until the transaction ends."""
        ...

    def consumers(self) -> list[Row]: ...

    def insert_consumer(self, name: str, last_seq: int, now: int) -> Row: ...

    def update_consumer(self, name: str, changes: dict[str, Any]) -> Row | None: ...

    def delete_consumer(self, name: str) -> bool:
        """Forget a consumer: the events only it had not read may be purged or pruned again."""
        ...

    # -- events and audit
    def insert_event(
        self,
        kind: str,
        task_id: str | None,
        actor: str | None,
        data: dict[str, Any],
        now: int,
        ttl_seconds: int | None,
        tenant: str | None = None,
    ) -> None: ...

    def events(self, *, since: int = 0, task_id: str | None = None, limit: int = 1000) -> list[Row]:
        """Events after cursor `since`, oldest first, never skipping one that could still commit
        below a seq it returns: a follower that passes back the last seq it got misses nothing."""
        ...

    def recent_events(self, *, task_id: str | None = None, limit: int = 50) -> list[Row]: ...

    def last_event_seq(self) -> int:
        """The cursor a follower that wants only what happens from now on starts at."""
        ...

    def purge_expired_events(self, now: int, limit: int) -> int:
        """Delete up to `limit` events past their TTL (one short transaction's worth)."""
        ...

    # -- archiving old events (boardlib.archive)
    def lowest_consumer_cursor(self) -> int | None:
        """The lowest cursor of the event consumers (`boardlib.watch`; None: there are none):
        no purge or prune takes an event above it."""
        ...

    def prunable_events(self, after: int, through: int, before_ms: int, limit: int) -> list[Row]:
        """The next events (seq above `after`) a prune may take, oldest first."""
        ...

    def unread_old_events(self, after: int, through: int, before_ms: int) -> tuple[int, int]:
        """The events above `after` a prune would take but for the consumers: how many, and the
        highest seq of them (0: none)."""
        ...

    def delete_events(self, seqs: Sequence[int], through: int, before_ms: int) -> int:
        """Delete these events, of those a prune may still take now; returns how many."""
        ...

    def events_at(self, seqs: Sequence[int]) -> list[Row]: ...

    def count_events(self) -> int: ...

    def first_task_id(self) -> str | None:
        """The id of the board's first task (None: it has none)."""
        ...

    def insert_audit(
        self,
        *,
        task_id: str | None,
        actor: str,
        action: str,
        from_status: str | None,
        to_status: str | None,
        verdict_overridden: str | None,
        detail: str | None,
        now: int,
        tenant: str | None,
    ) -> None: ...

    def audit(self, task_id: str | None = None) -> list[Row]: ...

    def audit_of(self, actions: Sequence[str]) -> list[Row]:
        """Every task's audit rows of these actions, oldest first (by the index on action)."""
        ...

    # -- health and whole-board copies
    def integrity_problems(self, *, full: bool = False) -> list[str]:
        """What the database itself finds wrong; `full`: the thorough check where the backend
        has a quick one and a thorough one (SQLite: every index against its table)."""
        ...

    def schema_version(self) -> int: ...

    def table_rows(self, table: str) -> list[Row]:
        """Every row of one of `TABLES`, in key order (copies and content hashes read these)."""
        ...

    def load_rows(self, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> int:
        """Insert rows verbatim (keys included) into an empty table; returns how many."""
        ...

    def finish_load(self) -> None:
        """After `load_rows`: whatever makes the loaded board hand out fresh ids and seqs."""
        ...


class Store(Protocol):
    """One board's storage: runs callables inside transactions and says when something changed."""

    read_only: bool
    created: bool  # opening this store made the board (a new file, an empty schema)
    migrations_applied: int  # how many schema migrations opening this store ran (0: current)

    @property
    def backend(self) -> str:
        """`sqlite` or `postgres`."""
        ...

    @property
    def display(self) -> str:
        """Where the board is, safe to print: a path, or a URL without its password."""
        ...

    def write(self, work: Callable[[Tx], T], *, shared: bool = False) -> T:
        """Run `work` in one write transaction, retried whole on transient contention within the
        board's wall-clock budget, then `BoardError(BUSY)`. `shared=True` marks a transaction whose
        statements guard themselves (the claims: row locks, `SKIP LOCKED`, guarded updates), which
        a store may run beside other shared writers instead of taking its whole-board write turn."""
        ...

    def one_statement(self, work: Callable[[Tx], T]) -> T:
        """`work`, which runs one guarded statement that writes its own event (`Tx.claim_by_id`,
        `claim_best_ready`, `renew_lease`), as a transaction of its own: guarded by row locks as
        claims are (`write(shared=True)`), and sent with its BEGIN, COMMIT and NOTIFY in as few
        round trips as the store can (Postgres: one). `work` may then ask `claim_held_back`."""
        ...

    def try_write(self, work: Callable[[Tx], T], *, shared: bool = False) -> T | None:
        """`write` if it can be done at once; None (nothing written) when another writer holds
        the board's write turn (with `shared`, as `write`'s: only what the work itself waits
        for) or this process may not write. For best-effort upkeep."""
        ...

    def read(self, work: Callable[[Tx], T]) -> T:
        """Run `work` in one read-only transaction: one consistent snapshot."""
        ...

    def at_once(self) -> AbstractContextManager[None]:
        """On this thread, until the block ends: the first transactions raise `WouldWait` instead
        of waiting for anything, until one write has committed (after it, the rest run as usual,
        so a call is never half done when `WouldWait` comes). For an event loop that runs a
        short call itself when it can and hands it to a thread when it cannot."""
        ...

    def change_token(self) -> int:
        """A cheap "has anything changed": equal tokens mean no change a live view has not seen.
        SQLite: `PRAGMA data_version` (~4 µs, no lock). Postgres: the event log's safe horizon,
        re-read only when a NOTIFY arrived or the fallback poll is due."""
        ...

    def checkpoint(self) -> bool:
        """Make the board whole on its own storage at a clean shutdown (SQLite: fold the WAL into
        the file). True when done."""
        ...

    def schema_version(self) -> int:
        """The board's schema version, cheaply (a readiness probe, no transaction of the board)."""
        ...

    def build_text_index(self) -> str:
        """Give a board made where its text index could not be had (migration 10 skipped it) the
        index, now that it can: `TEXT_INDEX_BUILT`, `_PRESENT` or `_UNAVAILABLE`. Never run by
        an open: `kanban db migrate` asks for it (docs/postgresql.md). Two at once build it once."""
        ...

    def discard_new_board(self) -> None:
        """Unmake the board opening this store made (`created`), if it still holds no rows, and
        close: a `db copy` that failed leaves its target as it found it. Nothing otherwise."""
        ...

    def close(self) -> None: ...
