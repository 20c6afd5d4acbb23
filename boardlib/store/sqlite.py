"""The SQLite repository: the only door to the board's tables.

`SqliteStore` owns two connections to one file, a writer and a `query_only` reader, and runs
callables inside transactions (`write`, `read`). Inside, the callable gets a `SqliteTx`, whose
methods are one readable SQL statement each: the statements both stores share come from
`queries.SharedTx`, those that must differ are here. The board's rules (`board.py`,
`lifecycle.py`, `recovery.py`) decide; this module only reads and writes rows. `postgres.py` sits
beside it: both implement `base.Tx` and `base.Store`, which mypy checks.
"""

import errno
import functools
import json
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from contextlib import nullcontext
from dataclasses import fields, replace
from pathlib import Path
from typing import Any, TypeVar, cast

import orjson

from ..config import BoardConfig
from ..errors import BoardError, Reason, not_utf8
from ..leases import EXPIRED_SQL, expired_sql
from ..naming import camel
from ..records import MICROS_PER_USD, USD_MAX, Task
from . import board_file, schema
from .base import (
    TABLES,
    TEXT_INDEX_BUILT,
    TEXT_INDEX_PRESENT,
    TEXT_INDEX_UNAVAILABLE,
    Row,
    RowEvent,
    Tx,
    WouldWait,
    compact_json,
)
from .checkpoints import BACKSTOP_PAGES, BackgroundCheckpoints
from .contention import (
    BUSY_TIMEOUT_MS,
    attempt_once,
    connect,
    is_transient_lock_error,
    run_transaction,
)
from .literals import IN_PROGRESS
from .queries import CLAIM_ORDER, CLAIMABLE, FTS5, HOLDING, READY, WAITING, Params, SharedTx
from .schema import (
    NO_MODULE,
    SCHEMA_VERSION,
    TEXT_INDEX,
    apply_pending_migrations,
    build_text_index,
    has_text_index,
    schema_version,
    text_index_missing_module,
)
from .writer_queue import WriterQueue

T = TypeVar("T")

# Rows are `sqlite3.Row`s, typed as the interface's `Row` (by name or position, `keys()`).

_SQLITE_FULL = 13

# How long a late text index's build waits for the writer turn (`SqliteStore.build_text_index`).
TEXT_INDEX_BUILD_WAIT_MS = 60_000


def _read_only_file(path: Path, error: BaseException) -> BoardError:
    return BoardError(
        Reason.READ_ONLY,
        f"cannot write to the board {path}: the file or its folder is read-only for this user "
        f"({error})",
        path=str(path),
    )


def _disk_full(path: Path, error: BaseException) -> BoardError:
    return BoardError(
        Reason.DISK_FULL,
        f"no space left on the device holding the board {path}: nothing was written; free some "
        f"space and try again ({error})",
        path=str(path),
    )


def _missing_module_text(message: str) -> str:
    return (
        f"the board's text index ({TEXT_INDEX}, SQLite FTS5 with its trigram tokenizer) cannot "
        f"be read by this Python's SQLite {sqlite3.sqlite_version} ({message}): searches read "
        "every task instead, and a write that keeps the index (a new task, a title or "
        "description changed) is refused; use a Python whose SQLite has FTS5 (3.34 or later)"
    )


def _missing_module(path: Path, error: sqlite3.OperationalError) -> BoardError:
    """A write the text index's trigger needs, on a SQLite without its module: refused, rolled
    back, where it was SQLite's bare "no such module" (`unexpected`)."""
    return BoardError(
        Reason.UNSUPPORTED_BACKEND,
        f"{_missing_module_text(str(error))}; nothing was written to {path}",
        path=str(path),
    )


def _is_disk_full(error: BaseException) -> bool:
    if isinstance(error, OSError):
        return error.errno == errno.ENOSPC
    return (
        isinstance(error, sqlite3.OperationalError)
        and getattr(error, "sqlite_errorcode", 0) & 0xFF == _SQLITE_FULL
    )


_CLAIM_SET = f"""
    status = {IN_PROGRESS},
    assignee_agent_id = :agent,
    assignee_runtime = :runtime,
    claimed_by = COALESCE(claimed_by, :agent),
    holders = CASE
        WHEN EXISTS (SELECT 1 FROM json_each(holders) WHERE value = :agent) THEN holders
        ELSE json_insert(holders, '$[#]', :agent)
    END,
    claim_epoch = claim_epoch + 1,
    lease_until = :lease_until,
    last_heartbeat_at = :now,
    attempts = attempts + 1,
    blocked_reason = NULL,
    first_claimed_at = COALESCE(first_claimed_at, :now),
    updated_at = :now,
    status_since = :now
"""


