"""The statements both stores run: one text per query, written once, and the rows they return.

`SharedTx` is the base of `SqliteTx` and `PostgresTx`; each store keeps only the statements that
must differ, each saying why (tests/core/test_queries.py holds the list). The SQL is written in
SQLite's parameter style and portable spellings: docs/architecture.md#statements-written-once
"""

import functools
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import fields
from typing import TYPE_CHECKING, Any, ClassVar

from ..columns import FinishedKey, TaskSearch
from ..errors import BoardError, Reason
from ..inert import as_written
from ..leases import EXPIRED_SQL, expired_sql
from ..records import EXECUTION_LEDGER, EXECUTION_TIMED_OUT, MICROS_PER_USD, Task
from ..transitions import PENDING as PENDING_STATUSES
from .base import TABLES, Row
from .budget_sql import BudgetStatements
from .landing_sql import LandingStatements
from .literals import (
    BLOCKED,
    CANCELLED,
    DONE,
    GATE_EVENTS,
    IN_PROGRESS,
    IN_REVIEW,
    LIVE,
    RUN_RUNNING,
    STATUS_CHANGED_EVENT,
    TASK_CREATED_EVENT,
    TERMINAL,
    TODO,
    WORKSPACE_ACTIVE,
    in_column_order,
    sql_literal,
)
from .schema import TEXT_INDEX, TEXT_INDEX_COLUMNS
from .stats_sql import StatsStatements

if TYPE_CHECKING:  # types only
    from ..review import Anchor

Params = Mapping[str, Any] | Sequence[Any]

# Columns a caller may name in an update; the dataclass is the one declaration of them.
TASK_COLUMNS: frozenset[str] = frozenset(f.name for f in fields(Task)) - {"id"}
TASK_JSON_COLUMNS = Task._json_columns  # TEXT columns holding JSON, on both stores
EXECUTION_CLOSE_COLUMNS = frozenset({
    "status", "summary", "error", "after_commit", "completed_at", *EXECUTION_LEDGER
})  # fmt: skip
# A run the board closed (tombstoned) whose holder has not reported its ledger yet
_LEDGER_UNREPORTED = " AND ".join(f"{column} IS NULL" for column in EXECUTION_LEDGER)
WORKSPACE_UPDATE_COLUMNS = frozenset(
    {"status", "worktree_path", "branch", "base_commit", "last_used_at", "host"}
)
# The tables whose rows get a short typeable id (`TASK-42`) numbered like their seq.
NUMBERED_TABLES = frozenset({"tasks", "task_comments", "execution_processes", "workspaces"})

# Seed 000's claim rules as SQL, declared once for both stores' claims and the shared reads: the
# order claim-next picks in (ready lists rank the same), a ready task, a todo task still waiting
# on a dependency, and the guard that is part of the very statement that claims.
CLAIM_ORDER = "ORDER BY priority DESC, updated_at DESC"
# Seed 003's order of a task list, and the order pages walk (`SharedTx._listing` says why).
CHANGE_KEYS = "updated_at DESC, seq DESC"
CHANGE_ORDER = f"ORDER BY {CHANGE_KEYS}"
PAGE_ORDER = "ORDER BY seq DESC"
READY = f"status = {TODO} AND dropped = 0 AND unmet_deps = 0"
WAITING = f"status = {TODO} AND dropped = 0 AND unmet_deps > 0"
CLAIMABLE = f"status = {TODO} AND assignee_agent_id IS NULL AND dropped = 0"
# Claim-next's role rule: a task for the role, or for no role in particular (any role takes it).
FOR_ROLE = "(role = :role OR role IS NULL)"
# The holder's precondition (`Board._check_holder`) as SQL, for a renewal in one guarded statement:
# in progress, held by :agent, the quoted :epoch current (or none quoted), the lease live at :now
# (a task without a lease never expires: `leases`). When it does not hold, the board judges why.
HOLDING = (
    f"status = {IN_PROGRESS} AND assignee_agent_id = :agent "
    "AND (CAST(:epoch AS BIGINT) IS NULL OR claim_epoch = CAST(:epoch AS BIGINT)) "
    f"AND (lease_until IS NULL OR NOT {expired_sql(':now')})"
)
# The tasks waiting on a person by their status (the inbox, boardlib.attention): the very
# condition of the partial index `tasks_attention`, so the read walks that index only.
AWAITING_PERSON = f"status IN ({IN_REVIEW}, {BLOCKED}) AND dropped = 0"
# Who created the roots of a window: its creations first (SQLite: `events_kind`'s range, the
# CROSS JOIN keeping that order; PostgreSQL plans it from `tasks_root_created` and `events_task`),
# then each one's task by its key: what the window holds, never every task the board has made
# (reading the events the other way round took 2.8 s with 3,000 roots in the window).
ROOT_CREATORS = (
    "SELECT e.actor, COUNT(*) AS n FROM events e CROSS JOIN tasks t "
    f"WHERE e.kind = {TASK_CREATED_EVENT} AND e.created_at >= ? AND t.id = e.task_id "
    "AND t.parent_task_id IS NULL AND t.created_at >= ? GROUP BY e.actor"
)
CONSUMER_COLUMNS = frozenset({
    "last_seq", "failing_seq", "failures", "last_error", "held_since", "owner", "owner_until",
    "updated_at",
})  # fmt: skip

# A finished column's order (`columns.sort_key`): newest finish first, then the later seq. Each
# finished status has its partial index on exactly these expressions (`tasks_<status>_order`),
# with `dropped` in it too, so a page is an index range and a count never reads the table.
FINISHED_AT = "COALESCE(completed_at, updated_at)"  # columns.finished_at
FINISHED_ORDER = f"ORDER BY {FINISHED_AT} DESC, seq DESC"
FINISHED_REVERSE = f"ORDER BY {FINISHED_AT}, seq"
# Keyset bounds, spelled as a range on the index's first expression plus a tie-break (a row-value
# comparison is not used as a range on an expression index: SQLite then walks from the top).
OLDER_THAN = f"{FINISHED_AT} <= :key_at AND ({FINISHED_AT} < :key_at OR seq < :key_seq)"
OLDER_OR_SAME = f"{FINISHED_AT} <= :key_at AND ({FINISHED_AT} < :key_at OR seq <= :key_seq)"
NEWER_THAN = f"{FINISHED_AT} >= :key_at AND ({FINISHED_AT} > :key_at OR seq > :key_seq)"

# The one spelling of "every consumer has read it" (boardlib.watch): no event above the lowest
# consumer cursor is deleted, by the TTL purge or a prune, whatever its age.
LOWEST_CURSOR = "(SELECT MIN(last_seq) FROM event_consumers)"
READ_BY_EVERY_CONSUMER = f"seq <= COALESCE({LOWEST_CURSOR}, seq)"

