"""A fair turn for each write transaction on one board file, across processes.

Why: SQLite's busy handler (`busy_timeout`) sleeps a waiting writer on a 1, 2, 5, 10 ... 100 ms
ladder and gives the lock to whoever asks at the moment it is free. Under many writers that is
nearly always a process that has just committed and comes straight back, so a sleeper can lose
round after round: measured here with 16 claiming processes on 2 cores, p99 claim latency was
130-180 ms, sitting exactly on the ladder's cumulative sleeps. Waiting on a kernel lock instead
wakes the waiters the moment the lock is released, and the process that just committed has its
own work to do before it can ask again: p99 fell to about 40 ms (at the cost of some throughput,
since turns are now handed over rather than grabbed).

How: an exclusive `flock` on a lock file beside the board (`<board>-writers`) is held for the
whole write transaction. The kernel drops it if the holder dies, so a crash never wedges the
board. The wait is bounded by the transaction's wall-clock budget: when the lock is taken, a
helper thread blocks on it (on its own file description) while the caller waits for it with a
timeout; a caller that gives up leaves the helper to release the lock as soon as it gets it.
SQLite's own locking and the contention recipe still apply underneath, so writers that do not
take part (the sqlite3 shell, an older kanban) stay correct, merely unqueued.
"""

import os
import threading
from pathlib import Path

from ..paths import writers_lock_path

try:
    import fcntl
except ImportError:  # pragma: no cover - no flock (Windows): SQLite's locking alone applies
    fcntl = None  # type: ignore[assignment]


class WriterQueue:
    """One per writable store; not shared between threads (the store serialises its writers)."""

    def __init__(self, board_path: Path) -> None:
        self.path = str(writers_lock_path(Path(board_path)))
        self._fd: int | None = None
        self._held: int | None = None
        if fcntl is not None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)

    def acquire(self, timeout_s: float) -> bool:
        """Take the turn within `timeout_s`; False when the time ran out (nothing is held)."""
        if self._fd is None:
            return True
        assert fcntl is not None
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            self._held = self._fd
            return True
        except BlockingIOError:
            pass
        held = _BlockingWait(self.path).wait(max(timeout_s, 0.0))
        self._held = held
        return held is not None

    def release(self) -> None:
        held, self._held = self._held, None
        if held is None or fcntl is None:
            return
        fcntl.flock(held, fcntl.LOCK_UN)
        if held != self._fd:
            os.close(held)

    def close(self) -> None:
        self.release()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class _BlockingWait:
    """A blocking `flock` in a helper thread, so the caller can stop waiting at its deadline."""

    def __init__(self, path: str) -> None:
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        self._got = threading.Event()
        self._guard = threading.Lock()
        self._abandoned = False
        threading.Thread(target=self._wait, name="kanban-writer-turn", daemon=True).start()

    def _wait(self) -> None:
        assert fcntl is not None
        fcntl.flock(self._fd, fcntl.LOCK_EX)  # releases the GIL while it blocks
        with self._guard:
            if self._abandoned:  # the caller gave up: hand the turn straight on
                fcntl.flock(self._fd, fcntl.LOCK_UN)
                os.close(self._fd)
                return
        self._got.set()

    def wait(self, timeout_s: float) -> int | None:
        """The file descriptor now holding the lock, or None when `timeout_s` passed first."""
        if self._got.wait(timeout_s):
            return self._fd
        with self._guard:
            if self._got.is_set():
                return self._fd
            self._abandoned = True
        return None