def _json_returning(record: type) -> tuple[str, tuple[int, ...]]:
    """A RETURNING list that hands back a whole record as one JSON array in field order, and the
    positions of its REAL fields, which follow the array as columns of their own (SQLite prints
    a REAL in JSON with 15 digits, which does not round-trip every double).

    Why: a claim returns a whole task, and the sqlite3 module pays per returned column (its name,
    its type, a Python object each, then `sqlite3.Row` and `Task.from_row`): for the 32 columns of
    `RETURNING *` that was ~105,000 of a claim's ~400,000 instructions. One JSON text decoded by
    the C scanner builds the same values for a fraction of that."""
    names = [f.name for f in fields(record)]
    json_columns: frozenset[str] = getattr(record, "_json_columns", frozenset())
    real = tuple(
        i for i, f in enumerate(fields(record)) if f.type in (float, "float", float | None)
    )
    items = [
        "NULL" if i in real else f"json({name})" if name in json_columns else name
        for i, name in enumerate(names)
    ]
    extra = "".join(f", {names[i]}" for i in real)
    return f"json_array({', '.join(items)}){extra}", real


_TASK_RETURNING, _TASK_REAL_POSITIONS = _json_returning(Task)


def _exact_real(column: str) -> str:
    """A REAL column as a JSON number that reads back as the same double. A whole number below
    10^15 (a cost of 0.0, the common case) goes to json_object as it is, which prints it as
    `printf('%!.15g')` does: no printf at all (two a row were a sixth of a 10,000-task list's
    query). Whole micro-dollars below USD_MAX (every amount the board keeps: `whole_micros`)
    have at most 15 digits, so 15 print them exactly; any other double is printed in 17. Whether
    15 would do is never asked of SQLite's text-to-double conversion: 3.40's misreads some
    (`268435456.264339` as 268435456.26433897), which passed 15 digits that do not round-trip."""
    short, full = f"printf('%!.15g', {column})", f"printf('%!.17g', {column})"
    return (
        f"CASE WHEN {column} IS NULL THEN NULL "
        f"WHEN {column} = CAST({column} AS INTEGER) AND abs({column}) < 1e15 THEN {column} "
        f"WHEN abs({column}) < {USD_MAX:.0f} "
        f"AND round({column} * {MICROS_PER_USD}) / {MICROS_PER_USD}.0 = {column} "
        f"THEN json({short}) ELSE json({full}) END"
    )


def _task_document() -> str:
    """`SharedTx.TASK_DOCUMENT` in SQLite's JSON functions: `Task.to_json`'s keys in its field
    order, the JSON columns embedded as JSON, the REAL ones exact."""
    json_columns = Task._json_columns
    pairs = []
    for field in fields(Task):
        name = field.name
        if name in json_columns:
            value = f"json({name})"
        elif field.type in (float, "float", float | None):
            value = _exact_real(name)
        else:
            value = name
        pairs.append(f"'{camel(name)}', {value}")
    return f"json_object({', '.join(pairs)})"


# The documented one-value decoder, without json.loads's wrapper and whitespace checks.
_decode_json = json.JSONDecoder().raw_decode


def _task_values(document: str) -> list[Any]:
    """The values of a task's JSON array as the standard library reads them. orjson reads the
    array in a third of the time (~1.6 us against ~4 a claim); a document it refuses (an escaped
    lone surrogate, an integer past 64 bits) is read by the standard library, which takes them."""
    try:
        values: list[Any] = orjson.loads(document)
    except orjson.JSONDecodeError:
        values = _decode_json(document)[0]
    return values


def _task_returned(cursor: sqlite3.Cursor) -> Task | None:
    """The task of a statement ending in `RETURNING {_TASK_RETURNING}`, or None (no row)."""
    row = cursor.fetchone()
    if row is None:
        return None
    values = _task_values(row[0])
    for column, position in enumerate(_TASK_REAL_POSITIONS, start=1):
        value = row[column]  # RETURNING gives a REAL's integral value as an int (`_as_float`)
        values[position] = float(value) if value.__class__ is int else value
    return Task(*values)