# What a prune may take (boardlib.archive): older than the cut, at or below `through` (the log's
# safe end when the prune began), read by every consumer, never the newest event (so seqs only
# grow), never an event of a task still in flight (a live task keeps its whole history). Without
# the consumers' rule: what a prune would take but for them (`unread_old_events`).
OLD_AND_SETTLED = f"""created_at < :before AND seq <= :through
    AND seq < (SELECT MAX(seq) FROM events)
    AND (task_id IS NULL OR NOT EXISTS (
        SELECT 1 FROM tasks t WHERE t.id = events.task_id AND t.status NOT IN ({TERMINAL})))"""
PRUNABLE = f"{OLD_AND_SETTLED} AND {READ_BY_EVERY_CONSUMER}"

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A string literal (kept, its `%` doubled), a `::` cast (kept), a named parameter, a `?`, a `%`.
_PYFORMAT_TOKEN = re.compile(r"'(?:[^']|'')*'|::|:([A-Za-z_][A-Za-z0-9_]*)|\?|%")


def _pyformat_token(match: "re.Match[str]") -> str:
    token = match.group(0)
    if match.group(1) is not None:
        return f"%({match.group(1)})s"
    if token == "?":
        return "%s"
    if token == "::":
        return token
    return token.replace("%", "%%")  # a lone `%`, or a literal that may hold one


@functools.lru_cache(maxsize=1024)
def pyformat(query: str) -> str:
    """`query` in psycopg's placeholder style: `:name` becomes `%(name)s`, `?` becomes `%s`, and
    every literal `%` is doubled (psycopg reads `%` as a placeholder even inside quotes). Cached:
    a statement's text is converted the first time it runs, then found by its text. The texts
    are a small fixed set (dynamic ones vary only by which filters or columns a caller names)."""
    return _PYFORMAT_TOKEN.sub(_pyformat_token, query)


def like_pattern(text: str) -> str:
    """A `LIKE ... ESCAPE '\\'` pattern matching `text` anywhere, its wildcards taken literally."""
    return f"%{_like_escaped(text)}%"


def like_prefix(text: str) -> str:
    """A `LIKE ... ESCAPE '\\'` pattern matching what starts with `text`, taken literally."""
    return f"{_like_escaped(text)}%"


def _like_escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


# The text indexes of schema migration 10, which `text_match` writes its condition for.
# SQLite's (`FTS5`): each trigram of a task's id, title and description, folded to lower case,
# without positions. A row holding a text of at least `TEXT_INDEX_SHORTEST` characters holds each
# of its trigrams, so the index finds a superset of the rows (its case folding is Unicode's,
# wider than LIKE's ASCII-only one) and the LIKE decides each row it finds: the rows are exactly
# LIKE's (docs/tui.md#searching). Postgres's (`PG_TRGM`) serves the ILIKE as written, but only a
# pattern with three letters or digits in a row: it has no trigram of a shorter one and reads
# the whole index instead (1.8 s at 100,000 tasks, where reading the table takes 0.2 s), so
# such a pattern is written on an expression the index does not hold.
FTS5 = "fts5"
PG_TRGM = "pg_trgm"
TEXT_INDEX_SHORTEST = 3
TEXT_INDEX_ROWS = f"seq IN (SELECT rowid FROM {TEXT_INDEX} WHERE {TEXT_INDEX} MATCH :{{name}})"
_TRIGRAM_WORD = re.compile(r"[A-Za-z0-9]{3}")


def text_index_query(texts: Sequence[str]) -> str | None:
    """The `FTS5` query for the rows holding every trigram of one of `texts` (each trigram an
    FTS5 string, its quotes doubled), or None when one is too short for a trigram or holds a
    NUL (LIKE reads a text only up to one)."""
    if any(len(text) < TEXT_INDEX_SHORTEST or "\0" in text for text in texts):
        return None
    each = []
    for text in texts:
        grams = dict.fromkeys(text[i : i + 3] for i in range(len(text) - 2))
        each.append(" AND ".join('"' + gram.replace('"', '""') + '"' for gram in grams))
    return " OR ".join(f"({query})" for query in each)


def text_match(
    like: str,
    columns: Sequence[str],
    name: str,
    text: str,
    params: dict[str, Any],
    *,
    index: str | None = None,
) -> str:
    """`text` anywhere in any of `columns`, ignoring case, as the condition `(...)` with its
    parameters added to `params` under `name`. Text typed from what a screen shows (`␛[31m`,
    agent text drawn `inert`) also finds what was written (ESC `[31m`). `index`: the store's
    text index (`FTS5`, `PG_TRGM`), which the condition is written for."""
    params[name] = like_pattern(text)
    names = [name]
    texts = [text]
    written = as_written(text)
    if written != text:
        params[f"{name}w"] = like_pattern(written)
        names.append(f"{name}w")
        texts.append(written)
    if index == PG_TRGM and not all(_TRIGRAM_WORD.search(each) for each in texts):
        columns = [f"({column} || '')" for column in columns]  # not the index's expression
    found = [f"{column} {like} :{each} ESCAPE '\\'" for each in names for column in columns]
    query = text_index_query(texts) if index == FTS5 else None
    if query is None:
        return f"({' OR '.join(found)})"
    assert set(columns) <= set(TEXT_INDEX_COLUMNS), columns
    params[f"{name}i"] = query
    return f"({TEXT_INDEX_ROWS.format(name=f'{name}i')} AND ({' OR '.join(found)}))"


# Statement texts built from a table and column names, built once per shape: building one costs
# more than running it (an 8-column INSERT's text: ~12,000 instructions, its SQLite execution
# ~58,000), and the same text object is found at once in sqlite3's statement cache and `pyformat`'s.


@functools.lru_cache(maxsize=256)
def _insert_sql(table: str, columns: tuple[str, ...]) -> str:
    """Insert one row numbered by the next `seq`, the number its id was given, so ids and seqs
    agree. SQLite would pick MAX(seq) + 1 for an INTEGER PRIMARY KEY by itself; Postgres has no
    such default (a DEFAULT cannot hold a subquery), so the statement names it for both (SQLite
    pays ~3,800 instructions for it, ~1% of a create). Safe because every write that creates rows
    is serialised (see `SharedTx.next_id`)."""
    return (
        f"INSERT INTO {table} (seq, {', '.join(columns)}) "
        f"VALUES ((SELECT COALESCE(MAX(seq), 0) + 1 FROM {table}), "
        f"{', '.join('?' * len(columns))}) RETURNING *"
    )


@functools.lru_cache(maxsize=256)
def _update_sql(table: str, columns: tuple[str, ...], where: str) -> str:
    assignments = ", ".join(f"{column} = :{column}" for column in columns)
    return f"UPDATE {table} SET {assignments} WHERE {where} RETURNING *"


def _task_update(task_id: str, changes: dict[str, Any]) -> tuple[str, Params]:
    """The UPDATE of the given columns of one task, returning the new row, and its parameters."""
    unknown = set(changes) - TASK_COLUMNS
    assert not unknown, f"not task columns: {unknown}"
    query = _update_sql("tasks", tuple(changes), "id = :id")
    return query, {**_task_params(changes), "id": task_id}


