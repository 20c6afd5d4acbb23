"""The PostgreSQL store: the same `Tx` statements as `sqlite.py` for a board on a database server.

Imported only when a board location is a `postgresql://` URL, so an agent's SQLite claim path never
loads psycopg (tests/walls/test_import_hygiene.py). Claims run side by side (`SKIP LOCKED`), every
other write under the board's advisory lock, and readers see events only up to the safe horizon.
How each of the SQLite store's guarantees carries over: docs/architecture.md#postgresql
"""

import functools
import hashlib
import json
import math
import random
import re
import select
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import fields
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, cast

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql
from psycopg.adapt import Transformer
from psycopg.pq import ConnStatus, ExecStatus, TransactionStatus
from psycopg.rows import BaseRowFactory, RowMaker

if TYPE_CHECKING:
    from psycopg._cursor_base import BaseCursor
    from psycopg.pq.abc import PGresult

from ..config import BoardConfig
from ..errors import BoardError, Reason, database_line, not_utf8, unstorable
from ..leases import expired_sql
from ..location import DatabaseUrl
from ..naming import camel
from ..records import Task
from ..shell import shell_command
from .base import (
    CREATING_VERBS,
    TABLES,
    TEXT_INDEX_BUILT,
    TEXT_INDEX_PRESENT,
    TEXT_INDEX_UNAVAILABLE,
    Row,
    RowEvent,
    StoreError,
    Tx,
    WouldWait,
    compact_json,
)
from .literals import IN_PROGRESS
from .pool_log import pool_news
from .postgres_schema import (
    BOARD_TABLES,
    META_DDL,
    MIGRATIONS,
    SCHEMA_VERSION,
    TEXT_INDEX_BUILD,
    TEXT_INDEX_LOOK,
)
from .queries import (
    CLAIM_ORDER,
    CLAIMABLE,
    HOLDING,
    PG_TRGM,
    READY,
    TASK_BY_ID,
    WAITING,
    Params,
    SharedTx,
    pyformat,
)
from .schema import TEXT_INDEX

T = TypeVar("T")
IDLE = TransactionStatus.IDLE
TUPLES_OK = ExecStatus.TUPLES_OK
BAD = ConnStatus.BAD

FALLBACK_POLL_S = 2.0  # change_token re-reads the horizon this often while it has no listener
# A watcher's read connection is closed once unused this long while its listener stands watch:
# an idle watcher (a TUI) holds one connection, the listener, and sends no query at all.
IDLE_CLOSE_S = 5.0
# TCP keepalives on the listener: a dead server or link is noticed by the kernel (no query), the
# listener then reconnects and the horizon is read again.
LISTENER_KEEPALIVES = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
}
CONNECT_TIMEOUT_S = 10
# How long the pool retries a lost connection (its backoff doubles: 1, 2, 4... s) before it gives
# up and leaves the next caller to try at once. psycopg-pool's 5 minutes left a server that was
# back unasked for up to half as long as it had been down: 25 s of 503s after a 47 s outage.
POOL_RECONNECT_S = 2.0


def dropped_while_idle(conn: "Conn") -> bool:
    """Whether the server closed this connection while it sat idle (a restart, a failover, an
    idle timeout): used as it is, the next transaction would fail `database_unavailable` though
    the server is back. An idle connection has nothing to read, so one poll of its socket tells,
    with no round trip; only a socket with something on it costs one (an empty query)."""
    if conn.closed or conn.broken:
        return True
    try:
        poller = select.poll()  # not select(): no limit on the descriptor's number
        poller.register(conn.fileno(), select.POLLIN)
        if not poller.poll(0) or conn.info.transaction_status != IDLE:
            return False
        conn.pgconn.consume_input()  # the server's FATAL notice and its end of the stream
        if conn.pgconn.status == ConnStatus.BAD:
            return True
        conn.execute("")
    except (psycopg.Error, OSError):
        return True
    return conn.closed or conn.broken


def _sql_ident(name: str) -> str:
    """`name` as SQL writes it in a command shown to copy: bare when it may be, else quoted."""
    if re.fullmatch(r"[a-z_][a-z0-9_$]*", name):
        return name
    return '"' + name.replace('"', '""') + '"'


# The server's refusal of a login to a database it does not have (SQLSTATE 3D000, which libpq
# does not hand on for a connection that failed: only its text tells).
_NO_DATABASE = re.compile(r'FATAL: database "(?P<name>.*)" does not exist')

# The transient errors: re-running the whole transaction later can succeed.
_RETRYABLE = (
    pg_errors.SerializationFailure,
    pg_errors.DeadlockDetected,
    pg_errors.LockNotAvailable,
)


class StoreUnavailable(StoreError):
    """The server could not be reached or dropped the connection (password never shown)."""