# The claim statements also claim nothing while any lease on the board has expired: one probe of
# the first entry of the lease index, evaluated once per statement. The caller then releases the
# expired leases and claims again, so an abandoned task competes the moment its lease lapses, while
# the common claim needs no release statement of its own (5 -> 4 statements per claim).
_NO_LEASE_EXPIRED = (
    "NOT EXISTS (SELECT 1 FROM tasks INDEXED BY tasks_lease "
    f"WHERE status = {IN_PROGRESS} AND {expired_sql(':now')})"
)


@functools.cache
def _best_ready_pick(by_role: bool, respect_deps: bool, by_team: bool) -> str:
    """The query claim-next picks its task with (the id of the best ready task), for an agent
    with or without a role (and a team): the claim and its preview run the same text."""
    # INDEXED BY pins the plan: on a file without statistics the planner could otherwise pick
    # another index and skip every blocked task inside the write lock.
    order = f"{CLAIM_ORDER} LIMIT 1"
    ready, waiting = READY, WAITING
    if by_team:
        ready += " AND team_id = :team"
        waiting += " AND team_id = :team"
    if not by_role:
        candidates = [f"tasks INDEXED BY tasks_ready WHERE {ready}"]
        if not respect_deps:
            candidates.append(f"tasks INDEXED BY tasks_waiting WHERE {waiting}")
    else:
        role_index = "tasks INDEXED BY tasks_ready_by_role"
        candidates = [
            f"{role_index} WHERE {ready} AND role = :role",
            f"{role_index} WHERE {ready} AND role IS NULL",
        ]
        if not respect_deps:
            candidates.append(
                f"tasks INDEXED BY tasks_waiting WHERE {waiting} AND (role = :role OR role IS NULL)"
            )
    if len(candidates) == 1:
        pick = f"SELECT id FROM {candidates[0]} {order}"
    else:
        best_of_each = " UNION ALL ".join(
            f"SELECT * FROM (SELECT id, priority, updated_at FROM {source} {order})"
            for source in candidates
        )
        pick = f"SELECT id FROM ({best_of_each}) {order}"
    return pick


@functools.cache
def claim_best_ready_sql(by_role: bool, respect_deps: bool, by_team: bool) -> str:
    """The claim-next statement, built once per shape: the sqlite3 module finds its prepared
    statement by the text, and the same string object hashes once."""
    pick = _best_ready_pick(by_role, respect_deps, by_team)
    return (
        f"UPDATE tasks SET {_CLAIM_SET} WHERE id = ({pick}) AND {CLAIMABLE} "
        f"AND {_NO_LEASE_EXPIRED} RETURNING {_TASK_RETURNING}"
    )


class AtOnceBlock:
    """`SqliteStore.at_once()`: one plain context manager per store, its state per thread (a
    nested block leaves the decision to the outer one). The HTTP lane enters it for every claim
    it answers inline; a generator-made one cost ~2 us a claim to make, enter and leave."""

    __slots__ = ("_state",)

    def __init__(self, state: threading.local) -> None:
        self._state = state

    def __enter__(self) -> None:
        state = self._state
        depth = getattr(state, "depth", 0)
        if not depth:
            state.active, state.settled = True, False
        state.depth = depth + 1

    def __exit__(self, *_exc: object) -> None:
        state = self._state
        state.depth -= 1
        if not state.depth:
            state.active = False


