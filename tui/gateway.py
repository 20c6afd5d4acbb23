"""The app's one door to the board for everything but the live feed: on-demand reads (the drawer,
the dependency picker) and every write. Read-only mode is enforced here, in the data layer, not per
view: a read-only gateway has no writable `Board` at all, and asking it to write is a `read_only`
refusal like any other.

Writes are serialised by a lock so that a read-modify-write (bump priority twice quickly) sees the
result of the one before it. They run in worker threads; this object never touches the UI.
"""

import sqlite3
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from boardlib import Board, BoardConfig, BoardError, Reason
from boardlib import transitions as t
from boardlib.clock import Clock
from boardlib.location import BoardLocation, location_exists
from boardlib.records import Task
from boardlib.store.base import StoreError
from boardlib.store.board_file import may_write

from .prefetch import FileIdentity, board_identity

if TYPE_CHECKING:
    from boardlib.worktrees import WorktreeJanitor

T = TypeVar("T")

BOARD_UNREADABLE: tuple[type[Exception], ...] = (BoardError, StoreError, sqlite3.Error, OSError)
"""What a read raises when the board itself cannot be read (gone, locked past its wait, a
server down, a file this user may not open). A reader that polls says so and tries again; any
other exception is a defect, for `KanbanApp.report_defect`."""


NEWER_SCHEMA = (
    "this board was written by a newer kanban: it is open read-only; upgrade to change it"
)
NOT_WRITABLE = (
    "this user may not write the board file or its folder: it is open read-only; ask its owner "
    "for write access to change it"
)


@contextmanager
def server_lost_as_refusal() -> Iterator[None]:
    """A database server that cannot be reached (down, restarting, refusing connections) is a
    `database_unavailable` refusal, as the CLI answers it: every caller of the gateway handles a
    refusal (a notification, the drawer's title), while a raw `StoreError` escaped them as a
    defect, or ended the app from the drawer's read."""
    try:
        yield
    except StoreError as error:
        raise error.refusal() from error


class ChangedMeanwhile(Exception):
    """The task is not what the operator decided on any more: another process moved it, took it
    or dropped it between the screen and the write. Nothing is written; the operator is told what
    it is now, so they can look again and choose."""

    def __init__(self, seen: Task, now: Task, fields: tuple[str, ...] = ()) -> None:
        super().__init__(seen.id)
        self.seen = seen
        self.now = now
        self.fields = fields

    def describe(self) -> str:
        seen, now = self.seen, self.now
        parts = []
        if now.status != seen.status:
            parts.append(f"it is {t.label(now.status)} now (you saw {t.label(seen.status)})")
        if now.assignee_agent_id != seen.assignee_agent_id:
            holder = now.assignee_agent_id
            parts.append(f"held by {holder}" if holder else "no longer held by anyone")
        if now.dropped != seen.dropped:
            parts.append("dropped" if now.dropped else "restored")
        edited = [name for name in self.fields if getattr(now, name) != getattr(seen, name)]
        if edited:  # named, not quoted: the new value is agent text, and on the card already
            parts.append(f"its {' and '.join(edited)} changed since you opened it")
        what = ", ".join(parts) or "it changed"
        return f"{seen.id} changed while you decided: {what}. Nothing was written."


