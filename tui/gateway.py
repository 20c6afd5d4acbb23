"""The app's one door to the board for everything but the live feed: on-demand reads (the drawer,
the dependency picker) and every write. Read-only mode is enforced here, in the data layer, not per
view: a read-only gateway has no writable `Board` at all, and asking it to write is a `read_only`
refusal like any other.

Writes are serialised by a lock so that a read-modify-write (bump priority twice quickly) sees the
result of the one before it. They run in worker threads; this object never touches the UI.
"""

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from boardlib import Board, BoardConfig, BoardError, Reason
from boardlib.clock import Clock
from boardlib.location import BoardLocation

if TYPE_CHECKING:
    from boardlib.worktrees import WorktreeJanitor

T = TypeVar("T")


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
        self._janitor: WorktreeJanitor | None = None

    def open(self) -> None:
        """Create or migrate the board (writable mode) so the reader finds it. Runs the orphan
        pass, like any process that opens a board for writing, then keeps recovery going while
        the app lives: expired leases are released on an interval (an abandoned card does not sit
        red until some agent happens to claim), and worktrees are garbage-collected now and on an
        interval."""
        if self.read_only:
            return
        board = self._writable()
        with self._open_lock:
            if self._janitor is None:
                from boardlib.worktrees import start_worktree_gc

                board.start_sweeper()
                self._janitor = start_worktree_gc(board)

    def _writable(self) -> Board:
        if self.read_only:
            raise BoardError(Reason.READ_ONLY, "the board is open read-only (--read-only)")
        with self._open_lock:
            if self._writer is None:
                # writes come from worker threads and the sweeper: a Postgres board pools
                self._writer = Board(
                    self.path, clock=self.clock, config=BoardConfig.from_env(), pool_size=4
                )
            return self._writer

    def read(self, work: Callable[[Board], T]) -> T:
        """An on-demand read on a query-only connection (never the live feed's)."""
        if not self.read_only:
            return work(self._writable())
        with self._open_lock:
            if self._reader is None:
                self._reader = Board(self.path, read_only=True, clock=self.clock)
            board = self._reader
        return work(board)

    def write(self, work: Callable[[Board], T]) -> T:
        board = self._writable()
        with self._write_lock:
            return work(board)

    def close(self) -> None:
        with self._open_lock:
            if self._janitor is not None:
                self._janitor.stop()
                self._janitor = None
            for board in (self._writer, self._reader):
                if board is not None:
                    board.close()
            self._writer = self._reader = None
