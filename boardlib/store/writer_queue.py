"""A fair turn for each write transaction on one board file, across processes.

Why: SQLite's busy handler (`busy_timeout`) sleeps a waiting writer on a 1, 2, 5, 10 ... 100 ms
ladder and gives the lock to whoever asks at the moment it is free. Under many writers that is
nearly always a process that has just committed and comes straight back, so a sleeper can lose
round after round: measured here with 16 claiming processes on 2 cores, p99 claim latency was
130-180 ms, sitting exactly on the ladder's cumulative sleeps. Waiting on a kernel lock instead
wakes the waiters the moment the lock is released, and the process that just committed has its
own work to do before it can ask again, so turns go round (at some cost in throughput: a turn is
handed over rather than grabbed).

How: an exclusive `flock` on a lock file beside the board (`<board>-writers`) is held for the
whole write transaction. The kernel drops it if the holder dies, so a crash never wedges the
board. The wait is bounded by the transaction's wall-clock budget. In the main thread (an agent's
CLI call, a worker process) the caller blocks in `flock` itself and a one-shot SIGALRM ends the
wait at the deadline; that is used only while nobody else has claimed SIGALRM, and the previous
handler is put back. Elsewhere (the TUI's workers) this queue's helper thread blocks on the lock
on its own file description while the caller waits for the hand-over with a timeout; if the
caller gives up, the helper passes the lock on the moment it gets it. The helper costs two thread
wake-ups per turn, which measurably lowered claim throughput, hence the main-thread path.
SQLite's own locking and the contention recipe still apply underneath, so writers that do not
take part (the sqlite3 shell, an older kanban) stay correct, merely unqueued.

Why not first come, first served: the kernel wakes a waiter when the lock is released but does not
hand it over, so a process that is running (the one that just committed, say) takes it before the
woken waiter gets a core. In a tight claim loop (16 processes, 2 cores; benchmarks/claim_tail.py)
~3 running processes take ~95% of the turns while the rest sleep, and a slow claim is woken ~11
times and loses each time: p99 38-45 ms on a quiet machine, 80-100 ms on a loaded one. Handing the
turn to a waiter instead costs a wake-up and a cold-cache turn (held 0.26 ms, not 0.09) every
time, measured in the same runs: a strict FIFO ticket queue (byte-range locks) brought p99 to
25-46 ms but cut claims/s by a half to two thirds (p50 6-13 ms, a convoy that never drains);
reserving the next turn for a writer that waited over 20 ms, p99 -55% at -30% claims/s (over 5-10
ms: -50%); yielding the core after a contended release, -60%. Agents that pause between claims
do not starve (p99 13-24 ms with 0-10 ms pauses), so throughput keeps the barging.
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
    """One per writable store; one caller at a time (the store serialises its own writers)."""

    def __init__(self, board_path: Path) -> None:
        self.path = str(writers_lock_path(Path(board_path)))
        self._fd: int | None = None  # the caller's own description: the uncontended fast path
        self._held: int | None = None
        self._helper: _Helper | None = None
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
        if _can_use_alarm():
            return self._wait_here(timeout_s)
        if self._helper is None:
            self._helper = _Helper(self.path)
        if self._helper.wait_for_turn(max(timeout_s, 0.0)):
            self._held = self._helper.fd
            return True
        return False

    def _wait_here(self, timeout_s: float) -> bool:
        """Block in this (main) thread, woken at the deadline by a one-shot SIGALRM."""
        import signal

        assert fcntl is not None and self._fd is not None
        if timeout_s <= 0:
            return False
        previous = signal.signal(signal.SIGALRM, _time_up)
        try:
            try:
                signal.setitimer(signal.ITIMER_REAL, timeout_s)
                fcntl.flock(self._fd, fcntl.LOCK_EX)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except _TimeUp:
            # The alarm can land just after flock took the lock, before the timer is cleared (a
            # Python handler runs between bytecodes): give back whatever we may hold (a no-op
            # when we hold nothing), since the caller is told the time ran out.
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            return False
        finally:
            signal.signal(signal.SIGALRM, previous)
        self._held = self._fd
        return True

    def release(self) -> None:
        held, self._held = self._held, None
        if held is None or fcntl is None:
            return
        if self._helper is not None and held == self._helper.fd:
            self._helper.hand_back()
        else:
            fcntl.flock(held, fcntl.LOCK_UN)

    def close(self) -> None:
        self.release()
        if self._helper is not None:
            self._helper.stop()
            self._helper = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class _TimeUp(Exception):
    pass


def _time_up(_signum: int, _frame: object) -> None:
    raise _TimeUp


def _can_use_alarm() -> bool:
    """Only in the main thread, and only when nobody else uses SIGALRM. (`signal` is imported
    here, on the first contended turn: an uncontended CLI call never needs it.)"""
    import signal

    return (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGALRM) is signal.SIG_DFL
        and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    )


class _Helper:
    """A daemon thread that blocks in `flock` on the caller's behalf, so the caller can stop
    waiting at its deadline. Each wait is numbered; the lock is handed over only to the wait that
    is still open when the helper gets it, otherwise passed straight on."""

    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        self._cond = threading.Condition()
        self._issued = 0
        self._waiting: int | None = None  # the open wait, if any
        self._granted: int | None = None  # the wait that holds the lock, if any
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="kanban-writer-turn", daemon=True)
        self._thread.start()

    def wait_for_turn(self, timeout_s: float) -> bool:
        with self._cond:
            self._issued += 1
            ticket = self._waiting = self._issued
            self._cond.notify_all()
            got = self._cond.wait_for(lambda: self._granted == ticket, timeout_s)
            self._waiting = None  # answered, or withdrawn: either way no longer open
            return got

    def hand_back(self) -> None:
        assert fcntl is not None
        with self._cond:
            self._granted = None
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            self._cond.notify_all()

    def stop(self) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify_all()

    def _run(self) -> None:
        assert fcntl is not None
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._closing or self._waiting is not None)
                if self._closing:
                    os.close(self.fd)
                    return
            fcntl.flock(self.fd, fcntl.LOCK_EX)  # blocks with the GIL released
            with self._cond:
                if self._closing or self._waiting is None:
                    fcntl.flock(self.fd, fcntl.LOCK_UN)  # its caller gave up: pass the turn on
                    continue
                self._granted = self._waiting
                self._cond.notify_all()
                self._cond.wait_for(lambda: self._granted is None or self._closing)
