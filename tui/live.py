"""The live feed: one reader thread, one long-lived read-only connection, one message per change.

Why a thread of its own: a query in a timer callback blocks the event loop, and thread workers run
on a pool, so a connection would hop between threads. The thread keeps its `Board(read_only=True)`.
Every poll it asks the change token whether anyone committed (SQLite: `PRAGMA data_version`, a few
microseconds; Postgres: a NOTIFY check, with a fallback read of the event cursor); only then does it
read what changed since its cursor (`Board.live_view`) and post ONE `BoardUpdate`. A full read
(every unfinished task, each finished column's first page) is taken at start, after a recovery, on
`r`, and when a burst outran the cursor. The pages the columns ask for and a new filter's answer
come in the same read as the changes: one snapshot. The inbox (`Board.inbox`) is read after a
change and every `INBOX_RECHECK_S` (a lease runs out without a commit), posted when it differs.

A locked, vanished or replaced file freezes nothing: the thread posts `BoardHealth` with the time
the board became unreadable and retries every poll, then resynchronises from a full snapshot.
"""

import contextlib
import re
import sqlite3
import threading
import time
from collections.abc import Callable

from textual.message import Message

from boardlib import Board, BoardError
from boardlib.clock import Clock
from boardlib.columns import FINISHED, FinishedKey, PageRequest, TaskSearch, ViewRead
from boardlib.location import BoardLocation, DatabaseUrl
from boardlib.records import BudgetReport, Event, GateRun, InboxItem, LandingRun, Task
from boardlib.stats import Stats
from boardlib.store.base import StoreError

from .gateway import BOARD_UNREADABLE
from .prefetch import RECENT_EVENTS, Prefetch, board_identity, recent_events

BURST_LIMIT = 500  # more events than this since the last poll: re-read everything instead
STATS_MIN_INTERVAL_S = 1.0  # while the board changes, the figures are recomputed at most this often
INBOX_RECHECK_S = 5.0  # time alone puts things in the inbox (a lease runs out): read it this often


class BoardUpdate(Message):
    """One read: the rows that changed (or, when `full`, every unfinished row and each finished
    column's first page), the pages asked for, a new filter's answer."""

    def __init__(
        self,
        read: ViewRead,
        *,
        touched: frozenset[str],
        last_change_ms: int | None,
        events: list[Event] | None = None,
        overridden: frozenset[str] | None = None,
        wont_land: frozenset[str] | None = None,
    ) -> None:
        super().__init__()
        self.read = read
        self.tasks = read.tasks
        self.full = read.full
        self.touched = touched  # every task id an event named, changed row or not (comments...)
        self.last_change_ms = last_change_ms
        # The events read with this update, oldest first (on a full read: the most recent ones,
        # for the activity pane); the same feed as `kanban events --follow`, read once.
        self.events = events or []
        self.overridden = overridden  # on a full read: every task done by a human override
        self.wont_land = wont_land  # ...and every done task decided won't land


class StatsUpdate(Message):
    """The flow figures, recomputed because the board changed (or the screen asked), and the
    board's budget report (`kanban budget show`'s), whose top the screen shows."""

    def __init__(
        self,
        stats: Stats | None,
        *,
        error: str | None = None,
        budgets: BudgetReport | None = None,
    ) -> None:
        super().__init__()
        self.stats = stats
        self.error = error
        self.budgets = budgets


class InboxUpdate(Message):
    """What needs a person now, oldest first (every item, each time it changed), and the tasks
    left out of it while their verification gate judges them (`Inbox.verifying`) or a landing
    of them is under way (`Inbox.landing`)."""

    def __init__(
        self,
        items: list[InboxItem],
        now_ms: int,
        verifying: list[GateRun] | None = None,
        landing: list[LandingRun] | None = None,
    ) -> None:
        super().__init__()
        self.items = items
        self.now_ms = now_ms
        self.verifying = verifying or []
        self.landing = landing or []