class SqliteTx(SharedTx):
    """The statements of one transaction on the board file. The statements both stores share
    are `SharedTx`'s; here are the seam (`sqlite3` takes the shared `:name` text as written) and
    the statements that must differ, each saying why. No rule is decided here."""

    JSON_TEXT = "json_extract({column}, '$.{key}')"  # Differs: JSON functions are dialect
    # Differs: `+` keeps a figure's team filter off `tasks_team`. With no statistics SQLite takes
    # an equality over a range, so `--team` read every task of the team (4,800 rows of 100,000,
    # ~15 ms a figure) where the window's covering index holds a day's in ~0.2 ms. Postgres
    # weighs both from its statistics.
    TEAM_TERM = "+{column}"
    TASK_DOCUMENT = _task_document()

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    # Differs: each store's own text index. A file opened read-only may predate it, a SQLite
    # without FTS5's trigram tokenizer made none, and one without FTS5 cannot read one made.
    def _text_index(self) -> str | None:
        if not has_text_index(self.conn) or text_index_missing_module(self.conn) is not None:
            return None
        return FTS5

    # -- the seam -------------------------------------------------------------------------------

    def _fetchall(self, query: str, params: Params = ()) -> list[Row]:
        return self.conn.execute(query, params).fetchall()

    def _fetchone(self, query: str, params: Params = ()) -> Row | None:
        row: Row | None = self.conn.execute(query, params).fetchone()
        return row

    def _execute(self, query: str, params: Params = ()) -> int:
        return self.conn.execute(query, params).rowcount

    def _executemany(self, query: str, rows: list[Sequence[Any]]) -> None:
        self.conn.executemany(query, rows)

    # -- tasks ----------------------------------------------------------------------------------

    # Differs: SQLite has no array parameter, so the ids are one `?` each.
    def tasks_by_id(self, task_ids: Iterable[str]) -> list[Row]:
        ids = list(task_ids)
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        return self.conn.execute(f"SELECT * FROM tasks WHERE id IN ({marks})", ids).fetchall()

    # Differs: the claims are each store's own protocol (SQLite: one guarded UPDATE pinned to the
    # ready indexes with INDEXED BY, holders kept with json_each, the row returned as one JSON).
    def claim_by_id(
        self,
        task_id: str,
        agent: str,
        runtime: str | None,
        now: int,
        lease_until: int,
        event: RowEvent | None = None,
    ) -> Task | None:
        """The atomic claim of seed 000: the guard is in the statement that writes, so of any number
        of racing callers at most one gets the row back. Unmet dependencies refuse too, and so does
        any expired lease on the board (release expired leases, then claim again)."""
        task = _task_returned(
            self.conn.execute(
                f"UPDATE tasks SET {_CLAIM_SET} WHERE id = :id AND {CLAIMABLE} AND unmet_deps = 0 "
                f"AND {_NO_LEASE_EXPIRED} RETURNING {_TASK_RETURNING}",
                {
                    "id": task_id,
                    "agent": agent,
                    "runtime": runtime,
                    "now": now,
                    "lease_until": lease_until,
                },
            )
        )
        return self._claimed(task, agent, now, event)

    def _claimed(
        self, task: Task | None, agent: str, now: int, event: RowEvent | None
    ) -> Task | None:
        """The event of a one-statement write, written right after it (SQLite's writes are
        serialised: the statement and its event are one turn of the lock anyway)."""
        if task is not None and event is not None:
            self.insert_event(
                event.kind, task.id, agent, event.payload(task.claim_epoch), now,
                event.ttl_seconds, task.tenant_id,
            )  # fmt: skip
        return task

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
        """Pick the best claimable task and claim it, in one statement. With dependencies respected
        the pick is one lookup in a partial index of ready tasks (per role: the role's own best and
        the best role-less task, whichever ranks higher), never a scan past blocked tasks. A team
        narrows the pick by a filter on the same index walk. None when nothing is ready or when
        any lease on the board has expired (release expired leases, then claim again)."""
        task = _task_returned(
            self.conn.execute(
                claim_best_ready_sql(role is not None, respect_deps, team_id is not None),
                {
                    "agent": agent,
                    "runtime": runtime,
                    "now": now,
                    "lease_until": lease_until,
                    "role": role,
                    "team": team_id,
                },
            )
        )
        return self._claimed(task, agent, now, event)

    # Differs, as the next one: a claim's aftermath (Postgres reads it off the claim's own row).
    def claim_held_back(self, now: int) -> bool:
        return self.any_lease_expired(now)

    def renew_lease(
        self,
        task_id: str,
        agent: str,
        epoch: int | None,
        now: int,
        lease_until: int,
        event: RowEvent,
    ) -> Task | None:
        task = _task_returned(
            self.conn.execute(
                "UPDATE tasks SET lease_until = :lease_until, last_heartbeat_at = :now "
                f"WHERE id = :id AND {HOLDING} RETURNING {_TASK_RETURNING}",
                {
                    "id": task_id,
                    "agent": agent,
                    "epoch": epoch,
                    "now": now,
                    "lease_until": lease_until,
                },
            )
        )
        return self._claimed(task, agent, now, event)

    # Differs: the claim-next pick itself, without the UPDATE (the same text as the claim).
    def best_ready(
        self, role: str | None, respect_deps: bool, team_id: str | None = None
    ) -> Row | None:
        """The task `claim_best_ready` would pick right now, read with the same pick and
        written nothing (a preview: the guard against expired leases is the caller's to model)."""
        pick = _best_ready_pick(role is not None, respect_deps, team_id is not None)
        row: Row | None = self.conn.execute(
            f"SELECT * FROM tasks WHERE id = ({pick})", {"role": role, "team": team_id}
        ).fetchone()
        return row

    # Differs: SQLite pins the lease index (INDEXED BY); Postgres locks what it releases instead.
    def expired_leases(self, now: int, limit: int | None = None) -> list[Row]:
        """In-progress tasks whose lease ran out (one probe of the lease index when none did)."""
        return self.conn.execute(
            "SELECT * FROM tasks INDEXED BY tasks_lease "
            f"WHERE status = {IN_PROGRESS} AND {EXPIRED_SQL} ORDER BY lease_until LIMIT ?",
            (now, -1 if limit is None else limit),
        ).fetchall()

    # Differs: INDEXED BY, as above (Postgres has no index hints).
    def any_lease_expired(self, now: int) -> bool:
        row = self.conn.execute(
            "SELECT 1 FROM tasks INDEXED BY tasks_lease "
            f"WHERE status = {IN_PROGRESS} AND {EXPIRED_SQL} LIMIT 1",
            (now,),
        ).fetchone()
        return row is not None

    # -- events ---------------------------------------------------------------------------------

    # Differs: SQLite writes an event at once, numbered by its rowid; Postgres queues them and
    # numbers them from a sequence just before COMMIT.
    def insert_event(
        self,
        kind: str,
        task_id: str | None,
        actor: str | None,
        data: dict[str, Any],
        now: int,
        ttl_seconds: int | None,
        tenant: str | None = None,
    ) -> None:
        self.conn.execute(
            "INSERT INTO events (task_id, kind, actor, data, created_at, ttl_seconds, tenant_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                task_id,
                kind,
                actor,
                compact_json(data),
                now,
                ttl_seconds,
                tenant,
            ),
        )

    # Differs, as the next two: SQLite commits seqs in order, so the log is whole up to its newest
    # row; Postgres reads only up to its safe horizon.
    def events(self, *, since: int = 0, task_id: str | None = None, limit: int = 1000) -> list[Row]:
        if task_id is None:
            return self.conn.execute(
                "SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT ?", (since, limit)
            ).fetchall()
        return self.conn.execute(
            "SELECT * FROM events WHERE task_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            (task_id, since, limit),
        ).fetchall()

    def recent_events(self, *, task_id: str | None = None, limit: int = 50) -> list[Row]:
        if task_id is None:
            return self.conn.execute(
                "SELECT * FROM events ORDER BY seq DESC LIMIT ?", (limit,)
            ).fetchall()
        return self.conn.execute(
            "SELECT * FROM events WHERE task_id = ? ORDER BY seq DESC LIMIT ?", (task_id, limit)
        ).fetchall()

    def last_event_seq(self) -> int:
        (seq,) = self.conn.execute("SELECT IFNULL(MAX(seq), 0) FROM events").fetchone()
        return int(seq)

    # Differs: SQLite commits seqs in order (one writer), so the newest seq is the whole story.
    def list_version(self) -> str:
        return str(self.last_event_seq())

    # -- health ---------------------------------------------------------------------------------

    # Differs, as the next two: SQLite checks and versions its file with PRAGMAs; a whole-board
    # load needs no sequence moved.
    def integrity_problems(self, *, full: bool = False) -> list[str]:
        """`quick_check` reads every page of the file and checks its structure, every row's
        columns and constraints; `full` (`integrity_check`) also looks every row up in each of
        its indexes: 3-4x the time (a 100,000-task board: 0.13 s against 0.5 s of CPU)."""
        pragma = "integrity_check" if full else "quick_check"
        rows = self.conn.execute(f"PRAGMA {pragma}").fetchall()
        problems = [row[0] for row in rows if row[0] != "ok"]
        problems += [
            f"foreign key: {row[0]} row {row[1]} -> {row[2]}"
            for row in self.conn.execute("PRAGMA foreign_key_check").fetchall()
        ]
        missing = text_index_missing_module(self.conn)
        if missing is not None:
            problems.append(_missing_module_text(missing))
        elif not has_text_index(self.conn) and schema.has_trigram_index():
            problems.append(
                f"the text index {TEXT_INDEX} is missing (the board was made by a SQLite without "
                "FTS5 or its trigram tokenizer; this one has them): searches read every task; "
                "`kanban db migrate` builds it (a Python whose SQLite lacks FTS5 can then not "
                "create tasks on this board)"
            )
        return problems

    def schema_version(self) -> int:
        return schema_version(self.conn)

    def finish_load(self) -> None:
        """Nothing to do: rowids follow MAX(seq) and AUTOINCREMENT saw the explicit seqs."""


