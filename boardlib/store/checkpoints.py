"""Checkpoints off the writing thread, for a process whose writes run where waiting hurts: the
server answers a claim on its event loop (kanban/http/fastpath.py), and SQLite's automatic
checkpoint runs inside the COMMIT that crosses `wal_autocheckpoint` pages, copying ~4 MB into the
board file and waiting for two fsyncs, so every request queued behind that claim waits too.

Here the writer's own automatic checkpoint is raised to a backstop (`BACKSTOP_PAGES`) and a
thread checkpoints every `EVERY_COMMITS` commits on its own connection, in two passes. The first,
PASSIVE, waits for no reader or writer: it copies the bulk of the log and waits for the fsyncs
while the log keeps taking commits. Those commits would keep the log from ever starting over (a
writer starts it from its beginning only when every frame has been copied), so once the log
is `RESTART_AT_FRAMES` long a second pass holds this process's writers back (the store's write
lock: the event loop is not blocked, its claims wait on the lease pool) while it copies the
frames written meanwhile; the next write then starts the log over. The thread
drops the GIL for the copies and the fsyncs (sqlite3 runs each step without it).
"""

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

# A claim writes ~7 pages: 128 claims is about SQLite's default of 1,000 pages between checkpoints.
EVERY_COMMITS = 128
# The second pass holds the writers back only once the log is this long (~8 MB of 4 KB pages,
# about two rounds of claims): the pass waits for two fsyncs, and every claim meanwhile waits
# too, so it runs every few checkpoints rather than after each.
RESTART_AT_FRAMES = 2_000
# The writer checkpoints itself past this many pages (~40 MB of log): a write far larger than a
# claim (an import, a prune) or a checkpoint thread that cannot keep up never grows the log
# without bound.
BACKSTOP_PAGES = 10_000
_JOIN_TIMEOUT_S = 5.0
PASSIVE = "PRAGMA wal_checkpoint(PASSIVE)"


class BackgroundCheckpoints:
    """A PASSIVE checkpoint on a thread of its own after every `EVERY_COMMITS` commits. The
    store calls `committed()` after each write transaction, under its write lock."""

    def __init__(
        self,
        path: Path,
        connect: Callable[[Path], sqlite3.Connection],
        write_lock: threading.Lock,
    ) -> None:
        self._path = path
        self._write_lock = write_lock
        self._connect = connect
        self._commits = 0
        self._wake = threading.Event()
        self._closed = False
        self._thread: threading.Thread | None = None
        # held for a checkpoint, here or the store's own at shutdown (which takes the write lock
        # first, as the second pass here does): one at a time
        self.lock = threading.Lock()
        self.runs = 0  # checkpoints run: what the tests read
        self.held = 0  # of those, how many held the writers back for a second pass

    def committed(self) -> None:
        self._commits += 1
        if self._commits < EVERY_COMMITS or self._closed:
            return
        self._commits = 0
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name="kanban-checkpoints", daemon=True
            )
            self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        conn: sqlite3.Connection | None = None
        try:
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._closed:
                    return
                try:
                    conn = conn or self._connect(self._path)
                    with self.lock:  # the bulk, while the writers go on
                        _, log_frames, _ = conn.execute(PASSIVE).fetchone()
                    if log_frames >= RESTART_AT_FRAMES:
                        # in the order `SqliteStore.checkpoint` takes
                        with self._write_lock, self.lock:
                            conn.execute(PASSIVE).fetchone()
                        self.held += 1
                    self.runs += 1
                except sqlite3.Error:
                    # the file went read-only, or away: the writer's backstop still bounds the
                    # log, and the next wake tries again on a new connection
                    if conn is not None:
                        conn.close()
                    conn = None
        finally:
            if conn is not None:
                conn.close()

    def close(self) -> None:
        """Stop the thread, after the checkpoint it may be running."""
        self._closed = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(_JOIN_TIMEOUT_S)