class OwnWrites:
    """The spans of the event log this app's own writes ran in. Another TUI, or the CLI, acting
    as the same operator writes under the same actor name: an event by the operator is this
    app's own only when it falls in one of these spans (and the live feed reads an event only
    after its write began, so the span is there before the event is). A write on one task also
    keeps when it ran by the board's clock: a refused landing writes no event of the operator's,
    only its refusal, stamped with that clock (`wrote_on`)."""

    KEPT = 256  # the newest spans: the live feed reads an event within a poll of its write

    @dataclass(slots=True)
    class Span:
        after: int  # the newest event when the write began
        through: int | None = None  # the newest when it ended; None while it runs
        task_id: str | None = None  # the task the write decided on, when it named one
        began_ms: int = 0  # the board's clock when it began, and when it ended (None: running)
        ended_ms: int | None = None

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._spans: deque[OwnWrites.Span] = deque(maxlen=self.KEPT)

    def begin(
        self, last_seq: int, *, task_id: str | None = None, now_ms: int = 0
    ) -> "OwnWrites.Span":
        """A write starts after the event `last_seq`; its end is open until `end`."""
        span = self.Span(last_seq, task_id=task_id, began_ms=now_ms)
        with self._lock:
            self._spans.append(span)
        return span

    def end(self, span: "OwnWrites.Span", last_seq: int, *, now_ms: int = 0) -> None:
        with self._lock:
            span.through, span.ended_ms = last_seq, now_ms

    def wrote_on(self, task_id: str, at_ms: int) -> bool:
        """Whether a write of this app on `task_id` was running at `at_ms` (the board's clock)."""
        with self._lock:
            return any(
                span.task_id == task_id
                and span.began_ms <= at_ms
                and (span.ended_ms is None or at_ms <= span.ended_ms)
                for span in self._spans
            )

    def made(self, seq: int) -> bool:
        with self._lock:
            return any(
                span.after < seq and (span.through is None or seq <= span.through)
                for span in self._spans
            )


def changed_meanwhile(seen: Task, now: Task, fields: tuple[str, ...] = ()) -> bool:
    """Whether a move decided on `seen` would act on something else in `now`; with `fields`
    (an edit's), also whether any of them changed: saving would overwrite someone's change."""
    moved = (seen.status, seen.assignee_agent_id, seen.dropped) != (
        now.status,
        now.assignee_agent_id,
        now.dropped,
    )
    return moved or any(getattr(now, name) != getattr(seen, name) for name in fields)