class PgRow:
    """A result row readable like `sqlite3.Row`: by column name, by position, `keys()`."""

    __slots__ = ("_names", "_values")

    def __init__(self, values: Sequence[Any], names: dict[str, int]) -> None:
        self._values = values
        self._names = names

    def keys(self) -> list[str]:
        return list(self._names)

    def __getitem__(self, key: int | str, /) -> Any:
        if isinstance(key, str):
            return self._values[self._names[key]]
        return self._values[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"PgRow({dict(zip(self._names, self._values, strict=True))!r})"


_NAME_MAPS: dict[tuple[bytes | None, ...], dict[str, int]] = {}


def _names_of(result: "PGresult | None") -> dict[str, int]:
    """A result's column names by position, the map shared by every result of the same shape."""
    # map, not a generator: 2.6 us for a task's 51 columns instead of 4.6
    fields = tuple(map(result.fname, range(result.nfields))) if result is not None else ()
    names = _NAME_MAPS.get(fields)
    if names is None:
        names = _NAME_MAPS[fields] = {(name or b"?").decode(): i for i, name in enumerate(fields)}
    return names


def _pg_row(cursor: "BaseCursor[Any, Any]") -> "RowMaker[PgRow]":
    """Column names straight from the result (`cursor.description` builds a `Column` object per
    column per statement: ~10% of a claim's client CPU), read at the first row (a result nobody
    fetches from costs nothing)."""
    result = cursor.pgresult
    names: dict[str, int] | None = None

    def make(values: Sequence[Any]) -> PgRow:
        nonlocal names
        if names is None:
            names = _names_of(result)
        return PgRow(values, names)

    return make


_ROW_FACTORY: BaseRowFactory[PgRow] = _pg_row
Conn = psycopg.Connection[PgRow]


_CLAIM_SET = f"""
    status = {IN_PROGRESS},
    assignee_agent_id = %(agent)s,
    assignee_runtime = %(runtime)s,
    claimed_by = COALESCE(claimed_by, %(agent)s),
    holders = CASE
        WHEN holders::jsonb ? %(agent)s THEN holders
        ELSE (holders::jsonb || jsonb_build_array(%(agent)s::text))::text
    END,
    claim_epoch = claim_epoch + 1,
    lease_until = %(lease_until)s,
    last_heartbeat_at = %(now)s,
    attempts = attempts + 1,
    blocked_reason = NULL,
    first_claimed_at = COALESCE(first_claimed_at, %(now)s),
    updated_at = %(now)s,
    status_since = %(now)s
"""

_EXPIRED = expired_sql("%s")
_TASK_BY_ID_LOCKED = f"{TASK_BY_ID} FOR NO KEY UPDATE"


# The claims also claim nothing while an expired lease waits to be released (as on SQLite: the
# board then releases expired leases and claims again, so an abandoned task competes the moment its
# lease lapses, and a claim needs no release statement of its own). With claims side by side, "an
# expired lease exists" is not enough: another claimer may be releasing it right now, and this
# one's release would skip it (SKIP LOCKED), find nothing, and report an empty board. So the probe
# locks one expired row nobody else holds (this transaction's own release then takes it) and
# ignores rows other releasers hold.
_EXPIRED_UNTAKEN = (
    f"expired_untaken AS (SELECT 1 FROM tasks WHERE status = {IN_PROGRESS} "
    f"AND {expired_sql('%(now)s')} LIMIT 1 FOR NO KEY UPDATE SKIP LOCKED)"
)
_NO_EXPIRED_UNTAKEN = "NOT EXISTS (SELECT 1 FROM expired_untaken)"

# A claim writes its own `task_claimed` event in the same statement (the payload is the claimed
# row's new epoch spliced between the declared head and tail of its JSON), so one statement is
# the whole transaction: sent with BEGIN, COMMIT and the NOTIFY, a claim is one round trip. The
# last row says whether an expired lease held the claim back, and, sent in one trip, marks the
# session for the NOTIFY that follows the COMMIT (only a claim that claimed wakes listeners).
_CLAIM_EVENT = (
    "event AS (INSERT INTO events "
    "(seq, task_id, kind, actor, data, created_at, ttl_seconds, tenant_id) "
    "SELECT nextval('event_seq'), c.id, %(event_kind)s::text, %(agent)s::text, "
    "%(data_head)s::text || c.claim_epoch || %(data_tail)s::text, %(now)s::bigint, "
    "%(ttl)s::bigint, c.tenant_id "
    "FROM (SELECT pg_current_xact_id()) AS xid, claimed c WHERE %(event_kind)s::text IS NOT NULL)"
)
NOTIFY_SETTING = "kanban.notify"
_MARK_NOTIFY = f", CASE WHEN c.id IS NOT NULL THEN set_config('{NOTIFY_SETTING}', '1', false) END"
# The types of the claims' parameters, for their server-side prepared statements.
_CLAIM_PARAMETER_TYPES = {
    "id": "text", "agent": "text", "runtime": "text", "now": "bigint", "lease_until": "bigint",
    "role": "text", "team": "text", "event_kind": "text", "data_head": "text",
    "data_tail": "text", "ttl": "bigint", "epoch": "bigint", "data": "text",
}  # fmt: skip
_PARAMETER = re.compile(r"%\((\w+)\)s")


def _claim_statement(ctes: str, update: str, *, one_trip: bool) -> str:
    """The claim `update` (`UPDATE ... RETURNING tasks.*`) after `ctes`, with its event, as one
    statement whose one row is (held_back, the claimed row or NULLs[, the notify mark])."""
    mark = _MARK_NOTIFY if one_trip else ""
    return (
        f"WITH {ctes}, claimed AS ({update}), {_CLAIM_EVENT} "
        f"SELECT (SELECT count(*) FROM expired_untaken) AS held_back, c.*{mark} "
        "FROM (SELECT 1) AS one LEFT JOIN claimed c ON true"
    )


@functools.lru_cache(maxsize=64)
def _prepared(statement: str) -> tuple[str, str, tuple[str, ...]]:
    """A claim statement as a server-side prepared statement: its name (from its text), the
    PREPARE, and its parameters in `$n` order."""
    order: list[str] = []

    def number(match: "re.Match[str]") -> str:
        name = match.group(1)
        if name not in order:
            order.append(name)
        return f"${order.index(name) + 1}"

    text = _PARAMETER.sub(number, statement)
    name = "kanban_claim_" + hashlib.sha256(statement.encode()).hexdigest()[:16]
    types = ", ".join(_CLAIM_PARAMETER_TYPES[parameter] for parameter in order)
    return name, f"PREPARE {name} ({types}) AS {text}", tuple(order)


# The events of one transaction, their values written in as literals (sent in one simple query
# with COMMIT). `pg_current_xact_id()` in FROM is evaluated before `nextval`: the transaction has
# its xid before it holds a seq, which the safe horizon's proof relies on. Every literal carries
# its type, so a column of NULLs in VALUES still inserts as what the table holds.
_INSERT_EVENTS = (
    "INSERT INTO events (seq, task_id, kind, actor, data, created_at, ttl_seconds, tenant_id) "
    "SELECT nextval('event_seq'), e.* FROM (SELECT pg_current_xact_id()) AS xid, (VALUES {rows}) "
    "AS e(task_id, kind, actor, data, created_at, ttl_seconds, tenant_id)"
)
_EVENT_TYPES = ("text", "text", "text", "text", "bigint", "bigint", "text")


@functools.cache
def _best_ready_ctes(by_role: bool, respect_deps: bool, by_team: bool, *, claim: bool) -> str:
    """The `pick` CTE of claim-next: the best ready row for a role (role-less tasks suit every
    role) and team. For the claim each candidate locks its row (`SKIP LOCKED`, past rows other
    claimers hold) and yields while an expired lease waits to be swept; its preview (`claim`
    False) reads the same candidates without either."""
    ready, waiting = READY, WAITING
    if by_team:  # a filter on the same index walk
        ready += " AND team_id = %(team)s"
        waiting += " AND team_id = %(team)s"
    candidates = [ready] if not by_role else [f"{ready} AND role = %(role)s",
                                              f"{ready} AND role IS NULL"]  # fmt: skip
    if not respect_deps:
        candidates.append(
            waiting if not by_role else f"{waiting} AND (role = %(role)s OR role IS NULL)"
        )
    guard = f"AND {_NO_EXPIRED_UNTAKEN} " if claim else ""
    lock = " FOR NO KEY UPDATE SKIP LOCKED" if claim else ""
    picks = [
        f"SELECT id, priority, updated_at FROM tasks WHERE {where} "
        f"{guard}{CLAIM_ORDER} LIMIT 1{lock}"
        for where in candidates
    ]
    if len(picks) == 1:
        return f"pick AS ({picks[0]})"
    # a locking clause is not allowed under UNION: each candidate locks in its own CTE
    ctes = ", ".join(f"c{n} AS ({query})" for n, query in enumerate(picks))
    union = " UNION ALL ".join(f"SELECT * FROM c{n}" for n in range(len(picks)))
    return ctes + f", pick AS (SELECT id FROM ({union}) c {CLAIM_ORDER} LIMIT 1)"


@functools.lru_cache(maxsize=32)
def _claim_best_ready_sql(by_role: bool, respect_deps: bool, by_team: bool, one_trip: bool) -> str:
    """The claim-next statement for one shape (a role or not, a team or not), built once."""
    ctes = _best_ready_ctes(by_role, respect_deps, by_team, claim=True)
    return _claim_statement(
        f"{_EXPIRED_UNTAKEN}, {ctes}",
        f"UPDATE tasks SET {_CLAIM_SET} FROM pick WHERE tasks.id = pick.id AND {CLAIMABLE} "
        "RETURNING tasks.*",
        one_trip=one_trip,
    )


@functools.lru_cache(maxsize=2)
def _renew_sql(one_trip: bool) -> str:
    """The holder's renewal with its event, one statement shaped as the claims are (`held_back`
    is always 0: a renewal releases nothing)."""
    mark = _MARK_NOTIFY if one_trip else ""
    return (
        "WITH claimed AS (UPDATE tasks SET lease_until = %(lease_until)s, "
        f"last_heartbeat_at = %(now)s WHERE id = %(id)s AND {pyformat(HOLDING)} "
        "RETURNING tasks.*), "
        "event AS (INSERT INTO events "
        "(seq, task_id, kind, actor, data, created_at, ttl_seconds, tenant_id) "
        "SELECT nextval('event_seq'), c.id, %(event_kind)s::text, %(agent)s::text, "
        "%(data)s::text, %(now)s::bigint, %(ttl)s::bigint, c.tenant_id "
        "FROM (SELECT pg_current_xact_id()) AS xid, claimed c) "
        f"SELECT 0 AS held_back, c.*{mark} FROM (SELECT 1) AS one LEFT JOIN claimed c ON true"
    )


_EVENT_PARAMETERS: dict[RowEvent, dict[str, Any]] = {}


def _event_parameters(event: RowEvent | None) -> dict[str, Any]:
    """A claim event's parameters: its kind, the JSON of its payload around the epoch, its TTL
    (all NULL for a claim that writes no event). The board's claim events are a few constants:
    each is worked out once."""
    if event is None:
        return {"event_kind": None, "data_head": None, "data_tail": None, "ttl": None}
    known = _EVENT_PARAMETERS.get(event)
    if known is None:
        known = _event_json(event)
        if len(_EVENT_PARAMETERS) < 64:  # the board's own few; anything else is not kept
            _EVENT_PARAMETERS[event] = known
    return known


def _event_json(event: RowEvent) -> dict[str, Any]:
    rest = json.dumps(dict(event.data), separators=(",", ":"))
    return {
        "event_kind": event.kind,
        "data_head": "{" + json.dumps(event.epoch_key) + ":",
        "data_tail": "}" if rest == "{}" else "," + rest[1:],
        "ttl": event.ttl_seconds,
    }


def _task_document() -> str:
    """`SharedTx.TASK_DOCUMENT` in Postgres's: the row under `Task.to_json`'s keys, in its field
    order, made compact JSON by `row_to_json` (`json_build_object` pads every key with spaces)."""
    columns = ", ".join(
        f'tasks.{f.name}{"::json" if f.name in Task._json_columns else ""} AS "{camel(f.name)}"'
        for f in fields(Task)
    )
    return f"(SELECT row_to_json(document) FROM (SELECT {columns}) AS document)::text"


def _task(row: Row | None) -> Task | None:
    return None if row is None else Task.from_row(row)


class PostgresTx(SharedTx):
    """The statements of one transaction on Postgres (see `base.Tx` for what each promises). The
    statements both stores share are `SharedTx`'s, run through the seam below; here are only the
    ones that must differ, each saying why, written in psycopg's own `%s` style."""

    LIKE_ANY_CASE = "ILIKE"  # SQLite's LIKE ignores case (for ASCII): the same search, same rows
    JSON_TEXT = "({column}::jsonb ->> '{key}')"  # Differs: JSON functions are dialect
    TASK_DOCUMENT = _task_document()

    def __init__(
        self,
        conn: Conn,
        store: "PostgresStore",
        *,
        locking: bool,
        one_trip_ms: int | None = None,
        begin: tuple[str, ...] = (),
    ) -> None:
        self._conn = conn
        # The transaction's opening statements (BEGIN, its lock timeout, the board lock), not sent
        # yet: they travel with the first statement, one round trip for both (`_first`).
        self._begin = begin
        self.store = store
        self.locking = locking  # a serialised write: rows read to be judged are locked
        if locking:  # FOR NO KEY UPDATE, not FOR UPDATE: docs/architecture.md#postgresql
            self.task_by_id = _TASK_BY_ID_LOCKED
        self._events: list[tuple[Any, ...]] = []
        # `PostgresStore.claim`: the one claim statement is the whole transaction, sent with its
        # BEGIN (this lock timeout) and COMMIT; any other statement is a mistake.
        self.one_trip_ms = one_trip_ms
        self.claimed = False  # a claim statement claimed (and wrote its event): NOTIFY at COMMIT
        self.flushed = False  # queued events were written before COMMIT: NOTIFY at COMMIT too
        self.held_back = False  # an expired lease held the last claim statement back

    # -- the seam: the shared `?` / `:name` text in psycopg's style, converted once per text ----

    # Differs: each store's own text index (Postgres's made only where pg_trgm is available;
    # where it is not, a short word written for it reads the same rows the same way).
    def _text_index(self) -> str | None:
        return PG_TRGM

    def _fetchall(self, query: str, params: Params = ()) -> list[Row]:
        return self._all(pyformat(query), params)

    def _fetchone(self, query: str, params: Params = ()) -> Row | None:
        return self._one(pyformat(query), params)

    def _execute(self, query: str, params: Params = ()) -> int:
        self._not_one_trip()
        return self._first(pyformat(query), params).rowcount

    def _executemany(self, query: str, rows: list[Sequence[Any]]) -> None:
        # executemany streams in pipeline mode (COPY cannot run inside a pipeline)
        self.conn.cursor().executemany(pyformat(query), rows)

    def _all(self, query: str, params: Any = None) -> list[Row]:
        self._not_one_trip()
        rows: list[Row] = [*self._first(query, params).fetchall()]
        return rows

    def _one(self, query: str, params: Any = None) -> Row | None:
        self._not_one_trip()
        row: Row | None = self._first(query, params).fetchone()
        return row

    def _each(self, statements: list[tuple[str, Params]]) -> list[list[Row]]:
        """One simple query for all of them (with the opening statements when they have not gone
        yet), their parameters written in by psycopg's client-side binding: each one's rows."""
        self._not_one_trip()
        mogrify = psycopg.ClientCursor(self._conn).mogrify
        texts = [mogrify(pyformat(query), params) for query, params in statements]
        cursor = self._first("; ".join(texts), None)  # no parameters: nothing read as `%s`
        results: list[list[Row]] = []
        for index in range(len(texts)):
            if index:
                cursor.nextset()
            results.append([*cursor.fetchall()] if cursor.description is not None else [])
        return results

    @property
    def conn(self) -> Conn:
        """The connection, for a statement sent as it is: the opening statements go first when
        they have not gone yet (a round trip of their own)."""
        if self._begin:
            begin, self._begin = self._begin, ()
            self._conn.execute("; ".join(begin))
        return self._conn

    @property
    def begun(self) -> bool:
        """Whether the opening statements went (else nothing of the transaction did)."""
        return not self._begin

    def _first(self, query: str, params: Any) -> "psycopg.Cursor[Row]":
        """`query` run; the first of the transaction travels with its opening statements in one
        simple query, its parameters written in by psycopg's client-side binding (a write's
        first statement is the read of what it judges: one round trip fewer for each)."""
        if not self._begin:
            return self._conn.execute(query, params)
        begin, self._begin = self._begin, ()
        cursor = psycopg.ClientCursor(self._conn)
        cursor.execute("; ".join((*begin, query)), params)
        for _ in begin:
            cursor.nextset()
        return cursor

    def _not_one_trip(self) -> None:
        if self.one_trip_ms is not None:
            raise RuntimeError("a one-trip claim transaction runs its claim statement only")

    # -- tasks ----------------------------------------------------------------------------------

    # Differs: Postgres binds the ids as one array (one statement text for any number of ids).
    def tasks_by_id(self, task_ids: Iterable[str]) -> list[Row]:
        ids = list(task_ids)
        if not ids:
            return []
        return self._all("SELECT * FROM tasks WHERE id = ANY(%s) ORDER BY seq", (ids,))

    # Differs: the claims are each store's own protocol (Postgres: claims run side by side, so the
    # pick is FOR NO KEY UPDATE SKIP LOCKED and holders are kept with jsonb operators).
    def claim_by_id(
        self,
        task_id: str,
        agent: str,
        runtime: str | None,
        now: int,
        lease_until: int,
        event: RowEvent | None = None,
    ) -> Task | None:
        """The guarded UPDATE: a racing claimer waits for the row lock, then re-checks the guard
        against the committed row and matches nothing."""
        statement = _claim_statement(
            _EXPIRED_UNTAKEN,
            f"UPDATE tasks SET {_CLAIM_SET} WHERE id = %(id)s AND {CLAIMABLE} "
            f"AND unmet_deps = 0 AND {_NO_EXPIRED_UNTAKEN} RETURNING tasks.*",
            one_trip=self.one_trip_ms is not None,
        )
        params = {"id": task_id, "agent": agent, "runtime": runtime, "now": now,
                  "lease_until": lease_until}  # fmt: skip
        return self._guarded(statement, params | _event_parameters(event))

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
        """Lock the best ready row nobody else has locked (`FOR UPDATE SKIP LOCKED` down the ready
        partial index), then claim it with the guarded UPDATE, in one statement. With a role, the
        role's own tasks and role-less ones are two index ranges: each gives its best unlocked row
        and the better one is claimed (the other stays locked until COMMIT, so a concurrent claimer
        takes the next one instead)."""
        statement = _claim_best_ready_sql(
            role is not None, respect_deps, team_id is not None, self.one_trip_ms is not None
        )
        params = {"agent": agent, "runtime": runtime, "now": now, "lease_until": lease_until,
                  "role": role, "team": team_id}  # fmt: skip
        return self._guarded(statement, params | _event_parameters(event))

    def claim_held_back(self, now: int) -> bool:
        """Read off the claim statement's own row: no statement of its own."""
        return self.held_back

    def renew_lease(
        self,
        task_id: str,
        agent: str,
        epoch: int | None,
        now: int,
        lease_until: int,
        event: RowEvent,
    ) -> Task | None:
        params = {
            "id": task_id, "agent": agent, "epoch": epoch, "now": now, "lease_until": lease_until,
            "event_kind": event.kind, "ttl": event.ttl_seconds,
            "data": json.dumps(event.payload(0), separators=(",", ":")),
        }  # fmt: skip
        return self._guarded(_renew_sql(self.one_trip_ms is not None), params)

    def _guarded(self, statement: str, params: dict[str, Any]) -> Task | None:
        """Run a one-statement write (a claim, a renewal): in one round trip with its transaction
        when this is a one-trip transaction, else as one statement of the transaction under way
        (its queued events written first, so the log keeps the order things happened in)."""
        row: Row | None
        if self.one_trip_ms is None:
            self.flush_events()
            row = self._first(statement, params).fetchone()
        else:
            row = self.store.claim_in_one_trip(self.conn, statement, params, self.one_trip_ms)
        assert row is not None
        self.held_back = bool(row["held_back"])
        if row["id"] is None:
            return None
        self.claimed = True
        return Task.from_row(row)

    # Differs: the claim-next pick itself, without the locks the claim takes.
    def best_ready(
        self, role: str | None, respect_deps: bool, team_id: str | None = None
    ) -> Row | None:
        """The task `claim_best_ready` would pick right now, by the same candidate queries
        without their locks (a read-only transaction may take none): a preview, written nothing."""
        ctes = _best_ready_ctes(role is not None, respect_deps, team_id is not None, claim=False)
        return self._one(
            f"WITH {ctes} SELECT tasks.* FROM tasks JOIN pick ON tasks.id = pick.id",
            {"role": role, "team": team_id},
        )

    # Differs: releasers run side by side here, so each locks what it releases (SKIP LOCKED); SQLite
    # pins its lease index instead.
    def expired_leases(self, now: int, limit: int | None = None) -> list[Row]:
        """Locked by this transaction alone (`SKIP LOCKED`): concurrent releasers split the work."""
        return self._all(
            f"SELECT * FROM tasks WHERE status = {IN_PROGRESS} AND {_EXPIRED} "
            "ORDER BY lease_until LIMIT %s FOR NO KEY UPDATE SKIP LOCKED",
            (now, limit),
        )

    # Differs: SQLite's twin pins its lease index with INDEXED BY (Postgres has no index hints).
    def any_lease_expired(self, now: int) -> bool:
        row = self._one(
            f"SELECT 1 FROM tasks WHERE status = {IN_PROGRESS} AND {_EXPIRED} LIMIT 1", (now,)
        )
        return row is not None

    # -- events ---------------------------------------------------------------------------------

    # Differs: events are queued and numbered from a sequence just before COMMIT (see the module's
    # docstring); SQLite writes each at once, numbered by its rowid.
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
        """Queued, and written in one statement just before COMMIT (`flush_events`): the seq is
        taken as late as possible, which keeps the window in which a later seq can commit first
        as short as the COMMIT itself."""
        payload = compact_json(data)
        self._events.append((task_id, kind, actor, payload, now, ttl_seconds, tenant))

    def flush_events(self) -> int:
        """Write the queued events now (for a transaction that reads the log after writing it)."""
        count = len(self._events)
        statement = self.events_statement()
        if statement:
            self.conn.execute(statement)
            self.flushed = True
        return count

    def events_statement(self) -> str:
        """The queued events as one INSERT with its values written in (the store sends it with the
        COMMIT, one round trip for both), or "" when none are queued. The values are quoted by
        libpq's own `PQescapeLiteral` for this connection, not by `ClientCursor.mogrify` of seven
        arrays (psycopg's array dumpers: about a fifth of a claim's client CPU)."""
        queued, self._events = self._events, []
        if not queued:
            return ""
        escape = psycopg.pq.Escaping(self._conn.pgconn).escape_literal
        encoding = self._conn.info.encoding

        def literal(value: Any, kind: str) -> str:
            if value is None:
                return f"NULL::{kind}"
            if kind == "bigint":
                return f"{int(value)}::bigint"
            return escape(str(value).encode(encoding)).decode(encoding)

        rows = ", ".join(
            "(" + ", ".join(map(literal, event, _EVENT_TYPES)) + ")" for event in queued
        )
        return _INSERT_EVENTS.format(rows=rows)

    # Differs, as the next two: seqs commit out of order here, so reads stop at the safe horizon.
    def events(self, *, since: int = 0, task_id: str | None = None, limit: int = 1000) -> list[Row]:
        horizon = self.safe_horizon()
        if task_id is None:
            return self._all(
                "SELECT * FROM events WHERE seq > %s AND seq <= %s ORDER BY seq LIMIT %s",
                (since, horizon, limit),
            )
        return self._all(
            "SELECT * FROM events WHERE task_id = %s AND seq > %s AND seq <= %s "
            "ORDER BY seq LIMIT %s",
            (task_id, since, horizon, limit),
        )

    def recent_events(self, *, task_id: str | None = None, limit: int = 50) -> list[Row]:
        """Newest first, up to the safe horizon: what a live view shows is what its cursor will
        then follow from, with nothing shown twice."""
        horizon = self.safe_horizon()
        if task_id is None:
            return self._all(
                "SELECT * FROM events WHERE seq <= %s ORDER BY seq DESC LIMIT %s", (horizon, limit)
            )
        return self._all(
            "SELECT * FROM events WHERE task_id = %s AND seq <= %s ORDER BY seq DESC LIMIT %s",
            (task_id, horizon, limit),
        )

    def last_event_seq(self) -> int:
        return self.safe_horizon()

    # Differs: seqs commit out of order here, so the newest seq alone does not tell two snapshots
    # apart; the safe horizon and the seqs this snapshot sees above it do.
    def list_version(self) -> str:
        horizon = self.safe_horizon()
        above = self._all("SELECT seq FROM events WHERE seq > %s ORDER BY seq", (horizon,))
        return ",".join([str(horizon), *(str(row[0]) for row in above)])

    def safe_horizon(self) -> int:
        """The highest seq at or below which this snapshot's log is complete for good."""
        self.flush_events()
        return self.store.horizon.advance(self.conn)

    # Differs: the shared read, with this transaction's queued events written first.
    def status_entry(self, task_id: str) -> Row | None:
        self.flush_events()
        return super().status_entry(task_id)

    # Differs: the shared read, with this transaction's queued events written first.
    def gate_entry(self, task_id: str) -> Row | None:
        self.flush_events()
        return super().gate_entry(task_id)

    # Differs: the shared read, with this transaction's queued events written first.
    def gate_entries(self, task_ids: Sequence[str]) -> dict[str, Row]:
        self.flush_events()
        return super().gate_entries(task_ids)

    # Differs: the shared purge, with the queued events written first and the horizon persisted.
    def purge_expired_events(self, now: int, limit: int) -> int:
        self.flush_events()
        purged = super().purge_expired_events(now, limit)
        self.store.horizon.persist(self.conn)
        return purged

    # -- health and whole-board copies -----------------------------------------------------------

    # Differs, as the next two: the catalog and board_meta, not SQLite's PRAGMAs; sequences to move.
    def integrity_problems(self, *, full: bool = False) -> list[str]:
        """What Postgres can still get wrong for us: an index left invalid by a failed concurrent
        build, a sequence behind the rows it numbers (after a careless restore), a table missing."""
        problems: list[str] = []
        present = {
            row[0]
            for row in self._all(
                "SELECT c.relname FROM pg_class c "
                "WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'"
            )
        }
        for table, _ in TABLES:
            if table not in present:
                problems.append(f"table {table} is missing")
        for row in self._all(
            "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE c.relnamespace = current_schema()::regnamespace "
            "AND NOT (i.indisvalid AND i.indisready)"
        ):
            if row[0] != TEXT_INDEX:
                problems.append(f"index {row[0]} is invalid (rebuild it with REINDEX)")
        look = self._one(TEXT_INDEX_LOOK)
        assert look is not None  # one row, always
        if look[2] is False or (look[2] is None and look[0] is not None):
            what = (
                "missing, though pg_trgm is installed"
                if look[2] is None
                else "invalid, left so by a build that did not finish"
            )
            problems.append(
                f"the text index {TEXT_INDEX} is {what}: searches "
                "read every task; `kanban db migrate`, run by a role owning the board's tables, "
                "builds it without stopping writers"
            )
        if "events" in present:
            numbers = self._one(
                "SELECT (SELECT last_value FROM event_seq), (SELECT COALESCE(MAX(seq), 0) "
                "FROM events)"
            )
            assert numbers is not None
            if numbers[0] < numbers[1]:
                problems.append(
                    f"event_seq is at {numbers[0]}, behind the newest event {numbers[1]}"
                )
        return problems

    def schema_version(self) -> int:
        row = self._one("SELECT schema_version FROM board_meta")
        return int(row[0]) if row is not None and row[0] is not None else 0

    def finish_load(self) -> None:
        """Sequences past the loaded keys, and the loaded log known complete up to its end."""
        self.conn.execute(
            "SELECT setval('event_seq', GREATEST((SELECT COALESCE(MAX(seq), 0) FROM events), 1), "
            "(SELECT COUNT(*) > 0 FROM events))"
        )
        self.conn.execute(
            "SELECT setval(pg_get_serial_sequence('audit', 'seq'), "
            "GREATEST((SELECT COALESCE(MAX(seq), 0) FROM audit), 1), "
            "(SELECT COUNT(*) > 0 FROM audit))"
        )
        self.conn.execute(
            "UPDATE event_horizon SET safe_seq = (SELECT COALESCE(MAX(seq), 0) FROM events)"
        )


# mypy --strict checks here that the shared statements and Postgres's own make the whole `Tx`.
_IMPLEMENTS_TX: type[Tx] = PostgresTx


class _EventHorizon:
    """The proof that the event log is complete up to some seq, kept between reads.

    `safe` is the highest seq at or below which every seq is committed or final. `final_below`:
    every missing seq below it will never appear. `pending` is a claim waiting to be proven: every
    missing seq at or below `pending_top` is final once all of `pending_xids` have finished.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.safe = -1  # unknown until the first read (then at least the persisted value)
        self.final_below = 0
        self.pending: tuple[int, frozenset[int]] | None = None

    def advance(self, conn: Conn) -> int:
        """Update the proof with this transaction's snapshot and return the safe horizon for it.
        Two statements at most; the second (a gap scan) only while other transactions run."""
        row = conn.execute(
            "SELECT (SELECT COALESCE(MAX(seq), 0) FROM events), "
            "ARRAY(SELECT x::text::bigint FROM pg_snapshot_xip(pg_current_snapshot()) AS x), "
            "(SELECT safe_seq FROM event_horizon)"
        ).fetchone()
        assert row is not None
        top, xip, persisted = int(row[0]), frozenset(row[1]), int(row[2] or 0)
        with self._lock:
            if self.safe < persisted:
                self.safe = persisted
                self.final_below = max(self.final_below, persisted + 1)
            if self.pending is not None and not (self.pending[1] & xip):
                self.final_below = max(self.final_below, self.pending[0] + 1)
            if not xip:
                self.final_below = max(self.final_below, top + 1)
                self.pending = None
            else:
                self.pending = (top, xip)
            start, final_below = self.safe + 1, self.final_below
        if top < start:
            return start - 1
        if final_below > top:
            safe = top
        else:
            gap = conn.execute(
                """
                SELECT MIN(s.prev) FROM (
                    SELECT seq, lag(seq, 1, %(start)s - 1) OVER (ORDER BY seq) AS prev
                    FROM events WHERE seq >= %(start)s AND seq <= %(top)s
                ) s
                WHERE s.seq > s.prev + 1 AND s.seq - 1 >= %(final_below)s
                """,
                {"start": start, "top": top, "final_below": final_below},
            ).fetchone()
            safe = top if gap is None or gap[0] is None else int(gap[0])
        with self._lock:
            self.safe = max(self.safe, safe)
            return self.safe

    def persist(self, conn: Conn) -> None:
        """Prove the horizon now and record it for every other reader (inside a write)."""
        safe = self.advance(conn)
        if safe > 0:
            conn.execute("UPDATE event_horizon SET safe_seq = GREATEST(safe_seq, %s)", (safe,))


class _Survey(NamedTuple):
    """What an opener found in its schema: its name, the board's version (None: no board) and,
    with no board, the tables of kanban's names someone else keeps there."""

    schema: str | None
    version: int | None
    foreign: tuple[str, ...]


_KANBAN_TABLES = ", ".join(f"'{table}'" for table, _ in TABLES)  # our own names: safe literals
_SURVEY = (
    "SELECT current_schema(), EXISTS (SELECT 1 FROM pg_class WHERE relname = 'board_meta' "
    "AND relnamespace = current_schema()::regnamespace), "
    "(SELECT array_agg(relname::text ORDER BY relname) FROM pg_class WHERE relnamespace = "
    f"current_schema()::regnamespace AND relkind IN ('r', 'p') AND relname IN ({_KANBAN_TABLES}))"
)


def text_index_lock(schema: str) -> int:
    """The key of the session lock a late text index's builder holds (`build_text_index`): its
    own, so no writer of the board waits on it."""
    digest = hashlib.sha256(f"kanban-text-index:{schema}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


# How often a late text index's builder asks again whether another one is done.
_BUILDER_POLL_S = 0.1


def board_lock_and_channel(schema: str) -> tuple[int, str]:
    """The board's advisory lock key and NOTIFY channel, from its schema (a database can hold one
    board per schema; advisory locks are per database already)."""
    digest = hashlib.sha256(f"kanban:{schema}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True), f"kanban_{digest[8:16].hex()}"


# A one-trip claim with at least the retry budget less this left runs under the connection's
# own lock timeout (the budget); one with less left sets its own (`SET LOCAL`).
LOCK_TIMEOUT_SLACK_MS = 50


class _OneTrip:
    """One connection's set-up for one-trip claims: the statements it has prepared, its session
    lock timeout, a cursor, libpq's quoting and a result loader, made once instead of per claim."""

    __slots__ = (
        "cursor", "encoding", "literal", "loader", "lock_timeout_ms", "names", "notify_inside",
        "pgconn", "prepared",
    )  # fmt: skip

    def __init__(self, conn: Conn) -> None:
        self.prepared: set[str] = set()
        self.lock_timeout_ms: int | None = None  # the session's, once this store set it
        # Commits here never wait for a WAL flush: a NOTIFY inside the claim costs nothing extra
        setting = conn.execute("SHOW synchronous_commit").fetchone()
        self.notify_inside = setting is not None and setting[0] == "off"
        self.cursor = conn.cursor()
        self.pgconn = conn.pgconn
        self.loader = Transformer(conn)
        self.names: dict[str, dict[str, int]] = {}  # each prepared statement's columns
        escape = psycopg.pq.Escaping(conn.pgconn).escape_literal
        encoding = self.encoding = conn.info.encoding

        def literal(value: Any) -> str:
            if value is None:
                return "NULL"
            if value.__class__ is int:
                return str(value)
            if isinstance(value, int):
                return str(int(value))
            return escape(str(value).encode(encoding)).decode(encoding)

        self.literal = literal

    def execute_prepared(self, name: str, values: list[Any]) -> PgRow:
        """The prepared statement `name` run as its own transaction through libpq's
        `PQexecPrepared`: Bind and Execute in one flight, the parameters sent as text (the types
        are the PREPARE's), the one row loaded by psycopg's own loaders. It is the floor's
        protocol (benchmarks/claim_floor.py) without the cursor's machinery, which cost a claim
        more client CPU than the rest of it (117 -> 44 us measured, client side, 1 process).
        libpq waits with the GIL released; a KeyboardInterrupt lands when the statement ends,
        which the session's lock timeout (the retry budget) bounds."""
        encoding = self.encoding
        arguments: list[bytes | None] = []
        for value in values:
            if value is None:
                arguments.append(None)
                continue
            text = str(int(value)) if isinstance(value, int) else str(value)
            if "\0" in text:  # a C string cannot carry it: refused as psycopg's dumper refuses it
                raise psycopg.DataError("PostgreSQL text fields cannot contain NUL (0x00) bytes")
            arguments.append(text.encode(encoding))
        # None is NULL, as libpq takes it (psycopg's stub leaves it out here, though not for
        # send_query_prepared, which shares the implementation)
        result = self.pgconn.exec_prepared(name.encode(), cast("list[bytes]", arguments))
        if result.status != TUPLES_OK:
            if self.pgconn.status == BAD:  # as psycopg's own wait says a lost connection
                message = result.get_error_message(encoding).strip() or "the connection was lost"
                raise psycopg.OperationalError(message)
            raise pg_errors.error_from_result(result, encoding=encoding)
        self.loader.set_pgresult(result)
        names = self.names.get(name)
        if names is None:  # a statement's columns are its own: read once
            names = self.names[name] = _names_of(result)
        return self.loader.load_row(0, lambda values: PgRow(values, names))


class PostgresStore:
    """A board in a Postgres schema. Thread-safe: a plain connection behind a lock, or a pool."""

    def __init__(
        self,
        url: DatabaseUrl,
        config: BoardConfig,
        *,
        read_only: bool = False,
        create: bool = True,
        pool_size: int | None = None,
    ) -> None:
        """Open the board in the URL's schema. Nothing is written to look: a schema without a
        board is `no_board` unless `create` (then the board's tables are made in it), a schema
        holding tables of kanban's names but no board is `not_a_board` and stays untouched."""
        self.url = url
        self.config = config
        self.read_only = read_only
        self.horizon = _EventHorizon()
        self._lock = threading.Lock()
        self._conn: Conn | None = None
        self._pool: Any = None
        self._pool_name = ""
        self._listener: Conn | None = None
        self._token: int | None = None
        self._token_read_at = 0.0
        self._conn_used_at = 0.0
        self._at_once = threading.local()
        # What each connection has set up for one-trip claims (a connection is one thread's at a
        # time: the pool's or the plain one's lock).
        self._one_trips: weakref.WeakKeyDictionary[Conn, _OneTrip] = weakref.WeakKeyDictionary()
        self._inside: dict[str, str] = {}
        self.migrations_applied = 0
        self.created = False
        try:
            self._open(create=create, pool_size=pool_size)
        except BaseException:
            # refused (no board, not a board, no schema, no rights) or failed once connected: the
            # connection or pool goes now, not when the collector finds this store (a traceback
            # kept by the caller keeps it, and its server backend, open)
            self.close()
            raise

    def _open(self, *, create: bool, pool_size: int | None) -> None:
        """Connect, find the board in the schema and make or upgrade it, as `__init__` says."""
        url, read_only = self.url, self.read_only
        if pool_size is not None and pool_size > 1:
            from psycopg_pool import ConnectionPool

            # One plain connection first: a login the server refuses (no such database, a wrong
            # password) is libpq's reason at once, where the pool would retry it for
            # CONNECT_TIMEOUT_S, logging each try, then say only "pool initialization incomplete".
            self._connect().close()
            news = pool_news()  # its retries told once an outage, not twice a second
            self._pool_name = news.watch(url.display)
            self._pool = ConnectionPool(
                url.conninfo,
                min_size=1,
                max_size=pool_size,
                kwargs=self._connect_kwargs(),
                open=False,
                name=self._pool_name,
                configure=functools.partial(news.connected, self._pool_name),
                reconnect_timeout=POOL_RECONNECT_S,
            )
            try:
                self._pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
            except Exception as error:
                self._pool.close()
                raise self._unavailable(error) from None
        with self._connection() as conn:
            try:
                found = self._survey(conn)
            except pg_errors.InsufficientPrivilege as error:  # board_meta it may not read
                raise self._not_permitted(error, write=False) from None
            if found.schema is None:
                raise self._no_schema(conn)
            self.schema = str(found.schema)
            self.lock_key, self.channel = board_lock_and_channel(self.schema)
            # COMMIT, then NOTIFY as a transaction of its own, in the same round trip. A NOTIFY
            # holds Postgres's notify lock until its commit is done: inside the board's
            # transaction every notifying writer queued for one WAL flush each (measured: ~215
            # claims/s at 16 workers, the fsync rate). On its own it never waits for a flush:
            # it takes an xid but writes no WAL before its commit record, and Postgres flushes
            # only commits that wrote some (measured: 91 us a NOTIFY while a synchronous
            # one-row UPDATE took 3.7 ms). Losing a notification in a server crash costs a
            # listener one fallback poll, nothing else.
            self._commit_and_notify = f"COMMIT; NOTIFY {self.channel}"
            # After a one-trip claim's COMMIT, as a transaction of its own for the same reason:
            # the NOTIFY and the mark cleared, in one statement, only if the claim claimed (the
            # claim statement marked the session).
            self._notify_if_claimed = (
                f"SELECT pg_notify('{self.channel}', ''), "
                f"set_config('{NOTIFY_SETTING}', '', false) "
                f"WHERE current_setting('{NOTIFY_SETTING}', true) = '1'"
            )
            self._notify_mark_inside = (
                f", CASE WHEN c.id IS NOT NULL THEN pg_notify('{self.channel}', '') END"
            )
            self._take_board_lock = f"SELECT pg_advisory_xact_lock({self.lock_key})"
            if found.version is None:
                self._refuse_foreign_tables(found)
                if read_only or not create:
                    raise BoardError(
                        Reason.NO_BOARD,
                        f"no board in schema {self.schema} at {url.display}: check "
                        "--db/KANBAN_DB, or create one with "
                        f"`{shell_command('kanban', 'db', 'init', url.display)}` {CREATING_VERBS}",
                        path=url.display,
                    )
            if found.version != SCHEMA_VERSION and not read_only:
                try:
                    self.migrations_applied = self._migrate(conn)
                except (pg_errors.InsufficientPrivilege, pg_errors.ReadOnlySqlTransaction) as error:
                    raise self._not_permitted(error, write=True) from None

    # -- connections ----------------------------------------------------------------------------

    @staticmethod
    def _connect_kwargs() -> dict[str, Any]:
        return {
            "autocommit": True,
            "row_factory": _ROW_FACTORY,
            "connect_timeout": CONNECT_TIMEOUT_S,
            "application_name": "kanban",
        }

    def _unavailable(self, error: BaseException) -> StoreUnavailable:
        detail = self.url.scrub(database_line(str(error)) or type(error).__name__)
        missing = _NO_DATABASE.search(detail)
        if missing is not None:  # the server answered: no retry makes the database
            name = missing["name"]
            return StoreUnavailable(
                f"database unavailable at {self.url.display}: the database {name} does not "
                f"exist on that server ({detail}); kanban never creates a database: check "
                f"--db/KANBAN_DB, or create it first (`CREATE DATABASE {_sql_ident(name)}`, as a "
                "role that may), then the board with "
                f"`{shell_command('kanban', 'db', 'init', self.url.display)}`"
            )
        return StoreUnavailable(f"database unavailable at {self.url.display}: {detail}")

    def _not_permitted(self, error: psycopg.Error, *, write: bool) -> BoardError:
        """The role the URL logs in as lacks a right on the board: a write it may not make is
        `read_only`, as a board file this user may only read is; a table or schema it may not
        read is `permission_denied`. Either way the server rolled the transaction back."""
        detail = self.url.scrub(database_line(str(error)))
        if write:
            return BoardError(
                Reason.READ_ONLY,
                f"cannot write to the board {self.url.display}: the database lets this role only "
                f"read it ({detail}); nothing was written",
                path=self.url.display,
            )
        return BoardError(
            Reason.PERMISSION_DENIED,
            f"the database role may not read the board {self.url.display} ({detail}); nothing "
            "was read or written: ask the board's owner for its rights, or point --db/KANBAN_DB "
            "at a board you may read",
            path=self.url.display,
        )

    def _connect(self, **extra: Any) -> Conn:
        try:
            conn: Conn = psycopg.connect(self.url.conninfo, **{**self._connect_kwargs(), **extra})
        except psycopg.Error as error:
            raise self._unavailable(error) from None
        return conn

    def _pooled_connection(self) -> tuple[Conn, bool]:
        """A live connection, and whether it is the pool's: those the server dropped while they
        waited in it (a restart ends them all) are closed and handed back, which the pool
        replaces. (The pool's own `check` sleeps a second or more between failed checks: past
        the retry budget.) While the pool is reconnecting it retries on a backoff (1 s, 2 s:
        `POOL_RECONNECT_S`), so a server that is back may go unasked for a second, past a call's
        budget (seen in CI): then the call asks the server itself, once, and a connection made
        so serves this call alone (closed after); a refusal names the server's reason now."""
        assert self._pool is not None
        news = pool_news()
        deadline = time.monotonic() + self.config.retry_budget_ms / 1000
        while True:
            reconnecting = news.reconnecting(self._pool_name)
            wait = 0.001 if reconnecting else max(deadline - time.monotonic(), 0.001)
            try:
                conn: Conn = self._pool.getconn(timeout=wait)
            except psycopg.OperationalError as error:  # no connection to be had (PoolTimeout)
                if not (reconnecting or news.reconnecting(self._pool_name)):
                    raise self._unavailable(error) from None  # every connection in use
                left = deadline - time.monotonic()
                conn = self._connect(connect_timeout=max(math.ceil(left), 2))  # libpq's least
                news.reached(self._pool_name)
                return conn, False
            if not dropped_while_idle(conn):
                return conn, True
            conn.close()
            self._pool.putconn(conn)

    @contextmanager
    def _connection(self) -> Iterator[Conn]:
        """A connection for one transaction: from the pool, or the one plain connection (opened
        on first use, reopened after the server dropped it)."""
        if self._pool is not None:
            conn, pooled = self._pooled_connection()
            try:
                yield conn
            except psycopg.OperationalError as error:
                # a lock timeout is contention (retried by the caller); a dead link is not
                if conn.broken or conn.closed:
                    raise self._unavailable(error) from None
                raise
            finally:
                if pooled:  # discards a broken one, rolls back a stray transaction
                    self._pool.putconn(conn)
                else:
                    conn.close()
            return
        with self._lock:
            if self._conn is not None and dropped_while_idle(self._conn):
                self._conn.close()
                self._conn = None
            if self._conn is None:
                self._conn = self._connect()
            self._conn_used_at = time.monotonic()
            try:
                yield self._conn
            except psycopg.OperationalError as error:
                if self._conn.broken or self._conn.closed:
                    self._conn = None
                    raise self._unavailable(error) from None
                raise

    @property
    def backend(self) -> str:
        return "postgres"

    @property
    def display(self) -> str:
        return self.url.display

    # -- schema ---------------------------------------------------------------------------------

    @staticmethod
    def _survey(conn: Conn) -> "_Survey":
        """What the schema holds, in one round trip (the version costs a second, on a board)."""
        # a catalog scan, not to_regclass: the cache behind to_regclass may not yet show a table
        # another opener created while this one waited for the lock
        row = conn.execute(_SURVEY).fetchone()
        assert row is not None  # one row, always
        return PostgresStore._surveyed(conn, row)

    @staticmethod
    def _surveyed(conn: Conn, row: Row) -> "_Survey":
        schema, has_meta, foreign = row[0], row[1], row[2]
        if not has_meta:
            return _Survey(schema, None, tuple(foreign or ()))
        version = conn.execute("SELECT schema_version FROM board_meta").fetchone()
        number = int(version[0]) if version is not None and version[0] is not None else 0
        return _Survey(schema, number, ())

    def _migrate(self, conn: Conn) -> int:
        """Create or upgrade the board under its advisory lock, in one transaction; a schema
        holding other tables and no board is refused, never written to. The lock and the second
        look are one round trip, and the pending migrations with their version bookkeeping and
        the COMMIT another: a new board costs three round trips with the first look, not ninety
        (benchmarks/new_board.py). Two openers of one new schema: the second waits for the
        lock, then finds the board made."""
        # the survey's own statement after the lock: a snapshot taken once the lock is held
        locked = conn.execute(f"BEGIN; SELECT pg_advisory_xact_lock({self.lock_key}); {_SURVEY}")
        try:
            locked.nextset()
            locked.nextset()
            row = locked.fetchone()
            assert row is not None
            found = self._surveyed(conn, row)
            statements: list[str] = []
            if found.version is None:
                self._refuse_foreign_tables(found)
                statements.append(META_DDL)
                statements.append(
                    f"INSERT INTO board_meta (id, schema_version) VALUES (1, {SCHEMA_VERSION})"
                )
            current = found.version or 0
            if current > SCHEMA_VERSION:
                raise RuntimeError(
                    f"board schema version {current} is newer than this kanban "
                    f"({SCHEMA_VERSION}); upgrade"
                )
            for migration in MIGRATIONS[current:]:
                statements.extend(migration)
            if found.version is not None and current < SCHEMA_VERSION:
                statements.append(f"UPDATE board_meta SET schema_version = {SCHEMA_VERSION}")
            statements.append("COMMIT")
            conn.execute(";\n".join(statements))
        except BaseException:
            if not conn.closed and conn.info.transaction_status != IDLE:
                conn.execute("ROLLBACK")
            raise
        self.created = found.version is None
        return SCHEMA_VERSION - current

    def build_text_index(self) -> str:
        """Migration 10's index, for a board made or migrated without it (pg_trgm not to be had
        then), built CONCURRENTLY: writers go on for the build's length (7-11 s at 100,000
        tasks), where `CREATE INDEX` locked them out. On a session of its own, outside any
        transaction as CONCURRENTLY must be, under a session lock of the board's index (not the
        board's lock, which every writer takes). Another builder is waited for by asking again
        every `_BUILDER_POLL_S`, never in a statement: a build waits for every transaction older
        than its snapshot, a waiting lock call among them, and that would deadlock. An index a
        build that did not finish left invalid (killed, cancelled) is dropped and built again."""
        if self.read_only:
            raise BoardError(Reason.READ_ONLY, "the board is open read-only")
        conn = self._connect()
        try:
            return self._build_text_index(conn)
        except pg_errors.InsufficientPrivilege as error:
            raise self._not_permitted(error, write=True) from None
        finally:
            conn.close()  # the session lock, if still held, goes with it

    def _build_text_index(self, conn: Conn) -> str:
        key = text_index_lock(self.schema)
        home, owned, valid = self._text_index_look(conn)
        if valid:
            return TEXT_INDEX_PRESENT
        if home is None or not owned:
            return TEXT_INDEX_UNAVAILABLE
        # the build runs as long as it needs: a timeout the URL sets would leave it invalid
        conn.execute("SET statement_timeout = 0; SET lock_timeout = 0")
        while not (conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone() or (0,))[0]:
            time.sleep(_BUILDER_POLL_S)
        try:
            home, owned, valid = self._text_index_look(conn)  # what the last builder left
            if valid:
                return TEXT_INDEX_PRESENT
            if home is None or not owned:
                return TEXT_INDEX_UNAVAILABLE
            if valid is False:
                conn.execute(
                    sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(
                        sql.Identifier(self.schema, TEXT_INDEX)
                    )
                )
            conn.execute(sql.SQL(TEXT_INDEX_BUILD).format(home=sql.Identifier(home)))
            return TEXT_INDEX_BUILT
        finally:
            if not conn.closed and not conn.broken:
                conn.execute("SELECT pg_advisory_unlock(%s)", (key,))

    @staticmethod
    def _text_index_look(conn: Conn) -> tuple[str | None, bool, bool | None]:
        row = conn.execute(TEXT_INDEX_LOOK).fetchone()
        assert row is not None  # one row, always
        return row[0], bool(row[1]), row[2]

    def _no_schema(self, conn: Conn) -> BoardError:
        """No schema of the search_path exists: the server answered, so this is no board (a
        retry, as `database_unavailable` promises, would not help), and opening never creates a
        schema (who may, and with which owner, is the database's owner's choice). One that exists
        but the role may not use is `permission_denied`: creating it is not the remedy."""
        row = conn.execute("SELECT current_setting('search_path'), current_user").fetchone()
        search_path, user = (str(row[0]), str(row[1])) if row is not None else ("", "")
        first = search_path.split(",", 1)[0].strip()
        name = user if first == '"$user"' else first.strip('"') or "NAME"
        ident = _sql_ident(name)
        # a schema the role has no USAGE on is left out of its search path as if it did not exist
        exists = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (name,)).fetchone()
        if exists is not None:
            role = _sql_ident(user)
            return BoardError(
                Reason.PERMISSION_DENIED,
                f"the database role {user} may not use the schema {name} of {self.url.display}; "
                f"nothing was read or written: its owner may grant it (`GRANT USAGE ON SCHEMA "
                f"{ident} TO {role}`), or point --db/KANBAN_DB at a board you may read",
                path=self.url.display,
            )
        return BoardError(
            Reason.NO_BOARD,
            f"no board at {self.url.display}: no schema of its search_path ({search_path}) "
            f"exists to keep one in; create the schema first (`CREATE SCHEMA {ident}`, as a "
            "role that may), then the board with "
            f"`{shell_command('kanban', 'db', 'init', self.url.display)}`",
            path=self.url.display,
        )

    def _refuse_foreign_tables(self, found: "_Survey") -> None:
        """A schema with tables of kanban's names and no `board_meta` belongs to someone else."""
        if found.foreign:
            raise BoardError(
                Reason.NOT_A_BOARD,
                f"{self.url.display} is not a kanban board (schema {self.schema} holds tables "
                f"named {', '.join(found.foreign)} but no board); it was left untouched. Point "
                "--db/KANBAN_DB at a board, or at an empty schema",
                path=self.url.display,
            )

    def discard_new_board(self) -> None:
        """Drop the board this store made in an empty schema (`created`), while it holds no
        rows, and close: the schema is left as this store found it. Under the board's lock, so
        no writer is half way through it."""
        if not self.created:
            return
        empty = " AND ".join(f"NOT EXISTS (SELECT 1 FROM {table})" for table, _ in TABLES)
        with self._connection() as conn:
            found = conn.execute(f"BEGIN; {self._take_board_lock}; SELECT {empty}")
            try:
                found.nextset()
                found.nextset()
                row = found.fetchone()
                if row is not None and row[0]:
                    conn.execute(f"DROP TABLE {', '.join(BOARD_TABLES)} CASCADE")
                conn.execute("COMMIT")
            except BaseException:
                if not conn.closed and conn.info.transaction_status != IDLE:
                    conn.execute("ROLLBACK")
                raise
        self.created = False
        self.close()

    # -- transactions ---------------------------------------------------------------------------

    def write(self, work: Callable[[Tx], T], *, shared: bool = False) -> T:
        if self.read_only:
            raise BoardError(Reason.READ_ONLY, "the board is open read-only")
        return self._run(work, write=True, shared=shared)

    def one_statement(self, work: Callable[[Tx], T]) -> T:
        """One round trip: the statement, prepared on the server once per connection, sent with
        BEGIN and COMMIT and the NOTIFY in one simple query (`claim_in_one_trip`)."""
        if self.read_only:
            raise BoardError(Reason.READ_ONLY, "the board is open read-only")
        return self._run(work, write=True, shared=True, one_trip=True)

    def claim_in_one_trip(
        self, conn: Conn, statement: str, params: dict[str, Any], lock_timeout_ms: int
    ) -> Row:
        """`statement` as its whole transaction, in one simple query: the PREPARE (the first time
        on this connection), then EXECUTE with the parameters written in as literals (libpq's
        own quoting). Its one row. The lock timeout is the connection's own (the retry budget,
        set once with the PREPARE; `SET LOCAL` only when a retry has less left).

        The NOTIFY: where commits wait for a WAL flush (`synchronous_commit` on), it is a
        transaction of its own after the claim's COMMIT (BEGIN, EXECUTE, COMMIT, then the NOTIFY
        and the claim's mark cleared in one statement), since a NOTIFY holds the notify lock
        through its commit and notifying claims would queue for one flush each. Where they do
        not, the claim statement notifies itself: one statement, its own transaction, as the
        floor's (benchmarks/claim_floor.py)."""
        state = self._one_trips.get(conn)
        if state is None:
            state = self._one_trips[conn] = _OneTrip(conn)
        if state.notify_inside:
            statement = self._notify_inside(statement)
        name, prepare, order = _prepared(statement)
        budget = self.config.retry_budget_ms
        own_timeout = lock_timeout_ms < budget - LOCK_TIMEOUT_SLACK_MS
        if (
            state.notify_inside
            and not own_timeout
            and state.lock_timeout_ms == budget
            and name in state.prepared
        ):  # the statement is the whole transaction, already prepared: Bind and Execute only
            try:
                return state.execute_prepared(name, [params[key] for key in order])
            except pg_errors.InvalidSqlStatementName:  # deallocated behind our back
                self._resync_prepared(conn, name, state)  # and prepared again below
        literal = state.literal
        arguments = ", ".join([literal(params[key]) for key in order])
        if state.notify_inside and not own_timeout:
            head, execute = "", f"EXECUTE {name} ({arguments})"
        else:
            head = (
                f"BEGIN; SET LOCAL lock_timeout = {lock_timeout_ms}; " if own_timeout else "BEGIN; "
            )
            tail = "COMMIT" if state.notify_inside else f"COMMIT; {self._notify_if_claimed}"
            execute = f"{head}EXECUTE {name} ({arguments}); {tail}"
        cursor = state.cursor
        for again in (True, False):
            setup, skip = "", 1 + own_timeout if head else 0  # past BEGIN (and SET LOCAL)
            if state.lock_timeout_ms != budget:
                setup, skip = f"SET lock_timeout = {budget}; ", skip + 1
            preparing = name not in state.prepared
            if preparing:
                setup, skip = f"{setup}{prepare}; ", skip + 1
            try:
                # prepare=False: a text that never repeats is not worth psycopg's bookkeeping
                cursor.execute(setup + execute, prepare=False)
                break
            except pg_errors.InvalidSqlStatementName:  # deallocated behind our back: again
                self._resync_prepared(conn, name, state)
                if not again:
                    raise
            except BaseException:
                state.lock_timeout_ms = None  # a SET in a transaction rolled back is undone
                if preparing:
                    self._resync_prepared(conn, name, state)
                raise
        state.prepared.add(name)
        state.lock_timeout_ms = budget
        for _ in range(skip):
            cursor.nextset()
        row: Row | None = cursor.fetchone()
        assert row is not None
        return row

    def _notify_inside(self, statement: str) -> str:
        """The one-trip claim statement that sends its NOTIFY itself instead of marking the
        session for the statement after its COMMIT (made once per statement)."""
        inside = self._inside.get(statement)
        if inside is None:
            inside = self._inside[statement] = statement.replace(
                _MARK_NOTIFY, self._notify_mark_inside
            )
        return inside

    @staticmethod
    def _resync_prepared(conn: Conn, name: str, state: "_OneTrip") -> None:
        """After a failed one-trip query: whether its PREPARE stands, asked of the server (its
        session lock timeout is set again by the next one)."""
        state.prepared.discard(name)
        state.lock_timeout_ms = None
        if conn.broken or conn.closed:
            return
        if conn.info.transaction_status != IDLE:
            conn.execute("ROLLBACK")
        known = conn.execute(
            "SELECT 1 FROM pg_prepared_statements WHERE name = %s", (name,)
        ).fetchone()
        if known is not None:
            state.prepared.add(name)

    def try_write(self, work: Callable[[Tx], T], *, shared: bool = False) -> T | None:
        """One attempt that waits for no lock (a 1 ms lock timeout); None when it would have.
        `shared`: without the board's lock, so a writer holding it is no reason to give up."""
        if self.read_only:
            return None
        try:
            return self._run(work, write=True, shared=shared, budget_ms=0)
        except BoardError as error:
            if error.reason in (Reason.BUSY, Reason.READ_ONLY):
                return None
            raise

    def read(self, work: Callable[[Tx], T]) -> T:
        return self._run(work, write=False, shared=True)

    @contextmanager
    def at_once(self) -> Iterator[None]:
        """Every transaction is a round trip to the server, which an event loop must not sit
        through: inside this block the first one raises `WouldWait`, and the caller hands the
        call to a thread."""
        state = self._at_once
        if getattr(state, "active", False):
            yield
            return
        state.active = True
        try:
            yield
        finally:
            state.active = False

    def _run(
        self,
        work: Callable[[Tx], T],
        *,
        write: bool,
        shared: bool,
        budget_ms: int | None = None,
        one_trip: bool = False,
    ) -> T:
        """One transaction, re-run whole on transient contention until the wall-clock budget is
        spent. Any other error (a `BoardError` refusal included) rolls back and propagates."""
        if getattr(self._at_once, "active", False):
            raise WouldWait
        budget = self.config.retry_budget_ms if budget_ms is None else budget_ms
        deadline = time.monotonic() + budget / 1000
        low, high = self.config.retry_jitter_ms
        attempt = 0
        while True:
            attempt += 1
            left_ms = max(int((deadline - time.monotonic()) * 1000), 1)
            try:
                with self._connection() as conn:
                    if one_trip:
                        return self._attempt_one_trip(conn, work, left_ms=left_ms)
                    return self._attempt(conn, work, write=write, shared=shared, left_ms=left_ms)
            except UnicodeEncodeError:  # a lone surrogate reached a statement: rolled back
                raise not_utf8() from None
            except psycopg.DataError as error:  # a value no column can keep (a NUL): rolled back
                raise unstorable(str(error)) from None
            except (pg_errors.InsufficientPrivilege, pg_errors.ReadOnlySqlTransaction) as error:
                raise self._not_permitted(error, write=write) from None
            except pg_errors.DiskFull as error:  # rolled back: what was committed before stays
                raise BoardError(
                    Reason.DISK_FULL,
                    "no space left on the database server: nothing was written; free some space "
                    f"and try again ({error.sqlstate})",
                ) from None
            except _RETRYABLE as error:
                left = deadline - time.monotonic()
                if left <= 0 or budget == 0 or attempt >= self.config.retry_max_attempts:
                    raise BoardError(
                        Reason.BUSY, "database busy, try again", attempts=attempt
                    ) from error
                time.sleep(min(random.uniform(low, high) / 1000, left))

    def _attempt(
        self, conn: Conn, work: Callable[[Tx], T], *, write: bool, shared: bool, left_ms: int
    ) -> T:
        """One transaction in as few round trips as it can: the statements with nothing to send
        back travel together as one simple query (BEGIN with its settings, and a write's board
        lock, go with the first statement, `PostgresTx._first`; the queued events with COMMIT
        and the NOTIFY), so a read is its statements and COMMIT, and a write that reads what it
        judges and then writes is three round trips: begin with the read, the write, commit
        with the events. psycopg's pipeline mode was measured for the same saving and cost more
        client CPU in its machinery (client 282-337 -> 306-417 us per claim, server within
        noise, 1 process); the client-side binding of the first statement's few parameters
        costs a string. A work that sent nothing commits nothing (no BEGIN went)."""
        # A read waits for a lock (a table another session locked ACCESS EXCLUSIVE, a migration's)
        # no longer than what is left of the budget, as a write does: then `busy`, not a hang.
        wait = f"SET LOCAL lock_timeout = {left_ms}"
        begin: tuple[str, ...] = ("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", wait)
        if write:
            begin = ("BEGIN", wait)
            begin += () if shared else (self._take_board_lock,)
        tx = PostgresTx(conn, self, locking=write and not shared, begin=begin)
        try:
            result = work(tx)
            events = tx.events_statement() if write else ""
            if events:
                opening = "" if tx.begun else "; ".join(begin) + "; "
                conn.execute(f"{opening}{events}; {self._commit_and_notify}")
            elif tx.begun:
                # events written before COMMIT (a reconcile's purge reads the log after its
                # releases) wake listeners as the ones sent with it do
                notify = tx.claimed or tx.flushed
                conn.execute(self._commit_and_notify if notify else "COMMIT")
            # else: the work sent nothing and wrote nothing, so there is nothing to commit
            return result
        except BaseException:
            if not conn.closed and not conn.broken and conn.info.transaction_status != IDLE:
                conn.execute("ROLLBACK")
            raise

    def _attempt_one_trip(self, conn: Conn, work: Callable[[Tx], T], *, left_ms: int) -> T:
        """A claim transaction that is one statement, sent whole by the statement itself."""
        tx = PostgresTx(conn, self, locking=False, one_trip_ms=left_ms)
        try:
            return work(tx)
        except BaseException:
            if not conn.closed and not conn.broken and conn.info.transaction_status != IDLE:
                conn.execute("ROLLBACK")
            raise

    # -- the change feed ------------------------------------------------------------------------

    def change_token(self) -> int:
        """The safe horizon of the event log, re-read when a NOTIFY arrived on the board's channel
        (every commit that writes sends one), when the listener was (re)opened, or every
        `FALLBACK_POLL_S` while no listener can be had; otherwise the last value, at the cost of
        a non-blocking check of the listening socket. Idle, it closes the read connection."""
        now = time.monotonic()
        notified = self._drain_notifications()
        listening = self._listener is not None
        stale = not listening and now - self._token_read_at >= FALLBACK_POLL_S
        if self._token is None or notified or stale:
            self._token_read_at = now
            self._token = self.read(lambda tx: tx.last_event_seq())
        elif listening:
            self._close_idle_connection(now)
        return self._token

    def _close_idle_connection(self, now: float) -> None:
        """Close the plain read connection unused for `IDLE_CLOSE_S` (reopened at its next use):
        a watcher between changes holds its listener only."""
        if self._conn is None or now - self._conn_used_at < IDLE_CLOSE_S:
            return
        if not self._lock.acquire(blocking=False):
            return  # in use right now: not idle
        try:
            if self._conn is not None and now - self._conn_used_at >= IDLE_CLOSE_S:
                self._conn.close()
                self._conn = None
        finally:
            self._lock.release()

    def _drain_notifications(self) -> bool:
        """Whether any NOTIFY arrived since the last call (opens the LISTEN connection at first)."""
        try:
            if self._listener is None or self._listener.closed or self._listener.broken:
                self._listener = self._connect(**LISTENER_KEEPALIVES)
                self._listener.execute(f"LISTEN {self.channel}")
                return True  # anything may have happened while nobody listened
            return any(True for _ in self._listener.notifies(timeout=0))
        except (psycopg.Error, StoreUnavailable):
            if self._listener is not None:
                self._listener.close()
            self._listener = None
            return True  # no listener: fall back to reading the horizon every time

    def checkpoint(self) -> bool:
        """Nothing to fold: the server owns its write-ahead log and checkpoints it itself."""
        return True

    def schema_version(self) -> int:
        with self._connection() as conn:
            return self._survey(conn).version or 0

    def close(self) -> None:
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        if self._pool is not None:
            self._pool.close()
            self._pool = None
            pool_news().forget(self._pool_name)
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
