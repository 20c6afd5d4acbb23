"""A board as a live view reads it: every unfinished task whole, each finished column (done,
cancelled) a page at a time, newest first, with its count; and a search the store answers.

A year of work is mostly finished tasks: a view that loaded them whole would pay for all of them
at start-up and in memory. Here they come in pages (keyset, from the column's index) as the
operator scrolls, and a search never scans in Python: the store says which tasks match. The
display order of each column is declared here once; the store's SQL follows it
(`store/queries.py`, tested against it). Why: docs/tui.md#a-year-of-work-on-one-board
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from . import transitions as t
from .records import Event, Task

if TYPE_CHECKING:
    from .store.base import Row, Tx

PAGE_SIZE = 100  # finished tasks per page: two screens of a tall terminal
FINISHED: tuple[str, ...] = tuple(s for s in t.STATUSES if s in t.TERMINAL)  # done, cancelled
LIVE: tuple[str, ...] = tuple(s for s in t.STATUSES if s not in t.TERMINAL)

# Where a finished task sits: its finishing time (done: completed_at; cancelled: its last change)
# and its seq, both descending, so the newest finished work is on top.
FinishedKey = tuple[int, int]


def finished_at(task: Task) -> int:
    """When a finished task finished, as its column orders it (the SQL twin: FINISHED_AT)."""
    return task.completed_at if task.completed_at is not None else task.updated_at


def finished_key(task: Task, seq: int) -> FinishedKey:
    return (finished_at(task), seq)


def sort_key(task: Task, seq: int) -> tuple[int, int]:
    """Ascending sort key of a task in its column: finished work newest first; the rest by
    priority, then creation (never `updated_at`, which would reorder on every heartbeat)."""
    if task.status in t.TERMINAL:
        return (-finished_at(task), -seq)
    return (-task.priority, seq)


@dataclass(frozen=True, slots=True)
class TaskSearch:
    """What a view shows: tasks whose id, title or description contain every word (any case),
    with these team, role, status and assignee (the holder or the first claimer, any case);
    dropped tasks only with `include_dropped`."""

    words: tuple[str, ...] = ()
    team: str | None = None
    assignee: str | None = None
    role: str | None = None
    status: str | None = None
    include_dropped: bool = False

    @property
    def narrows(self) -> bool:
        """Whether it picks among the tasks in scope (more than the dropped toggle)."""
        return bool(self.words or self.team or self.assignee or self.role or self.status)


@dataclass(frozen=True, slots=True)
class PageRequest:
    """A page of one finished column: after (older than) or before (newer than) a key, from a
    row (`offset`: a jump), or the page holding a task (`around`: its status is looked up when
    `status` is None). `inclusive` takes the `after` key's own task too (a window re-read)."""

    status: str | None
    after: FinishedKey | None = None
    before: FinishedKey | None = None
    offset: int | None = None
    around: str | None = None
    inclusive: bool = False
    limit: int = PAGE_SIZE


@dataclass(slots=True)
class ColumnPage:
    """Consecutive tasks of one finished column, read in one snapshot with its counts."""

    status: str
    tasks: list[Task]
    seqs: list[int]
    start: int  # the column row of tasks[0]
    rows: int  # tasks the column shows (matching the search)
    total: int  # tasks the column holds in scope, search or not
    request: PageRequest | None = None  # None: the column's first page of a full read
    target: Task | None = None  # an `around` request's task as it is now (None: no such task)


@dataclass(slots=True)
class ColumnCount:
    """A finished column re-counted after a change touched it, and where its window now starts
    (the rank of the anchor the view gave; None when it gave none or the anchor left)."""

    rows: int
    total: int
    anchor: FinishedKey | None = None  # the key the view gave
    anchor_row: int | None = None  # how many tasks are above that key now


@dataclass(slots=True)
class ViewRead:
    """What one read hands a live view, all from one snapshot. `full`: `tasks` is every
    unfinished task and `pages` holds each finished column's first page; otherwise `tasks` are
    the rows that changed since the cursor. `matching`: of `tasks` (all of them, after a new
    search), the ids the search matches; None when the search does not narrow."""

    full: bool
    tasks: list[Task]
    seqs: list[int]
    cursor: int
    events: list[Event] = field(default_factory=list)
    matching: frozenset[str] | None = None
    rematched: bool = False  # a new search: `matching` covers every unfinished task
    pages: list[ColumnPage] = field(default_factory=list)
    counts: dict[str, ColumnCount] = field(default_factory=dict)
    overflow: bool = False  # more events than the limit: read in full instead