class BoardGateway:
    def __init__(
        self, path: BoardLocation, *, read_only: bool, clock: Clock, operator: str
    ) -> None:
        self.path = path
        self.read_only = read_only
        self.clock = clock
        self.operator = operator
        self._open_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._writer: Board | None = None
        self._reader: Board | None = None
        self._opened_on: dict[str, FileIdentity] = {}  # "writer"/"reader": the file it opened
        self._janitor: WorktreeJanitor | None = None
        self._keeps_recovery = False  # open() started the reconciler and the worktree gc
        self.read_only_because = "the board is open read-only (--read-only)"
        self._own_writes = OwnWrites()

    def open(self) -> None:
        """Create or migrate the board (writable mode) so the reader finds it. Runs the orphan
        pass, like any process that opens a board for writing, then keeps recovery going while
        the app lives: expired leases are released on an interval (an abandoned card does not sit
        red until some agent happens to claim), and worktrees are garbage-collected now and on an
        interval."""
        if not self.awaits_open:
            return
        with server_lost_as_refusal():
            self._open_writable()

    @property
    def awaits_open(self) -> bool:
        """Whether `open` has yet to get through (a server down, a file that could not be read):
        recovery has not started, so the app opens again once the board reads, or an expired
        lease would sit red, and no worktree be collected, for as long as the app runs."""
        return not self.read_only and not self._keeps_recovery

    def _open_writable(self) -> None:
        if location_exists(self.path):
            with Board(
                self.path, read_only=True, reconcile_orphans=False, clock=self.clock
            ) as probe:
                newer = probe.schema_is_newer()
            if newer:
                self.refuse_writes(NEWER_SCHEMA)
                return
            # a file's modes say; a database server answers for itself, on the first write
            if isinstance(self.path, Path) and not may_write(self.path):
                self.refuse_writes(NOT_WRITABLE)
                return
        board = self._writable()
        with self._open_lock:
            self._keeps_recovery = True
            self._start_recovery(board)

    def _start_recovery(self, board: Board) -> None:
        if self._janitor is None:
            from boardlib.worktrees import start_worktree_gc

            board.start_stale_task_reconciler()
            self._janitor = start_worktree_gc(board)

    def refuse_writes(self, because: str) -> None:
        """From now on every write is a `read_only` refusal that says `because`."""
        with self._open_lock:
            self.read_only = True
            self.read_only_because = because
            if self._janitor is not None:
                self._janitor.stop()
                self._janitor = None
            if self._writer is not None:
                self._writer.close()
                self._writer = None

    def _file_now(self) -> FileIdentity:
        """Which file the board's path names now. A connection keeps the file it opened, so a
        board deleted or replaced under the app would take its writes into a file nobody reads
        any more: a gone board is refused (`no_board`, nothing written), a replaced one is
        opened afresh, as the live view has already done."""
        try:
            return board_identity(self.path)
        except FileNotFoundError:
            raise BoardError(
                Reason.NO_BOARD,
                f"the board file {self.path} is gone (deleted or moved away): nothing was "
                "written; put it back, or open another board",
            ) from None

    def _writable(self) -> Board:
        if self.read_only:
            raise BoardError(Reason.READ_ONLY, self.read_only_because)
        with self._open_lock:
            file = self._file_now() if self._writer is not None else None
            if self._writer is not None and file != self._opened_on.get("writer"):
                if self._janitor is not None:
                    self._janitor.stop()
                    self._janitor = None
                self._writer.close()  # and its reconciler: they worked on the file that went
                self._writer = None
            if self._writer is None:
                # writes come from worker threads and the reconciler: a Postgres board pools
                self._writer = Board(
                    self.path, clock=self.clock, config=BoardConfig.from_env(), pool_size=4
                )
                self._opened_on["writer"] = self._file_now()
                if self._keeps_recovery:
                    self._start_recovery(self._writer)
            return self._writer

    def read(self, work: Callable[[Board], T]) -> T:
        """An on-demand read on a query-only connection (never the live feed's)."""
        with server_lost_as_refusal():
            if not self.read_only:
                return work(self._writable())
            with self._open_lock:
                file = self._file_now()
                if self._reader is not None and file != self._opened_on.get("reader"):
                    self._reader.close()
                    self._reader = None
                if self._reader is None:
                    self._reader = Board(self.path, read_only=True, clock=self.clock)
                    self._opened_on["reader"] = file
                board = self._reader
            return work(board)

    def made_here(self, seq: int) -> bool:
        """Whether the event `seq` is one of this app's own writes (see `OwnWrites`)."""
        return self._own_writes.made(seq)

    def wrote_on(self, task_id: str, at_ms: int) -> bool:
        """Whether this app wrote on `task_id` at `at_ms`: a landing refused then was its own."""
        return self._own_writes.wrote_on(task_id, at_ms)

    def write(
        self,
        work: Callable[[Board], T],
        *,
        expect: Task | None = None,
        fields: tuple[str, ...] = (),
        serial: bool = True,
    ) -> T:
        """Run one write. With `expect`, first check (under the write lock) that the task is
        still what the operator saw (and `fields`, an edit's, still as they were); otherwise
        raise `ChangedMeanwhile` and write nothing.
        `serial=False` runs the work itself outside the lock: a landing takes minutes (its
        branch's queue, its verify command) and keeps its own order, and a priority bump must
        not wait behind it."""
        with server_lost_as_refusal():
            board = self._writable()
            # Two reads of the newest event, one each side, and neither can go: the write's
            # events are numbered only as it commits (the library hands back no seq), and
            # another process acting as this operator may write just before it or just after
            # it; the span between the two reads is what tells this app's events from theirs.
            span = self._own_writes.begin(
                board.last_event_seq(),
                task_id=None if expect is None else expect.id,
                now_ms=self.clock.now_ms(),
            )
            try:
                with self._write_lock:
                    if expect is not None:
                        now = board.get_task(expect.id)
                        if changed_meanwhile(expect, now, fields):
                            raise ChangedMeanwhile(expect, now, fields)
                    if serial:
                        return work(board)
                return work(board)
            finally:
                try:
                    last_seq = board.last_event_seq()
                except BOARD_UNREADABLE:  # the write's own error says why; it made no event here
                    last_seq = span.after
                self._own_writes.end(span, last_seq, now_ms=self.clock.now_ms())

    def close(self) -> None:
        with self._open_lock:
            if self._janitor is not None:
                self._janitor.stop()
                self._janitor = None
            for board in (self._writer, self._reader):
                if board is not None:
                    board.close()
            self._writer = self._reader = None