# mypy --strict checks here that the shared statements and SQLite's own make the whole `Tx`.
_IMPLEMENTS_TX: type[Tx] = SqliteTx


class SqliteStore:
    """One board file: a writer connection, a `query_only` reader, and the transaction runners.

    Each connection is guarded by its own lock so threads of one process (the TUI's workers, the
    demo's agents) can share a store; separate processes coordinate through SQLite's file lock.
    """

    def __init__(
        self,
        path: str | Path,
        config: BoardConfig,
        *,
        read_only: bool = False,
        create: bool = True,
        background_checkpoints: bool = False,
    ) -> None:
        """Open the board at `path`. Nothing is written to look: a missing file is `no_board`
        unless `create` (then the folder and a new board are made), a file that is not a kanban
        board is `not_a_board` and stays untouched (see `board_file`). The writer connection and
        the writers' lock file are opened on the first write, so a reader never needs write
        access to the file or its folder."""
        self.path = Path(path)
        self.config = config
        self.read_only = read_only
        self._write_lock = threading.Lock()
        self._read_lock = threading.Lock()
        self._writer: sqlite3.Connection | None = None
        self._writer_waits = True  # its busy timeout: BUSY_TIMEOUT_MS, or 0 (`_set_waits`)
        self._queue: WriterQueue | None = None
        self._reader_conn: sqlite3.Connection | None = None
        self._held: tuple[int, int] | None = None
        self._at_once = threading.local()  # `at_once()`'s state, per thread
        self._at_once_block = AtOnceBlock(self._at_once)
        # the checkpoint thread, for a store opened with `background_checkpoints` (checkpoints.py)
        self.background_checkpoints = (
            BackgroundCheckpoints(self.path, connect, self._write_lock)
            if background_checkpoints and not read_only
            else None
        )
        self.migrations_applied = 0
        found = board_file.probe(self.path, timeout_s=config.retry_budget_ms / 1000)
        self.created = found in (board_file.MISSING, board_file.EMPTY)
        self._made_file = found == board_file.MISSING and not read_only and create
        if self.created and (read_only or not create):
            raise board_file.no_board(self.path)
        if found > SCHEMA_VERSION and not read_only:  # readable; writing could corrupt it
            raise board_file.newer_schema(self.path, found, SCHEMA_VERSION)
        # From here on no plain read of the file in this process while we are open (a new file
        # is counted once the migration has made it).
        self._held = board_file.hold(self.path)
        if found != SCHEMA_VERSION and not read_only:
            if found == board_file.MISSING:
                try:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                except OSError as error:
                    if error.errno in (errno.EEXIST, errno.ENOTDIR):  # a file where a folder goes
                        parents = self.path.parents
                        blocker = next((p for p in parents if p.exists() and not p.is_dir()), None)
                        why = f"{blocker or self.path.parent} on its way is a file, not a folder"
                        raise board_file.not_a_board(self.path, why) from None
                    if error.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
                        raise
                    raise _read_only_file(self.path, error) from None
            # A new or older file: the migration re-reads the version inside the transaction, so
            # racing openers migrate once.
            try:
                self.migrations_applied = self._write_conn(apply_pending_migrations, self.config)
            except BaseException:
                self.close()  # and counted no more
                raise
            self._held = self._held or board_file.hold(self.path)

    def _open_writer(self) -> tuple[sqlite3.Connection, WriterQueue]:
        """The writer connection and the writers' queue, made on first use."""
        if self._writer is None or self._queue is None:
            try:
                self._queue = self._queue or WriterQueue(self.path)
                if self._writer is None:
                    self._writer = connect(self.path)
                    self._writer_waits = True  # the recipe's busy timeout
                    if self.background_checkpoints is not None:
                        self._writer.execute(f"PRAGMA wal_autocheckpoint={BACKSTOP_PAGES}")
            except OSError as error:
                if error.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
                    raise
                raise _read_only_file(self.path, error) from None
            except sqlite3.OperationalError as error:
                if not board_file.cannot_open(error):
                    raise
                raise _read_only_file(self.path, error) from None
        return self._writer, self._queue

    @property
    def _reader(self) -> sqlite3.Connection:
        """The query-only connection, opened on first read (a claim never needs one). On a board
        this process may read but not write (a read-only folder, someone else's file), the normal
        open fails for want of a `-shm`; the read-only URI of `board_file` reads it instead."""
        if self._reader_conn is None:
            try:
                conn = connect(self.path, query_only=True)
                try:
                    conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
                except sqlite3.OperationalError as error:
                    if not is_transient_lock_error(error):  # locked: the read's retries wait
                        conn.close()
                        raise
                except BaseException:
                    conn.close()
                    raise
            except sqlite3.OperationalError as error:
                if not board_file.cannot_open(error):
                    raise
                conn = connect(board_file.read_only_uri(self.path), query_only=True, uri=True)
            self._reader_conn = conn
        return self._reader_conn

    @property
    def backend(self) -> str:
        return "sqlite"

    @property
    def display(self) -> str:
        return str(self.path)

    def build_text_index(self) -> str:
        """The text index of a board file made where SQLite lacked FTS5 or its trigram tokenizer,
        made now by this SQLite that has them: migration 10's statements in one write
        transaction, which looks again first (of two at once, the second finds it made). The
        writer turn is waited for up to `TEXT_INDEX_BUILD_WAIT_MS`: another build holds it for
        its length (~1.3 s at 100,000 tasks), past a call's budget."""
        if self.read_only:
            raise BoardError(Reason.READ_ONLY, "the board is open read-only")
        if self.read(lambda tx: has_text_index(cast(SqliteTx, tx).conn)):  # no writer turn
            return TEXT_INDEX_PRESENT
        if not schema.has_trigram_index():  # looked up here: the one probe, as tests set it
            return TEXT_INDEX_UNAVAILABLE
        budget = max(self.config.retry_budget_ms, TEXT_INDEX_BUILD_WAIT_MS)
        built = self._write_conn(build_text_index, replace(self.config, retry_budget_ms=budget))
        return TEXT_INDEX_BUILT if built else TEXT_INDEX_PRESENT

    def write(self, work: Callable[[Tx], T], *, shared: bool = False) -> T:
        """Run `work` in one `BEGIN IMMEDIATE` transaction, retried on lock errors. Every SQLite
        write takes the file's one write lock, so `shared` changes nothing here."""
        return self._write(work, self.config)

    def one_statement(self, work: Callable[[Tx], T]) -> T:
        """One write transaction (SQLite's are local and short: no round trips to save)."""
        return self.write(work, shared=True)

    def try_write(self, work: Callable[[Tx], T], *, shared: bool = False) -> T | None:
        """`write` if it can be done at once: None (nothing written) when another writer holds
        the lock or the file is read-only for this process. For best-effort upkeep, such as the
        recovery pass at open, that the next writer does anyway. `shared` changes nothing here
        (one writer), as `write`'s."""
        once = replace(self.config, retry_budget_ms=0, retry_max_attempts=1)
        try:
            return self._write(work, once)
        except BoardError as error:
            if error.reason in (Reason.BUSY, Reason.READ_ONLY, Reason.DISK_FULL):
                return None
            raise

    def _write(self, work: Callable[[Tx], T], config: BoardConfig) -> T:
        return self._write_conn(lambda conn: work(SqliteTx(conn)), config)

    def at_once(self) -> "AtOnceBlock":
        return self._at_once_block

    def _must_not_wait(self) -> bool:
        state = self._at_once
        return bool(getattr(state, "active", False) and not state.settled)

    def _write_now(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """The write inside `at_once`: this process's lock, the writers' turn and SQLite's lock
        each taken only if free this instant (a 0 ms busy timeout), one attempt; `WouldWait`
        otherwise, with nothing written."""
        if not self._write_lock.acquire(blocking=False):
            raise WouldWait
        try:
            writer, queue = self._open_writer()
            if not queue.try_acquire():
                raise WouldWait
            try:
                self._set_waits(writer, False)
                result = attempt_once(writer, work)
            finally:
                queue.release()
            self._at_once.settled = True
            if self.background_checkpoints is not None:
                self.background_checkpoints.committed()
            return result
        finally:
            self._write_lock.release()

    def _set_waits(self, writer: sqlite3.Connection, waits: bool) -> None:
        """SQLite's busy timeout on the writer: `BUSY_TIMEOUT_MS` for a write that may wait, 0
        inside `at_once` (a lock held elsewhere is `WouldWait` at once). Set only when it changes,
        so claims answered inline one after another pay no PRAGMA (two statements of a claim's
        six, ~8 us). The caller holds the write lock."""
        if self._writer_waits is not waits:
            writer.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS if waits else 0}")
            self._writer_waits = waits

    def _check_same_file(self) -> None:
        """The path still names the file this store opened. A board file removed (or replaced)
        under an open process would otherwise take writes into the unlinked file, acknowledged
        and lost when the process closes it, or a new connection would make an empty file there.
        One `stat` per transaction."""
        if self._held is not None and board_file.file_key(self.path) != self._held:
            raise board_file.board_gone(self.path)

    def _write_conn(self, work: Callable[[sqlite3.Connection], T], config: BoardConfig) -> T:
        if self.read_only:
            raise BoardError(Reason.READ_ONLY, "the board is open read-only")
        self._check_same_file()
        if self._must_not_wait():
            try:
                return self._write_now(work)
            except UnicodeEncodeError:
                raise not_utf8() from None
            except (sqlite3.OperationalError, OSError) as error:  # disk full, read-only...:
                raise WouldWait from error  # the usual path says what it is
        with self._write_lock:
            try:
                writer, queue = self._open_writer()
                self._set_waits(writer, True)
                result = run_transaction(writer, work, config=config, queue=queue)
                if self.background_checkpoints is not None:
                    self.background_checkpoints.committed()
                return result
            except UnicodeEncodeError:  # a lone surrogate reached a statement: rolled back
                raise not_utf8() from None
            except (sqlite3.OperationalError, OSError) as error:
                if _is_disk_full(error):  # rolled back: what was committed before stays
                    raise _disk_full(self.path, error) from None
                if getattr(error, "sqlite_errorcode", 0) & 0xFF == board_file.SQLITE_READONLY:
                    raise _read_only_file(self.path, error) from None
                if isinstance(error, sqlite3.OperationalError) and str(error).startswith(NO_MODULE):
                    raise _missing_module(self.path, error) from None
                raise

    def read(self, work: Callable[[Tx], T]) -> T:
        """Run `work` in one read transaction on the query-only connection: one snapshot."""
        self._check_same_file()
        if self._must_not_wait():  # a WAL read waits for no writer, only for this lock
            if not self._read_lock.acquire(blocking=False):
                raise WouldWait
        else:
            self._read_lock.acquire()
        try:
            return run_transaction(
                self._reader, lambda conn: work(SqliteTx(conn)), config=self.config, write=False
            )
        except UnicodeEncodeError:
            raise not_utf8() from None
        except (sqlite3.OperationalError, OSError) as error:
            if _is_disk_full(error):  # a reader's first look may need room for the -shm
                raise _disk_full(self.path, error) from None
            raise
        finally:
            self._read_lock.release()

    def change_token(self) -> int:
        """`PRAGMA data_version`: changes whenever another connection commits to the file, a ~µs
        "did anything change" that takes no lock."""
        with self._read_lock:
            return int(self._reader.execute("PRAGMA data_version").fetchone()[0])

    def checkpoint(self) -> bool:
        """Fold the write-ahead log into the main file and truncate it: a long-running process's
        last step at a clean shutdown, so the file is whole on its own. False when a reader in
        another process kept part of the log (it is folded in later, by the last one out), and
        when this process may not write the file (a server on a read-only board must still shut
        down cleanly: there is nothing of its own to fold in)."""
        if self._writer is None:
            return False
        background = self.background_checkpoints
        with self._write_lock, background.lock if background is not None else nullcontext():
            try:
                self._set_waits(self._writer, True)
                busy, _, _ = self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            except sqlite3.OperationalError as error:
                code = getattr(error, "sqlite_errorcode", 0) & 0xFF
                if code != board_file.SQLITE_READONLY and not is_transient_lock_error(error):
                    raise
                return False
        return not busy

    def schema_version(self) -> int:
        """The file's schema version, read on the query-only connection (no write lock)."""
        with self._read_lock:
            return schema_version(self._reader)

    def discard_new_board(self) -> None:
        """Remove the file this store made (it was missing), with its side files, while it holds
        no rows, and close. A file it found (an empty one it made a board in) stays."""
        from ..paths import board_files

        empty = self._made_file and self.read(
            lambda tx: not any(tx.table_rows(table) for table, _ in TABLES)
        )
        self.close()
        if empty:
            for path in board_files(self.path):
                path.unlink(missing_ok=True)
            self.created = self._made_file = False

    def close(self) -> None:
        if self.background_checkpoints is not None:
            self.background_checkpoints.close()
        with self._read_lock:
            if self._reader_conn is not None:
                self._reader_conn.close()
                self._reader_conn = None
        with self._write_lock:
            if self._writer is not None:
                self._writer.close()
                self._writer = None
            if self._queue is not None:
                self._queue.close()
                self._queue = None
        board_file.release(self._held)
        self._held = None