_SATISFY_DEPENDENTS = (
    "UPDATE tasks SET unmet_deps = unmet_deps - 1 "
    "WHERE id IN (SELECT task_id FROM task_deps WHERE depends_on_task_id = ?)"
)
_CLOSE_RUNNING = (
    "UPDATE execution_processes SET status = :status, completed_at = :now, error = :error, "
    f"recovery_tombstone = 1 WHERE task_id = :task AND status = {RUN_RUNNING} RETURNING *"
)

_NEXT_NUMBER = {table: f"SELECT COALESCE(MAX(seq), 0) FROM {table}" for table in NUMBERED_TABLES}
TASK_BY_ID = "SELECT * FROM tasks WHERE id = ?"
# Ids bound in one statement, well under either store's limit on parameters (SQLite's 32,766).
_IDS_PER_STATEMENT = 1000


def _task_params(values: Mapping[str, Any]) -> dict[str, Any]:
    """Task values as bound: the JSON columns (`holders`) are TEXT holding JSON on both stores."""
    return {
        column: json.dumps(value) if column in TASK_JSON_COLUMNS else value
        for column, value in values.items()
    }


class SharedTx(LandingStatements, BudgetStatements, StatsStatements, ABC):
    """The statements of one transaction that both stores run alike (see `base.Tx` for what each
    promises). A store subclasses it, fills in the seam and adds the statements that must differ;
    mypy --strict checks the result against `base.Tx` (`_IMPLEMENTS_TX` in each store)."""

    LIKE_ANY_CASE: ClassVar[str] = "LIKE"
    # The SQL expression that makes one task row its JSON document (`Task.to_json`'s keys and
    # values), as UTF-8 bytes: each store spells it in its own JSON functions.
    TASK_DOCUMENT: ClassVar[str]
    task_by_id = TASK_BY_ID  # Postgres locks the row inside a serialised write

    def _text_index(self) -> str | None:
        """The board's text index that `text_match` writes for (`FTS5`, `PG_TRGM`), if any."""
        return None

    # -- the seam: one statement each, in this module's `?` / `:name` style ----------------------

    @abstractmethod
    def _fetchall(self, query: str, params: Params = ()) -> list[Row]: ...

    @abstractmethod
    def _fetchone(self, query: str, params: Params = ()) -> Row | None: ...

    @abstractmethod
    def _execute(self, query: str, params: Params = ()) -> int:
        """Run a statement that returns no rows; how many rows it changed."""

    @abstractmethod
    def _executemany(self, query: str, rows: list[Sequence[Any]]) -> None: ...

    def _each(self, statements: list[tuple[str, Params]]) -> list[list[Row]]:
        """Statements that do not depend on one another's answers, in order: each one's rows
        (none for a statement without RETURNING). Postgres sends them in one round trip."""
        return [self._fetchall(query, params) for query, params in statements]

    def _scalar(self, query: str, params: Params = ()) -> Any:
        """The first column of the one row a query returns (a count, a sum, a maximum)."""
        row = self._fetchone(query, params)
        assert row is not None
        return row[0]

    def _count(self, query: str, params: Params = ()) -> int:
        """The `COUNT(*)` a query returns."""
        return int(self._scalar(query, params))

    def _insert_numbered(self, table: str, prefix: str, values: Mapping[str, Any]) -> Row:
        """Insert a row under the next id of its table (`next_id`)."""
        return self._insert_row(
            table, ("id", *values), (self.next_id(table, prefix), *values.values())
        )

    def _insert_row(self, table: str, columns: tuple[str, ...], params: Sequence[Any]) -> Row:
        row = self._fetchone(_insert_sql(table, columns), params)
        assert row is not None
        return row

    # -- ids ------------------------------------------------------------------------------------

    def next_id(self, table: str, prefix: str) -> str:
        """The next short, typeable id of a table (`TASK-42`): unique because every write that
        creates rows is serialised (SQLite's write lock, the Postgres board's advisory lock)."""
        last = self._scalar(_NEXT_NUMBER[table])
        return f"{prefix}{last + 1}"

    # -- tasks ----------------------------------------------------------------------------------

    def task(self, task_id: str) -> Row | None:
        return self._fetchone(self.task_by_id, (task_id,))

    def insert_task(self, values: dict[str, Any]) -> Row:
        """`values` names its own id (from `next_id`); unknown keys are not columns, left out."""
        columns = ("id", *sorted(key for key in values if key in TASK_COLUMNS))
        params = [json.dumps(values[c]) if c in TASK_JSON_COLUMNS else values[c] for c in columns]
        return self._insert_row("tasks", columns, params)

    def update_task(self, task_id: str, changes: dict[str, Any]) -> Row:
        """Write the given columns of one task and return the new row."""
        row = self._fetchone(*_task_update(task_id, changes))
        assert row is not None
        return row

    def move_task(
        self,
        task_id: str,
        changes: dict[str, Any],
        *,
        satisfy_dependents: bool,
        close_runs: tuple[str, int, str] | None,
    ) -> tuple[Row, list[Row]]:
        """A status move's writes, which depend on none of one another's answers: the task's
        columns, one unmet dependency less for each direct dependent (it reached done), and the
        runs its holder left open closed (`close_runs`: their status, now, the error). The new
        row and the closed runs, in one round trip on Postgres (`_each`)."""
        statements: list[tuple[str, Params]] = [_task_update(task_id, changes)]
        if satisfy_dependents:
            statements.append((_SATISFY_DEPENDENTS, (task_id,)))
        if close_runs is not None:
            status, now, error = close_runs
            statements.append(
                (_CLOSE_RUNNING, {"task": task_id, "status": status, "now": now, "error": error})
            )
        results = self._each(statements)
        assert len(results[0]) == 1
        return results[0][0], results[-1] if close_runs is not None else []

    def release_after_lease_expiry(self, task_id: str, now: int) -> Row:
        """Back to todo for a fresh claim, with a new epoch so the lapsed worker is stale. The
        holders stay: a reclaim continues the same attempt, so none of them may review it."""
        row = self._fetchone(
            f"""
            UPDATE tasks SET
                status = {TODO},
                assignee_agent_id = NULL,
                assignee_runtime = NULL,
                lease_until = NULL,
                verification = NULL,
                claim_epoch = claim_epoch + 1,
                updated_at = :now,
                status_since = :now
            WHERE id = :id
            RETURNING *
            """,
            {"id": task_id, "now": now},
        )
        assert row is not None
        return row

    def _task_filter(
        self,
        *,
        status: str | None,
        team_id: str | None,
        assignee: str | None,
        role: str | None,
        include_dropped: bool,
        ready: bool,
        text: str | None = None,
    ) -> tuple[list[str], dict[str, Any]]:
        """The WHERE terms and parameters of a task list, shared by every way of reading one."""
        where: list[str] = []
        params: dict[str, Any] = {}
        if ready:
            where.append(READY)
        else:
            if status is not None:
                where.append("status = :status")
                params["status"] = status
            if not include_dropped:
                where.append("dropped = 0")
        if team_id is not None:
            where.append("team_id = :team_id")
            params["team_id"] = team_id
        if assignee is not None:
            where.append("assignee_agent_id = :assignee")
            params["assignee"] = assignee
        if role is not None:  # a ready list is what claim-next takes: role-less tasks too
            where.append(FOR_ROLE if ready else "role = :role")
            params["role"] = role
        if text:
            found = text_match(
                self.LIKE_ANY_CASE, TEXT_INDEX_COLUMNS, "pattern", text, params,
                index=self._text_index(),
            )  # fmt: skip
            where.append(found)
            params["exact"] = text.lower()  # ranked first (`_listing`)
        return where, params

    @staticmethod
    def _listing(
        columns: str,
        where: list[str],
        params: dict[str, Any],
        *,
        ready: bool,
        limit: int | None,
        page: bool,
        before_seq: int | None,
    ) -> str:
        """A task list's statement. A page walks creation order, newest first, from a cursor: the
        one order no write reshuffles (seq never changes), so a walk sees every task that was
        there all along exactly once. Otherwise the seed's order: claim order for ready lists,
        newest change first for the rest (a text search's task of that exact id first, so a
        limit never cuts it for TASK-10...TASK-19)."""
        terms = list(where)
        if page and before_seq is not None:
            terms.append("seq < :before_seq")
            params["before_seq"] = before_seq
        query = f"SELECT {columns} FROM tasks"
        if terms:
            query += " WHERE " + " AND ".join(terms)
        if page:
            query += f" {PAGE_ORDER}"
        elif "exact" in params and not ready:  # a text search: that id before longer ones
            query += f" ORDER BY CASE WHEN LOWER(id) = :exact THEN 0 ELSE 1 END, {CHANGE_KEYS}"
        else:
            query += f" {CLAIM_ORDER}" if ready else f" {CHANGE_ORDER}"
        if limit is not None:
            query += " LIMIT :limit"
            params["limit"] = limit
        return query

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
        """Filtered task list. Ready lists rank like claim-next; the rest newest change first.
        A text search matches the id, title or description holding it, ignoring case (as a
        view's filter), the task of that exact id first. With
        `page`, creation order newest first, below `before_seq` (see `_listing`)."""
        where, params = self._task_filter(
            status=status, team_id=team_id, assignee=assignee, role=role,
            include_dropped=include_dropped, ready=ready, text=text,
        )  # fmt: skip
        query = self._listing(
            "*", where, params, ready=ready, limit=limit, page=page, before_seq=before_seq
        )
        return self._fetchall(query, params)

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
        """`list_tasks`, each row as (seq, the task's JSON document as UTF-8 bytes), the document
        built by the database (`TASK_DOCUMENT`): a 10,000-task list is one query, serialised once,
        with no Python object per column."""
        where, params = self._task_filter(
            status=status, team_id=team_id, assignee=assignee, role=role,
            include_dropped=include_dropped, ready=ready,
        )  # fmt: skip
        query = self._listing(
            f"seq, {self.TASK_DOCUMENT}", where, params,
            ready=ready, limit=limit, page=page, before_seq=before_seq,
        )  # fmt: skip
        return self._fetchall(query, params)

    def plan_tasks(self, plan_name: str) -> list[Row]:
        """The tasks applied from one plan, in creation order (found by the plan-key index)."""
        return self._fetchall(
            "SELECT * FROM tasks WHERE plan_name = ? AND plan_key IS NOT NULL ORDER BY seq",
            (plan_name,),
        )

    def all_tasks(self) -> list[Row]:
        """Every task, dropped ones included, in creation order (the TUI's snapshot)."""
        return self._fetchall("SELECT * FROM tasks ORDER BY seq")

    # -- a live view (boardlib.columns holds the rules) ----------------------------------------

    def live_tasks(self) -> list[Row]:
        """Every unfinished task, dropped ones included, in creation order."""
        return self._fetchall(f"SELECT * FROM tasks WHERE status IN ({LIVE}) ORDER BY seq")

    def _search(self, search: TaskSearch) -> tuple[str, dict[str, Any]]:
        """`search` as conditions (each starting with AND) and their parameters: the one
        spelling of what a view's filter matches."""
        like = self.LIKE_ANY_CASE
        index = self._text_index() if search.words else None
        where: list[str] = []
        params: dict[str, Any] = {}
        if not search.include_dropped:
            where.append("dropped = 0")
        for name, column in (("team", "team_id"), ("role", "role")):
            value = getattr(search, name)
            if value is not None:
                where.append(f"LOWER({column}) = :{name}")
                params[name] = value.lower()
        if search.status is not None:
            where.append("status = :status")
            params["status"] = search.status
        if search.assignee is not None:
            where.append("(LOWER(assignee_agent_id) = :assignee OR LOWER(claimed_by) = :assignee)")
            params["assignee"] = search.assignee.lower()
        for n, word in enumerate(search.words):
            where.append(text_match(like, TEXT_INDEX_COLUMNS, f"w{n}", word, params, index=index))
        return "".join(f" AND {condition}" for condition in where), params

    def matching_ids(self, search: TaskSearch, task_ids: Sequence[str] | None) -> list[str]:
        """Of these tasks (None: every unfinished one), the ids `search` matches."""
        where, params = self._search(search)
        if task_ids is None:
            query = f"SELECT id FROM tasks WHERE status IN ({LIVE}){where}"
        elif not task_ids:
            return []
        else:
            marks = ", ".join(f":id{i}" for i in range(len(task_ids)))
            query = f"SELECT id FROM tasks WHERE id IN ({marks}){where}"
            params.update({f"id{i}": task_id for i, task_id in enumerate(task_ids)})
        return [row[0] for row in self._fetchall(query, params)]

    def search_tasks(self, search: TaskSearch, limit: int) -> list[Row]:
        """Up to `limit` tasks `search` matches, in any column, newest first."""
        where, params = self._search(search)
        params["limit"] = limit
        return self._fetchall(
            f"SELECT * FROM tasks WHERE seq > 0{where} ORDER BY seq DESC LIMIT :limit", params
        )

    def tasks_by_id_prefix(self, prefix: str, limit: int) -> list[Row]:
        """Up to `limit` undropped tasks whose id starts with `prefix` (any case): the unfinished
        first, each part newest first."""
        return self._fetchall(
            f"SELECT * FROM tasks WHERE seq > 0 AND dropped = 0"
            f" AND id {self.LIKE_ANY_CASE} :prefix ESCAPE '\\'"
            f" ORDER BY CASE WHEN status IN ({TERMINAL}) THEN 1 ELSE 0 END, seq DESC LIMIT :limit",
            {"prefix": like_prefix(prefix), "limit": limit},
        )

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
        """Up to `limit` tasks of a finished column in its order: from its top (skipping
        `offset`), after (older than) a key, or the `limit` just before (newer than) one."""
        where, params = self._search(search)
        params["limit"] = limit
        order = FINISHED_ORDER
        bound = ""
        if after is not None:
            bound = f" AND {OLDER_OR_SAME if inclusive else OLDER_THAN}"
            params["key_at"], params["key_seq"] = after
        elif before is not None:
            bound, order = f" AND {NEWER_THAN}", FINISHED_REVERSE
            params["key_at"], params["key_seq"] = before
        query = f"SELECT * FROM tasks WHERE status = {sql_literal(status)}{bound}{where} {order}"
        query += " LIMIT :limit"
        if offset:
            query += " OFFSET :offset"
            params["offset"] = offset
        rows = self._fetchall(query, params)
        return rows[::-1] if before is not None else rows

    def finished_count(
        self, status: str, search: TaskSearch, newer_than: FinishedKey | None
    ) -> int:
        """How many tasks of a finished column match `search` (only those above a key, its
        row, when given)."""
        where, params = self._search(search)
        bound = ""
        if newer_than is not None:
            bound = f" AND {NEWER_THAN}"
            params["key_at"], params["key_seq"] = newer_than
        return self._count(
            f"SELECT COUNT(*) FROM tasks WHERE status = {sql_literal(status)}{bound}{where}", params
        )

    def status_counts(self) -> dict[str, int]:
        rows = self._fetchall(
            "SELECT status, COUNT(*) FROM tasks WHERE dropped = 0 GROUP BY status"
        )
        return {row[0]: int(row[1]) for row in rows}

    # -- parent chain and caps ------------------------------------------------------------------

    def ancestors(self, task_id: str) -> list[Row]:
        """The parent chain, nearest parent first. The depth bound keeps a corrupt (cyclic) chain
        from running forever."""
        return self._fetchall(
            """
            WITH RECURSIVE chain(id, parent_task_id, title, status, depth) AS (
                SELECT p.id, p.parent_task_id, p.title, p.status, 1
                FROM tasks t JOIN tasks p ON p.id = t.parent_task_id
                WHERE t.id = :id
                UNION
                SELECT p.id, p.parent_task_id, p.title, p.status, chain.depth + 1
                FROM chain JOIN tasks p ON p.id = chain.parent_task_id
                WHERE chain.depth < 1000
            )
            SELECT id, parent_task_id, title, status, depth FROM chain ORDER BY depth
            """,
            {"id": task_id},
        )

    def live_children(self, parent_id: str) -> int:
        """Unfinished children, dropped ones included: one `restore` makes them live again."""
        return self._count(
            f"SELECT COUNT(*) FROM tasks WHERE parent_task_id = ? AND status NOT IN ({TERMINAL})",
            (parent_id,),
        )

    def root_creators_since(self, since_ms: int) -> dict[str, int]:
        """Parentless tasks created since `since_ms`, counted by who created them (their
        `task_created` event's actor; an event past its TTL counts no more, and a live task keeps
        its events)."""
        rows = self._fetchall(ROOT_CREATORS, (since_ms, since_ms))
        return {str(row["actor"]): int(row["n"]) for row in rows if row["actor"] is not None}

    # -- dependencies ---------------------------------------------------------------------------

    def insert_dependency(
        self, task_id: str, depends_on: str, now: int, tenant: str | None
    ) -> bool:
        """Link `task_id -> depends_on`; re-linking is harmless. True when the edge is new."""
        row = self._fetchone(
            "INSERT INTO task_deps (task_id, depends_on_task_id, tenant_id, created_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING 1",
            (task_id, depends_on, tenant, now),
        )
        return row is not None

    def delete_dependency(self, task_id: str, depends_on: str) -> bool:
        row = self._fetchone(
            "DELETE FROM task_deps WHERE task_id = ? AND depends_on_task_id = ? RETURNING 1",
            (task_id, depends_on),
        )
        return row is not None

    def depends_transitively(self, start: str, target: str) -> bool:
        """Whether `target` is reachable from `start` along depends-on edges (start itself
        included). `UNION`, not `UNION ALL`, so even a corrupt cyclic graph terminates. Race-free
        because every link is written inside a serialised write."""
        row = self._fetchone(
            """
            WITH RECURSIVE reach(id) AS (
                SELECT CAST(:start AS TEXT)
                UNION
                SELECT d.depends_on_task_id FROM task_deps d JOIN reach r ON d.task_id = r.id
            )
            SELECT 1 FROM reach WHERE id = :target LIMIT 1
            """,
            {"start": start, "target": target},
        )
        return row is not None

    def dependency_edges_from(self, start: str) -> list[tuple[str, str]]:
        """Every depends-on edge reachable from `start`: used only to name a refused cycle."""
        rows = self._fetchall(
            """
            WITH RECURSIVE reach(id) AS (
                SELECT CAST(:start AS TEXT)
                UNION
                SELECT d.depends_on_task_id FROM task_deps d JOIN reach r ON d.task_id = r.id
            )
            SELECT d.task_id, d.depends_on_task_id FROM task_deps d JOIN reach r ON d.task_id = r.id
            """,
            {"start": start},
        )
        return [(row[0], row[1]) for row in rows]

    def dependencies(self, task_id: str) -> list[Row]:
        """What `task_id` waits on, with each blocker's status."""
        return self._fetchall(
            "SELECT t.id, t.title, t.status, t.assignee_agent_id, t.dropped "
            "FROM task_deps d JOIN tasks t ON t.id = d.depends_on_task_id "
            "WHERE d.task_id = ? ORDER BY t.seq",
            (task_id,),
        )

    def dependents(self, task_id: str) -> list[Row]:
        """What waits on `task_id`."""
        return self._fetchall(
            "SELECT t.id, t.title, t.status, t.assignee_agent_id, t.dropped "
            "FROM task_deps d JOIN tasks t ON t.id = d.task_id "
            "WHERE d.depends_on_task_id = ? ORDER BY t.seq",
            (task_id,),
        )

    def count_unmet_dependencies(self, task_id: str) -> int:
        return self._count(
            "SELECT COUNT(*) FROM task_deps d JOIN tasks t ON t.id = d.depends_on_task_id "
            f"WHERE d.task_id = ? AND t.status <> {DONE}",
            (task_id,),
        )

    def add_unmet_dependency(self, task_id: str, delta: int) -> None:
        self._execute("UPDATE tasks SET unmet_deps = unmet_deps + ? WHERE id = ?", (delta, task_id))

    def satisfy_dependents(self, done_task_id: str) -> None:
        """`done_task_id` just reached done: each direct dependent has one unmet dependency less."""
        self._execute(_SATISFY_DEPENDENTS, (done_task_id,))

    def cancel_pending_dependents(self, task_id: str, now: int) -> list[tuple[str, Row]]:
        """Cancel every still-pending transitive dependent of `task_id`, each with the status it
        left (its event's `from`), so a dependent claimed a moment earlier is left alone rather
        than cancelled under its worker (on Postgres the claimer's row lock is waited for, then
        its committed status re-read). One statement per pending status: the status each row
        left is the one its statement matched, never one read before it."""
        cancelled: list[tuple[str, Row]] = []
        for pending in in_column_order(PENDING_STATUSES):
            rows = self._fetchall(
                f"""
                WITH RECURSIVE downstream(id) AS (
                    SELECT task_id FROM task_deps WHERE depends_on_task_id = :id
                    UNION
                    SELECT d.task_id FROM task_deps d
                    JOIN downstream s ON d.depends_on_task_id = s.id
                )
                UPDATE tasks SET status = {CANCELLED}, lease_until = NULL, updated_at = :now,
                    status_since = :now
                WHERE id IN (SELECT id FROM downstream) AND status = :pending
                RETURNING *
                """,
                {"id": task_id, "now": now, "pending": pending},
            )
            cancelled += [(pending, row) for row in rows]
        return cancelled

    def dependency_cycle_edges(self) -> list[tuple[str, str]]:
        """Every depends-on edge that can lie on a cycle: both ends have dependencies of their
        own (a task that depends on nothing, or that nothing depends on, closes no cycle), and
        every self-loop. `db check` walks these; on a healthy board it is a short list."""
        rows = self._fetchall(
            """
            SELECT d.task_id, d.depends_on_task_id FROM task_deps d
            WHERE d.task_id = d.depends_on_task_id
               OR (EXISTS (SELECT 1 FROM task_deps x WHERE x.task_id = d.depends_on_task_id)
                   AND EXISTS (SELECT 1 FROM task_deps y WHERE y.depends_on_task_id = d.task_id))
            ORDER BY d.task_id, d.depends_on_task_id
            """
        )
        return [(row[0], row[1]) for row in rows]

    def unmet_dependency_drift(self) -> list[Row]:
        """Tasks whose kept `unmet_deps` disagrees with a recount (should always be empty): the
        tasks with dependencies recounted from `task_deps`, then any other task whose count is
        not 0, found in one plain pass over the table (100,000 tasks: 55 -> 15 ms, where a
        recount of every task walked the id index and looked each row up)."""
        return self._fetchall(
            f"""
            SELECT d.task_id AS id, t.unmet_deps AS kept, COUNT(b.id) AS actual
            FROM task_deps d
            JOIN tasks t ON t.id = d.task_id
            LEFT JOIN tasks b ON b.id = d.depends_on_task_id AND b.status <> {DONE}
            GROUP BY d.task_id, t.unmet_deps HAVING t.unmet_deps <> COUNT(b.id)
            UNION ALL
            SELECT t.id, t.unmet_deps, 0 FROM tasks t
            WHERE t.unmet_deps <> 0
              AND NOT EXISTS (SELECT 1 FROM task_deps d WHERE d.task_id = t.id)
            ORDER BY 1
            """
        )

    # -- comments -------------------------------------------------------------------------------

    def insert_comment(
        self,
        task_id: str,
        body: str,
        author_type: str,
        author_agent_id: str | None,
        now: int,
        tenant: str | None,
        anchor: "Anchor | None" = None,
    ) -> Row:
        row = self._fetchone(
            """
            INSERT INTO task_comments
                (seq, id, task_id, author_agent_id, author_type, body, tenant_id, created_at,
                 path, line, side, line_text)
            VALUES ((SELECT COALESCE(MAX(seq), 0) + 1 FROM task_comments),
                    ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            RETURNING *
            """,
            (
                self.next_id("task_comments", "C-"),
                task_id,
                author_agent_id,
                author_type,
                body,
                tenant,
                now,
                *(
                    (
                        anchor.path,
                        anchor.line,
                        anchor.side if anchor.line else None,
                        anchor.line_text,
                    )
                    if anchor is not None
                    else (None, None, None, None)
                ),
            ),
        )
        assert row is not None
        return row

    def comments(self, task_id: str) -> list[Row]:
        return self._fetchall(
            "SELECT * FROM task_comments WHERE task_id = ? ORDER BY seq", (task_id,)
        )

    # -- executions -----------------------------------------------------------------------------

    def insert_execution(self, values: dict[str, Any]) -> Row:
        return self._insert_numbered("execution_processes", "EXEC-", values)

    def execution(self, execution_id: str) -> Row | None:
        return self._fetchone("SELECT * FROM execution_processes WHERE id = ?", (execution_id,))

    def close_running_execution(self, execution_id: str, changes: dict[str, Any]) -> Row | None:
        """Close a still-running execution; a closed row is immutable, so a second close (or an
        unknown id) matches nothing and returns None."""
        assert set(changes) <= EXECUTION_CLOSE_COLUMNS
        return self._fetchone(
            _update_sql(
                "execution_processes", tuple(changes), f"id = :id AND status = {RUN_RUNNING}"
            ),
            {**changes, "id": execution_id},
        )

    def record_late_ledger(self, execution_id: str, ledger: dict[str, Any]) -> Row | None:
        """Write the cost and tokens its holder reports for a run the board closed before it
        did (`close_running_executions`, lease expiry), once: only while the run reported none,
        so a second report matches nothing and returns None. Nothing else of the run changes."""
        assert ledger and set(ledger) <= set(EXECUTION_LEDGER)
        return self._fetchone(
            _update_sql(
                "execution_processes",
                tuple(ledger),
                f"id = :id AND status <> {RUN_RUNNING} AND recovery_tombstone = 1 AND "
                f"{_LEDGER_UNREPORTED}",
            ),
            {**ledger, "id": execution_id},
        )

    def time_out_running_executions(self, task_id: str, now: int, error: str) -> list[Row]:
        """The lease of `task_id` expired: its running executions are over, tombstoned so a second
        recovery pass finds nothing to do."""
        return self.close_running_executions(task_id, EXECUTION_TIMED_OUT, now, error)

    def close_running_executions(
        self, task_id: str, status: str, now: int, error: str
    ) -> list[Row]:
        """Close the runs its holder left open when the task moved on (`cancelled`), tombstoned
        like lease expiry's `timed_out`, so the holder's late `exec finish` is `not_found`."""
        return self._fetchall(
            _CLOSE_RUNNING, {"task": task_id, "status": status, "now": now, "error": error}
        )

    def executions(self, task_id: str) -> list[Row]:
        return self._fetchall(
            "SELECT * FROM execution_processes WHERE task_id = ? ORDER BY seq", (task_id,)
        )

    def execution_cost(self, task_id: str) -> float:
        """The sum of a task's runs, added up in whole micro-dollars (exact, no float drift)."""
        micros = self._scalar(
            f"SELECT COALESCE(SUM(ROUND(cost_usd * {MICROS_PER_USD})), 0) FROM execution_processes "
            "WHERE task_id = ?",
            (task_id,),
        )
        return int(micros) / MICROS_PER_USD

    # -- workspaces -----------------------------------------------------------------------------

    def insert_workspace(self, values: dict[str, Any]) -> Row:
        return self._insert_numbered("workspaces", "WS-", values)

    def update_workspace(
        self, workspace_id: str, changes: dict[str, Any], *, only_from: str | None = None
    ) -> Row | None:
        """The updated row; None when there is none, or (`only_from`) when its status is another
        by now: the condition is in the UPDATE itself, so of two writers one changes it."""
        assert set(changes) <= WORKSPACE_UPDATE_COLUMNS
        where, params = "id = :id", {**changes, "id": workspace_id}
        if only_from is not None:
            where, params = "id = :id AND status = :only_from", {**params, "only_from": only_from}
        return self._fetchone(_update_sql("workspaces", tuple(changes), where), params)

    def workspace(self, workspace_id: str) -> Row | None:
        return self._fetchone("SELECT * FROM workspaces WHERE id = ?", (workspace_id,))

    def workspaces(self, task_id: str) -> list[Row]:
        return self._fetchall("SELECT * FROM workspaces WHERE task_id = ? ORDER BY seq", (task_id,))

    def workspaces_with_status(self, status: str) -> list[Row]:
        return self._fetchall("SELECT * FROM workspaces WHERE status = ? ORDER BY seq", (status,))

    # -- what needs a person (boardlib.attention holds the rule) ---------------------------------

    def awaiting_person(self) -> list[Row]:
        """Tasks in review or blocked, oldest in that status first: one walk of the partial index
        `tasks_attention`, however many tasks the board holds."""
        return self._fetchall(
            f"SELECT * FROM tasks WHERE {AWAITING_PERSON} ORDER BY status_since, seq"
        )

    def status_entry(self, task_id: str) -> Row | None:
        """The event of the move that put a task in its status (its newest `status_changed`):
        who moved it, by which verb, why. Read through `events_task`; a live task's events are
        never pruned, so a task still waiting on a person keeps it."""
        return self._fetchone(
            f"SELECT * FROM events WHERE task_id = ? AND kind = {STATUS_CHANGED_EVENT} "
            "ORDER BY seq DESC LIMIT 1",
            (task_id,),
        )

    def gate_entry(self, task_id: str) -> Row | None:
        """The task's newest move or gate event (`GATE_EVENTS`): a `verification_started` one
        while its gate has neither recorded, stopped nor been overtaken by a move. Read through
        `events_task`, newest first: a task in review has few events since it came there."""
        return self._fetchone(
            f"SELECT * FROM events WHERE task_id = ? AND kind IN ({GATE_EVENTS}) "
            "ORDER BY seq DESC LIMIT 1",
            (task_id,),
        )

    def gate_entries(self, task_ids: Sequence[str]) -> dict[str, Row]:
        """`gate_entry` of each of these tasks that has one, by task id: one statement for the
        inbox's tasks in review, each one's newest found first through `events_task` (1,299
        tasks: 5.3 ms of CPU, 8.4 asked one by one). `MAX(seq) ... GROUP BY task_id` was slower
        than both: SQLite read it from `events_kind`, every move's entry."""
        found: dict[str, Row] = {}
        for start in range(0, len(task_ids), _IDS_PER_STATEMENT):
            chunk = task_ids[start : start + _IDS_PER_STATEMENT]
            marks = ", ".join(f":t{i}" for i in range(len(chunk)))
            rows = self._fetchall(
                "SELECT * FROM events WHERE seq IN (SELECT (SELECT g.seq FROM events g "
                f"WHERE g.task_id = t.id AND g.kind IN ({GATE_EVENTS}) "
                f"ORDER BY g.seq DESC LIMIT 1) FROM tasks t WHERE t.id IN ({marks}))",
                {f"t{i}": task_id for i, task_id in enumerate(chunk)},
            )
            found.update((row["task_id"], row) for row in rows)
        return found

    def lapsed_leases(self, now: int) -> list[Row]:
        """In-progress tasks whose lease ran out and that nobody released yet (a read: the
        release itself is `expired_leases`, which takes the rows)."""
        return self._fetchall(
            f"SELECT * FROM tasks WHERE status = {IN_PROGRESS} AND {EXPIRED_SQL} "
            "ORDER BY lease_until, seq",
            (now,),
        )

    def quiet_runs(self, now: int, quiet_since: int) -> list[Row]:
        """In-progress tasks with a lease still live, a running execution, and no beat since
        `quiet_since`: the task's columns plus the run's `run_id` and `run_started_at`."""
        return self._fetchall(
            f"""
            SELECT t.*, e.id AS run_id, e.started_at AS run_started_at
            FROM tasks t JOIN execution_processes e ON e.task_id = t.id AND e.status = {RUN_RUNNING}
            WHERE t.status = {IN_PROGRESS}
              AND (t.lease_until IS NULL OR t.lease_until >= :now)
              AND COALESCE(t.last_heartbeat_at, e.started_at, e.created_at) < :quiet
            ORDER BY t.seq, e.seq
            """,
            {"now": now, "quiet": quiet_since},
        )

    def held_consumers(self) -> list[Row]:
        """Consumers holding a delivery, each with the held event's task, its title and the
        event's kind (NULL once the event is gone, which the purge never does to an unread one)."""
        return self._fetchall(
            "SELECT c.*, e.task_id AS event_task_id, e.kind AS event_kind, "
            "t.title AS event_task_title "
            "FROM event_consumers c LEFT JOIN events e ON e.seq = c.failing_seq "
            "LEFT JOIN tasks t ON t.id = e.task_id "
            "WHERE c.held_since IS NOT NULL ORDER BY c.held_since, c.name"
        )

    def unlanded_work(self) -> list[Row]:
        """Done, not landed, with a live worktree: a walk of `workspaces_live` (live worktrees
        are few), never of the done tasks. CROSS JOIN keeps SQLite's planner to that order."""
        return self._fetchall(
            f"""
            SELECT t.*, w.branch AS land_branch
            FROM workspaces w CROSS JOIN tasks t
            WHERE t.id = w.task_id AND w.status = {WORKSPACE_ACTIVE} AND t.status = {DONE}
              AND t.landed_commit IS NULL AND t.dropped = 0
            ORDER BY t.status_since, t.seq, w.seq
            """
        )

    # A refusal still standing: refused in the task's current status (a later move, such as a
    # reject and a new review, makes the old refusal moot), the task not landed.
    _STANDING_REFUSALS = f"""
        SELECT t.*, r.reason AS refusal_reason, r.message AS refusal_message,
               r.actor AS refusal_actor, r.into_branch AS refusal_into,
               r.refused_at AS refusal_at
        FROM land_refusals r CROSS JOIN tasks t
        WHERE t.id = r.task_id AND t.status IN ({IN_REVIEW}, {DONE}) AND t.landed_commit IS NULL
          AND t.dropped = 0 AND r.refused_at >= COALESCE(t.status_since, 0)
    """

    def land_refusals_waiting(self) -> list[Row]:
        return self._fetchall(self._STANDING_REFUSALS + " ORDER BY r.refused_at, t.seq")

    def land_refusal_standing(self, task_id: str) -> Row | None:
        return self._fetchone(self._STANDING_REFUSALS + " AND r.task_id = ?", (task_id,))

    def put_land_refusal(self, values: dict[str, Any]) -> None:
        self._execute(
            "INSERT INTO land_refusals "
            "(task_id, reason, message, actor, into_branch, tenant_id, refused_at) "
            "VALUES (:task_id, :reason, :message, :actor, :into_branch, :tenant_id, :refused_at) "
            "ON CONFLICT (task_id) DO UPDATE SET reason = excluded.reason, "
            "message = excluded.message, actor = excluded.actor, "
            "into_branch = excluded.into_branch, refused_at = excluded.refused_at",
            values,
        )

    def delete_land_refusal(self, task_id: str) -> None:
        self._execute("DELETE FROM land_refusals WHERE task_id = ?", (task_id,))

    # -- event consumers (boardlib.watch holds the rule) -----------------------------------------

    def consumer(self, name: str) -> Row | None:
        return self._fetchone("SELECT * FROM event_consumers WHERE name = ?", (name,))

    def consumers(self) -> list[Row]:
        return self._fetchall("SELECT * FROM event_consumers ORDER BY name")

    def insert_consumer(self, name: str, last_seq: int, now: int) -> Row:
        row = self._fetchone(
            "INSERT INTO event_consumers (name, last_seq, failures, created_at, updated_at) "
            "VALUES (?, ?, 0, ?, ?) RETURNING *",
            (name, last_seq, now, now),
        )
        assert row is not None
        return row

    def update_consumer(self, name: str, changes: dict[str, Any]) -> Row | None:
        assert set(changes) <= CONSUMER_COLUMNS, set(changes) - CONSUMER_COLUMNS
        return self._fetchone(
            _update_sql("event_consumers", tuple(changes), "name = :name"),
            {**changes, "name": name},
        )

    def delete_consumer(self, name: str) -> bool:
        row = self._fetchone("DELETE FROM event_consumers WHERE name = ? RETURNING 1", (name,))
        return row is not None

    # -- events and audit -----------------------------------------------------------------------

    def purge_expired_events(self, now: int, limit: int) -> int:
        """Delete up to `limit` events past their TTL, oldest first, except those of tasks still
        in flight (a live task keeps its whole history until it finishes), the newest event (so
        seqs only ever grow) and any a consumer has not read (`READ_BY_EVERY_CONSUMER`)."""
        return self._execute(
            f"""
            DELETE FROM events WHERE seq IN (
                SELECT seq FROM events
                WHERE ttl_seconds IS NOT NULL
                  AND created_at + ttl_seconds * 1000 < :now
                  AND seq < (SELECT MAX(seq) FROM events)
                  AND {READ_BY_EVERY_CONSUMER}
                  AND (task_id IS NULL OR NOT EXISTS (
                        SELECT 1 FROM tasks t WHERE t.id = events.task_id
                        AND t.status NOT IN ({TERMINAL})))
                ORDER BY seq LIMIT :limit)
            """,
            {"now": now, "limit": limit},
        )

    # -- archiving old events (boardlib.archive holds the rules) --------------------------------

    def lowest_consumer_cursor(self) -> int | None:
        lowest = self._scalar(f"SELECT {LOWEST_CURSOR}")
        return None if lowest is None else int(lowest)

    def prunable_events(self, after: int, through: int, before_ms: int, limit: int) -> list[Row]:
        """The next events a prune may take, oldest first (`PRUNABLE`)."""
        return self._fetchall(
            f"SELECT * FROM events WHERE seq > :after AND {PRUNABLE} ORDER BY seq LIMIT :limit",
            {"after": after, "through": through, "before": before_ms, "limit": limit},
        )

    def unread_old_events(self, after: int, through: int, before_ms: int) -> tuple[int, int]:
        """How many events above `after` (the lowest consumer cursor) a prune would take but for
        the consumers, and the highest of their seqs (0: none)."""
        row = self._fetchone(
            f"SELECT COUNT(*) AS held, COALESCE(MAX(seq), 0) AS highest FROM events "
            f"WHERE seq > :after AND {OLD_AND_SETTLED}",
            {"after": after, "through": through, "before": before_ms},
        )
        assert row is not None
        return int(row["held"]), int(row["highest"])

    def delete_events(self, seqs: Sequence[int], through: int, before_ms: int) -> int:
        """Delete these events, of those still prunable now (a rule re-checked, not trusted)."""
        if not seqs:
            return 0
        marks = ", ".join(f":s{i}" for i in range(len(seqs)))
        params: dict[str, Any] = {f"s{i}": seq for i, seq in enumerate(seqs)}
        params.update(through=through, before=before_ms)
        return self._execute(f"DELETE FROM events WHERE seq IN ({marks}) AND {PRUNABLE}", params)

    def count_events(self) -> int:
        return self._count("SELECT COUNT(*) FROM events")

    def first_task_id(self) -> str | None:
        """The board's first task (tasks are never deleted): part of the identity an archive
        carries."""
        row = self._fetchone("SELECT id FROM tasks ORDER BY seq LIMIT 1")
        return None if row is None else str(row["id"])

    def events_at(self, seqs: Sequence[int]) -> list[Row]:
        """The events with these seqs that the board holds."""
        if not seqs:
            return []
        marks = ", ".join(f":s{i}" for i in range(len(seqs)))
        return self._fetchall(
            f"SELECT * FROM events WHERE seq IN ({marks}) ORDER BY seq",
            {f"s{i}": seq for i, seq in enumerate(seqs)},
        )

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
    ) -> None:
        self._execute(
            """
            INSERT INTO audit (task_id, actor, action, from_status, to_status,
                               verdict_overridden, detail, created_at, tenant_id)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            (
                task_id,
                actor,
                action,
                from_status,
                to_status,
                verdict_overridden,
                detail,
                now,
                tenant,
            ),
        )

    def audit(self, task_id: str | None = None) -> list[Row]:
        if task_id is None:
            return self._fetchall("SELECT * FROM audit ORDER BY seq")
        return self._fetchall("SELECT * FROM audit WHERE task_id = ? ORDER BY seq", (task_id,))

    def audit_of(self, actions: Sequence[str]) -> list[Row]:
        marks = ", ".join("?" * len(actions))
        return self._fetchall(
            f"SELECT * FROM audit WHERE action IN ({marks}) AND task_id IS NOT NULL ORDER BY seq",
            tuple(actions),
        )

    # -- whole-board copies ---------------------------------------------------------------------

    def table_rows(self, table: str) -> list[Row]:
        keys = dict(TABLES)[table]
        return self._fetchall(f"SELECT * FROM {table} ORDER BY {', '.join(keys)}")

    def load_rows(self, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> int:
        """Insert rows verbatim (keys included) into an empty table; returns how many. The column
        names come from the source board's rows and are checked to be plain identifiers."""
        # Checked, not asserted: the names come from a file being copied, and an assert is gone
        # under `python -O`; a quoted column name could otherwise carry SQL into the target.
        odd = [column for column in columns if not _IDENTIFIER.fullmatch(column)]
        if table not in dict(TABLES) or odd:
            raise BoardError(
                Reason.INVALID_INPUT,
                f"cannot copy table {table!r}: it is not a board table, or has column names that "
                f"are not plain identifiers ({', '.join(map(repr, odd))})",
                table=table,
            )
        batch = list(rows)
        self._executemany(
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
            batch,
        )
        return len(batch)
