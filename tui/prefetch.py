"""The board's first snapshot, read before Textual is imported.

A full read of a large board must not run in a thread beside Textual's start-up: the sqlite3
module releases the GIL around every row it steps, so a 10,000-row read competing with the import
and the first renders convoys on the GIL (measured: 1.2 s instead of 0.15 s, and the cards
appeared 0.6 s after the first paint). Reading first, in the main thread, then importing Textual,
puts cards on the very first frames. The reader thread adopts the connection and posts the
snapshot as its first update. This module must not import Textual: that is the point of it.
"""

import os
from dataclasses import dataclass

from boardlib import Board
from boardlib.clock import Clock
from boardlib.columns import TaskSearch, ViewRead
from boardlib.location import BoardLocation, DatabaseUrl, absolute_location
from boardlib.records import Event

RECENT_EVENTS = 200  # what a full read hands the activity pane

# The cyclic garbage collector waits until the first frame is on screen (or this long at most):
# start-up allocates a few hundred thousand objects and frees almost none, and the passes over
# them cost 0.19-0.21 s of CPU before the first frame (of 0.85-1.2 s, 10,000-100,000 tasks).
GC_PAUSE_MAX_S = 5.0


FileIdentity = tuple[int, int] | None  # (device, inode) of a board file; None for a database


def board_identity(path: BoardLocation) -> FileIdentity:
    """Which file the path names right now: a deleted or replaced board is not the one we read.
    A database board has no file to replace (None): its store reports a lost server itself."""
    if isinstance(path, DatabaseUrl):
        return None
    stat = os.stat(path)
    return stat.st_dev, stat.st_ino


def recent_events(board: Board, count: int) -> list[Event]:
    """The newest `count` events, oldest first (the order the live feed delivers them)."""
    return board.recent_events(limit=count)[::-1]


@dataclass
class FirstRead:
    """A read-only connection and what it saw: the reader thread takes all of it over."""

    board: Board
    identity: tuple[int, int] | None
    version: int
    read: ViewRead
    search: TaskSearch  # what the read was filtered by (none: the app starts unfiltered)
    events: list[Event]
    overridden: frozenset[str]
    schema_newer: bool
    wont_land: frozenset[str] = frozenset()


class Prefetch:
    """The first read, done at construction; the reader thread `take`s it once."""

    def __init__(self, path: BoardLocation, clock: Clock) -> None:
        self.path = absolute_location(path)
        self._result = self._read(clock)

    def _read(self, clock: Clock) -> FirstRead | None:
        try:
            identity = board_identity(self.path)
            board = Board(self.path, read_only=True, reconcile_orphans=False, clock=clock)
        except Exception:  # a missing or unreadable board: the reader reports it itself
            return None
        try:
            version = board.change_token()
            search = TaskSearch()
            read = board.live_view(search)
            events = recent_events(board, RECENT_EVENTS)
            overridden, wont_land = board.marked_task_ids()
            newer = board.schema_is_newer()
        except Exception:
            board.close()
            return None
        return FirstRead(
            board, identity, version, read, search, events, overridden, newer, wont_land
        )

    def take(self) -> FirstRead | None:
        """The prefetched read (once), or None when there is none to adopt."""
        result, self._result = self._result, None
        return result