def read_view(
    tx: "Tx",
    search: TaskSearch,
    *,
    since: int | None,
    rematch: bool,
    pages: Sequence[PageRequest],
    anchors: Mapping[str, FinishedKey],
    limit: int,
    page_size: int,
    changes: bool = True,
) -> ViewRead:
    """One read of a live view, in the caller's read transaction (see `Board.live_view`)."""
    if since is None:
        rows = tx.live_tasks()
        matching = frozenset(tx.matching_ids(search, None)) if search.narrows else None
        return ViewRead(
            full=True,
            tasks=Task.from_rows(rows),
            seqs=[row["seq"] for row in rows],
            cursor=tx.last_event_seq(),
            matching=matching,
            pages=[_first_page(tx, status, search, page_size) for status in FINISHED],
        )
    events = [Event.from_row(row) for row in tx.events(since=since, limit=limit)]
    if not changes:
        events = []
    if len(events) >= limit:
        return ViewRead(full=False, tasks=[], seqs=[], cursor=since, overflow=True)
    # The rows the events name, and their direct dependents (a move to done changes a
    # dependent's unmet-dependency count without an event of its own).
    named = list(dict.fromkeys(e.task_id for e in events if e.task_id is not None))
    touched = dict.fromkeys(named)
    for task_id in named:
        touched.update(dict.fromkeys(row["id"] for row in tx.dependents(task_id)))
    rows = tx.tasks_by_id(list(touched))
    tasks = Task.from_rows(rows)
    read = ViewRead(
        full=False,
        tasks=tasks,
        seqs=[row["seq"] for row in rows],
        cursor=events[-1].seq if events else since,
        events=events,
    )
    if search.narrows:
        changed = frozenset(tx.matching_ids(search, [task.id for task in tasks]))
        read.matching = changed | frozenset(tx.matching_ids(search, None)) if rematch else changed
    read.rematched = rematch
    if rematch:
        read.pages = [_first_page(tx, status, search, page_size) for status in FINISHED]
    read.pages += [_page(tx, request, search) for request in pages]
    paged = {page.status for page in read.pages}
    for status in dict.fromkeys(task.status for task in tasks):
        if status in FINISHED and status not in paged:
            anchor = anchors.get(status)
            rows_now, total = _counts(tx, status, search)
            anchor_row = tx.finished_count(status, search, anchor) if anchor else None
            read.counts[status] = ColumnCount(rows_now, total, anchor, anchor_row)
    return read


def _counts(tx: "Tx", status: str, search: TaskSearch, known: int | None = None) -> tuple[int, int]:
    """(rows the search shows, tasks in scope) of a finished column. `known`: the rows, when a
    page that reached the column's end already says (a rare match scans the column once, not
    twice); the count in scope is an index count."""
    rows = tx.finished_count(status, search, None) if known is None else known
    if not search.narrows:
        return rows, rows
    return rows, tx.finished_count(status, TaskSearch(include_dropped=search.include_dropped), None)


def _reached_end(rows: "list[Row]", limit: int, start: int) -> int | None:
    return start + len(rows) if len(rows) < limit else None


def _built(status: str, rows: "list[Row]", start: int, counts: tuple[int, int]) -> ColumnPage:
    return ColumnPage(status, Task.from_rows(rows), [row["seq"] for row in rows], start, *counts)


def _first_page(tx: "Tx", status: str, search: TaskSearch, size: int) -> ColumnPage:
    rows = tx.finished_page(status, search, limit=size)
    return _built(status, rows, 0, _counts(tx, status, search, _reached_end(rows, size, 0)))


def _page(tx: "Tx", request: PageRequest, search: TaskSearch) -> ColumnPage:
    status, limit = request.status, request.limit
    if request.around is not None:
        row = tx.task(request.around)
        target = Task.from_row(row) if row is not None else None
        if row is None or target is None:
            return ColumnPage(status or "", [], [], 0, 0, 0, request)
        if target.status not in FINISHED:  # a view holds every unfinished task: no window
            return ColumnPage(target.status, [target], [row["seq"]], 0, 0, 0, request, target)
        status = target.status
        key = finished_key(target, row["seq"])
        matched = bool(tx.matching_ids(search, [target.id]))
        offset = max(tx.finished_count(status, search, key) - limit // 2, 0) if matched else 0
        rows = tx.finished_page(status, search, offset=offset, limit=limit) if matched else []
        page = _built(status, rows, offset, _counts(tx, status, search))
        page.target = target
    elif status is None or status not in FINISHED:
        raise ValueError(f"a page of {status!r}: pages are of finished columns")
    elif request.offset is not None:
        rows = tx.finished_page(status, search, offset=request.offset, limit=limit)
        end = _reached_end(rows, limit, request.offset) if rows else None
        page = _built(status, rows, request.offset, _counts(tx, status, search, end))
    elif request.after is not None or request.before is not None:
        rows = tx.finished_page(
            status,
            search,
            after=request.after,
            inclusive=request.inclusive,
            before=request.before,
            limit=limit,
        )
        counts = _counts(tx, status, search)
        if rows:
            first = finished_key(Task.from_row(rows[0]), rows[0]["seq"])
            start = tx.finished_count(status, search, first)
        else:
            start = counts[0] if request.after is not None else 0
        page = _built(status, rows, start, counts)
    else:
        page = _first_page(tx, status, search, limit)
    page.request = request
    return page