class SchemaNewer(Message):
    """The board was written by a newer kanban: readable, but this app must not write to it."""


class BoardHealth(Message):
    """The board became unreadable (`unreadable_since` set) or readable again (None)."""

    def __init__(self, unreadable_since: int | None, reason: str | None = None) -> None:
        super().__init__()
        self.unreadable_since = unreadable_since
        self.reason = reason


class ChangesWaiting(Message):
    """While paused: the board changed and the operator is not seeing it yet."""


class BoardReplaced(OSError):
    """The path now names another file than the one the connection reads."""


def last_change(read: ViewRead) -> int | None:
    """The latest moment any task of a full read changed."""
    tasks: list[Task] = list(read.tasks)
    for page in read.pages:
        tasks += page.tasks
    stamps = [
        stamp
        for task in tasks
        for stamp in (task.updated_at, task.last_heartbeat_at, task.completed_at)
        if stamp is not None
    ]
    return max(stamps) if stamps else None


class BoardReader:
    """Owns the read connection and the poll loop; talks to the app only through `post`."""

    def __init__(
        self,
        path: BoardLocation,
        *,
        poll_ms: int,
        post: Callable[[Message], object],
        clock: Clock,
        prefetch: Prefetch | None = None,
    ) -> None:
        self.path = path
        self._prefetch = prefetch
        self.poll_s = max(poll_ms, 10) / 1000
        self._post = post
        self._clock = clock
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._paused = False
        self._want_full = True
        self._search = TaskSearch()
        self._rematch = False
        self._pages: list[PageRequest] = []
        self._anchors: dict[str, FinishedKey] = {}
        self._thread = threading.Thread(target=self._run, name="kanban-reader", daemon=True)
        # State below is touched by the reader thread only.
        self._board: Board | None = None
        self._identity: tuple[int, int] | None = None
        self._version: int | None = None
        self._cursor = 0
        self._known: dict[str, Task] = {}
        self._unreadable_since: int | None = None
        self._waiting_flagged = False
        self._schema_said = False
        self._stats_window: str | None = None  # the stats screen's window while it is open
        self._stats_due = False
        self._stats_at = 0.0  # monotonic time of the last computation
        self._inbox: list[dict[str, object]] | None = None
        self._inbox_read_at = 0.0

    # -- called from the app's thread -----------------------------------------------------------

    def start(self) -> "BoardReader":
        self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def poke(self, *, full: bool = False) -> None:
        """Poll now instead of at the next tick (after our own write, or `r`)."""
        with self._lock:
            self._want_full = self._want_full or full
        self._wake.set()

    def search(self, search: TaskSearch) -> None:
        """Follow the board through this filter from now on; the next read answers it whole."""
        with self._lock:
            self._search, self._rematch = search, True
        self._wake.set()

    def ask(self, request: PageRequest) -> None:
        """Read this page of a finished column with the next read (at once)."""
        with self._lock:
            self._pages.append(request)
        self._wake.set()

    def set_anchors(self, anchors: dict[str, FinishedKey]) -> None:
        """Where each finished window far down its column starts (see `BoardState.anchors`)."""
        with self._lock:
            self._anchors = dict(anchors)

    def pause(self, paused: bool) -> None:
        with self._lock:
            self._paused = paused
        if not paused:
            self._wake.set()

    @property
    def paused(self) -> bool:
        return self._paused

    def watch_stats(self, window: str | None) -> None:
        """Compute the flow figures of `window` now and after every change (None: stop), on
        this thread's connection: the stats screen is live the way the board is."""
        with self._lock:
            self._stats_window = window
            self._stats_due = window is not None
            self._stats_at = 0.0
        self._wake.set()

    def poke_stats(self) -> None:
        """Recompute the figures now (the window slid past an hour, or `r`)."""
        with self._lock:
            self._stats_due = self._stats_window is not None
            self._stats_at = 0.0
        self._wake.set()

    # -- the reader thread ----------------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._adopt_prefetch()
            while not self._stop.is_set():
                self._poll()
                self._wake.wait(self.poll_s)
                self._wake.clear()
        finally:
            self._close()

    def _poll(self) -> None:
        try:
            board = self._open()
            if self._identity != board_identity(self.path):
                raise BoardReplaced(self.path)
            version = board.change_token()
            with self._lock:
                paused, full = self._paused, self._want_full
                self._want_full = False
                asked = bool(self._pages or self._rematch)
            if paused and not full:
                if version != self._version and not self._waiting_flagged:
                    self._waiting_flagged = True
                    self._post(ChangesWaiting())
                if asked:  # scrolling and filtering still answer; the changes wait
                    self._read_changes(board, changes=False)
                self._maybe_stats(board, changed=False)  # so do the figures asked for
                return
            self._waiting_flagged = False
            changed = full or self._version is None or version != self._version
            if full or self._version is None:
                self._read_full(board)
            elif version != self._version or asked:
                self._read_changes(board)
            self._version = version
            self._maybe_stats(board, changed)
            self._read_inbox(board, changed=changed)
            if self._unreadable_since is not None:
                self._unreadable_since = None
                self._post(BoardHealth(None))
        except BOARD_UNREADABLE as error:
            self._went_unreadable(error)

    def _maybe_stats(self, board: Board, changed: bool) -> None:
        """Post the figures when the stats screen is open and the board changed, or they were
        asked for (`watch_stats`, `poke_stats`: answered while paused too), at most once a
        `STATS_MIN_INTERVAL_S` (a change inside it is picked up at a later poll)."""
        with self._lock:
            window = self._stats_window
            if window is None:
                return
            due = self._stats_due or changed
            if not due:
                return
            if time.monotonic() - self._stats_at < STATS_MIN_INTERVAL_S:
                self._stats_due = True
                return
            self._stats_due = False
            self._stats_at = time.monotonic()
        try:
            figures = board.stats(since=window)
            report = board.budget_report()
        except BoardError as error:
            self._post(StatsUpdate(None, error=error.message))
            return
        self._post(StatsUpdate(figures, budgets=report))

    def _adopt_prefetch(self) -> None:
        """Take over the connection and snapshot read before Textual loaded, and post it as the
        first update; the first poll then catches whatever changed since."""
        first = self._prefetch.take() if self._prefetch is not None else None
        self._prefetch = None
        if first is None:
            return
        self._board, self._identity, self._version = first.board, first.identity, first.version
        self._cursor = first.read.cursor
        self._known = {task.id: task for task in first.read.tasks}
        with self._lock:
            self._want_full = self._search != first.search  # the filter changed meanwhile
        if first.schema_newer:
            self._schema_said = True
            self._post(SchemaNewer())
        self._post(
            BoardUpdate(
                first.read,
                touched=frozenset(),
                last_change_ms=last_change(first.read),
                events=first.events,
                overridden=first.overridden,
                wont_land=first.wont_land,
            )
        )

    def _open(self) -> Board:
        if self._board is None:
            identity = board_identity(self.path)  # raises when the file is not there
            self._board = Board(
                self.path, read_only=True, reconcile_orphans=False, clock=self._clock
            )
            self._identity = identity
            self._version = None
            if not self._schema_said and self._board.schema_is_newer():
                self._schema_said = True
                self._post(SchemaNewer())
        return self._board

    def _close(self) -> None:
        if self._board is not None:
            with contextlib.suppress(sqlite3.Error, StoreError):
                self._board.close()
            self._board = None

    def _went_unreadable(self, error: Exception) -> None:
        self._close()
        with self._lock:
            self._want_full = True  # whatever we missed, the next good read resynchronises
        if self._unreadable_since is None:
            self._unreadable_since = self._clock.now_ms()
            self._post(BoardHealth(self._unreadable_since, _describe(error, self.path)))

    def _take(self) -> tuple[TaskSearch, bool, list[PageRequest], dict[str, FinishedKey]]:
        with self._lock:
            taken = (self._search, self._rematch, self._pages, self._anchors)
            self._rematch, self._pages = False, []
        return taken

    def _read_full(self, board: Board) -> None:
        search, _rematch, _pages, _anchors = self._take()  # a full read answers them all
        read = board.live_view(search)
        self._cursor = read.cursor
        self._known = {task.id: task for task in read.tasks}
        marks = board.marked_task_ids()  # one audit read for both
        self._post(
            BoardUpdate(
                read,
                touched=frozenset(),
                last_change_ms=last_change(read),
                events=recent_events(board, RECENT_EVENTS),
                overridden=marks.overridden,
                wont_land=marks.wont_land,
            )
        )

    def _read_inbox(self, board: Board, *, changed: bool) -> None:
        """Post the inbox when it differs from the last one posted (read after a change, or when
        `INBOX_RECHECK_S` has passed: a lease expiry commits nothing)."""
        import time

        now = time.monotonic()
        if not changed and now - self._inbox_read_at < INBOX_RECHECK_S:
            return
        self._inbox_read_at = now
        inbox = board.inbox()
        shown = [item.to_json() for item in [*inbox.items, *inbox.verifying, *inbox.landing]]
        if shown != self._inbox:
            self._inbox = shown
            self._post(InboxUpdate(inbox.items, inbox.now, inbox.verifying, inbox.landing))

    def _read_changes(self, board: Board, *, changes: bool = True) -> None:
        search, rematch, pages, anchors = self._take()
        read = board.live_view(
            search,
            since=self._cursor,
            rematch=rematch,
            pages=pages,
            anchors=anchors,
            limit=BURST_LIMIT,
            changes=changes,
        )
        if read.overflow:  # the full read answers the filter; the windows start again
            self._read_full(board)
            return
        events = read.events
        if not events and not read.pages and not rematch:
            return  # a commit that changed no task (an event purge): nothing to show
        self._cursor = read.cursor
        kept = [
            (task, seq)
            for task, seq in zip(read.tasks, read.seqs, strict=True)
            if self._known.get(task.id) != task
        ]
        read.tasks, read.seqs = [task for task, _ in kept], [seq for _, seq in kept]
        for task in read.tasks:
            if task.status in FINISHED:
                self._known.pop(task.id, None)  # a year of finished work is not kept here
            else:
                self._known[task.id] = task
        touched = frozenset(event.task_id for event in events if event.task_id is not None)
        self._post(
            BoardUpdate(
                read,
                touched=touched,
                last_change_ms=max(event.created_at for event in events) if events else None,
                events=events,
            )
        )


# libpq's opening of a failed connection: the host and port the header and `db path` show already
_TRIED = re.compile(
    r"(?:connection failed: )?connection to server (?:at \"[^\"]*\"(?: \([^)]*\))?, port \d+|"
    r"on socket \"[^\"]*\") failed: (?:FATAL: )?"
)


def _describe(error: Exception, path: BoardLocation) -> str:
    if isinstance(path, DatabaseUrl):
        text = path.scrub(error.message if isinstance(error, BoardError) else str(error))
        # "database unavailable at URL: connection failed: connection to server at ..., port
        # N failed: Connection refused" is cut after the URL at 80 columns and after the port
        # at 160: the header says why first (the URL is on the header when the board reads).
        text = text.replace(f" at {path.display}: ", ": ", 1)
        return _TRIED.sub("", text, count=1)
    if isinstance(error, FileNotFoundError):
        return f"{path.name} is gone"
    if isinstance(error, BoardReplaced):
        return f"{path.name} was replaced"
    if isinstance(error, BoardError):
        return error.message
    text = str(error) or type(error).__name__
    return "database is locked" if "locked" in text or "busy" in text else text
