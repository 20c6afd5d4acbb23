"""A fair turn for each write transaction on one board file, across processes.

An exclusive `flock` on `<board>-writers` is held for the whole write transaction, within its
wall-clock budget; the kernel drops it if the holder dies. A writer that has waited `PATIENCE_S`
closes a gate (an open-file-description lock on byte 0) so running writers stop barging past it.
Why SQLite's busy handler is not enough, how the wait is bounded off the main thread, and what
the gate cost and bought: docs/architecture.md#writers-take-turns
"""

import os
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ..paths import writers_lock_path

try:
    import fcntl
except ImportError:  # pragma: no cover - no flock (Windows): SQLite's locking alone applies
    fcntl = None  # type: ignore[assignment]

# How long a writer waits among the others for the turn before it closes the gate, and at most
# sits out a closed gate. A writer whose sit ran out (the gate stayed closed: so many writers
# starve that it never opens, a convoy) doubles its own patience, up to PATIENCE_MAX_S; each turn
# that finds the gate open takes a tenth of it back, down to PATIENCE_S.
# See docs/architecture.md#writers-take-turns.
PATIENCE_S = 0.015
PATIENCE_MAX_S = 0.5


class WriterQueue:
    """One per writable store; one caller at a time (the store serialises its own writers)."""

    def __init__(self, board_path: Path) -> None:
        self.path = str(writers_lock_path(Path(board_path)))
        self._fd: int | None = None  # the caller's own description: the uncontended fast path
        self._held: int | None = None
        self._helper: _Helper | None = None
        self._gate: _Gate | None = None
        self._patience_s = PATIENCE_S  # this writer's: see PATIENCE_MAX_S
        if fcntl is not None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            self._gate = _Gate.on(self._fd)

    def acquire(self, timeout_s: float) -> bool:
        """Take the turn within `timeout_s`; False when the time ran out (nothing is held)."""
        if self._fd is None:
            return True
        if self._gate is None or not self._gate.is_closed():
            self._patience_s = max(self._patience_s * 0.9, PATIENCE_S)
            if _try_turn(self._fd):
                self._held = self._fd
                return True
        if _can_use_alarm():
            return self._wait_here(timeout_s)
        if self._helper is None:
            self._helper = _Helper(self.path)
        if self._helper.wait_for_turn(max(timeout_s, 0.0)):
            self._held = self._helper.fd
            return True
        return False

    def try_acquire(self) -> bool:
        """Take the turn only if it is free this instant and the gate is open: never waits,
        never starts the helper thread."""
        if self._fd is None:
            return True
        if self._gate is not None and self._gate.is_closed():
            return False
        if _try_turn(self._fd):
            self._held = self._fd
            return True
        return False

    def _wait_here(self, timeout_s: float) -> bool:
        """Block in this (main) thread, woken by a SIGALRM at the deadline, and before it
        when this writer's patience runs out."""
        import signal

        if timeout_s <= 0:
            return False
        alarm = _Alarm()
        previous = signal.signal(signal.SIGALRM, alarm.ring)
        try:
            got = self._wait_for_turn(alarm, time.monotonic() + timeout_s)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        if got:
            self._held = self._fd
        return got

    def _wait_for_turn(self, alarm: "_Alarm", deadline: float) -> bool:
        """Sit out a closed gate (within patience), wait for the turn among the others (within
        patience), then close the gate and wait on until the deadline."""
        assert fcntl is not None and self._fd is not None
        fd, gate = self._fd, self._gate
        take_turn = lambda: fcntl.flock(fd, fcntl.LOCK_EX)  # noqa: E731
        starving = False
        try:
            if gate is not None:
                if gate.is_closed():
                    alarm.set(min(deadline, time.monotonic() + PATIENCE_S))
                    try:
                        alarm.interrupts(gate.wait_until_open)
                    except _TimeUp:
                        gate.open()  # it may have opened as the alarm landed
                        self._patience_s = min(self._patience_s * 2, PATIENCE_MAX_S)
                alarm.set(min(deadline, time.monotonic() + self._patience_s))
                try:
                    alarm.interrupts(take_turn)
                    return True
                except _TimeUp:
                    if _try_turn(fd):  # the alarm landed as the turn was taken
                        return True
                starving = True
                alarm.set(deadline)
                alarm.interrupts(gate.close)
            else:
                alarm.set(deadline)
            alarm.interrupts(take_turn)
            return True
        except _TimeUp:
            # The deadline can land just after a lock call succeeded (a Python handler runs
            # between bytecodes): give back whatever we may hold (a no-op when we hold nothing),
            # since the caller is told the time ran out.
            fcntl.flock(fd, fcntl.LOCK_UN)
            return False
        finally:
            if starving:
                assert gate is not None
                gate.open()

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


def _try_turn(fd: int) -> bool:
    """The turn if it is free now (or already this description's)."""
    assert fcntl is not None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


class _TimeUp(Exception):
    pass


class _Alarm:
    """A SIGALRM that ends only the lock waits run through `interrupts`. Landing anywhere else
    (just after a wait returned, say) it is noted and ends the next wait at once, so it never
    escapes into the caller's code: a patience alarm that escaped after the turn was taken had the
    caller give the turn back and report the time as up, 1.5 s early (2 failed claims a run). Once
    due it rings again every `_RING_AGAIN_S` until replaced or cancelled: a signal that lands in
    the instant before a wait's system call starts to block runs no Python handler and is lost,
    and without a second one the wait would last until the lock came free (a test of this module
    once hung so, a deadline landing microseconds after it was set). A replaced alarm's late
    signal is ignored by its time."""

    def __init__(self) -> None:
        self.rung = False
        self._moment = 0.0
        self._waiting = False

    def set(self, moment: float) -> None:
        """Ring at `moment` (monotonic), or now if it has passed; replaces any earlier one."""
        import signal

        self._moment = moment
        self.rung = False
        left = moment - time.monotonic()
        if left <= 0:
            self.rung = True
            signal.setitimer(signal.ITIMER_REAL, 0)
        else:
            signal.setitimer(signal.ITIMER_REAL, left, _RING_AGAIN_S)

    def ring(self, _signum: int, _frame: object) -> None:
        if time.monotonic() < self._moment - _RING_AGAIN_S:
            return  # an earlier alarm's late signal
        self.rung = True
        if self._waiting:
            raise _TimeUp

    def interrupts(self, wait: Callable[[], object]) -> None:
        """Run the blocking `wait`, ended by `_TimeUp` if the alarm rings first (or has rung)."""
        self._waiting = True
        try:
            if self.rung:
                raise _TimeUp
            wait()
        finally:
            self._waiting = False


_RING_AGAIN_S = 0.005


class _Gate:
    """The starving writers' gate (docs/architecture.md#writers-take-turns): byte 0 of the
    writers' lock file, locked shared by each starving writer until it has the turn."""

    def __init__(self, fd: int, calls: tuple[int, int, int]) -> None:
        self.fd = fd
        self._set, self._set_wait, self._get = calls

    @classmethod
    def on(cls, fd: int) -> "_Gate | None":
        """The gate of `fd`'s file, or None where the kernel lacks these locks."""
        calls: list[int] = []
        for name in ("F_OFD_SETLK", "F_OFD_SETLKW", "F_OFD_GETLK"):
            call = getattr(fcntl, name, None)
            if not isinstance(call, int):
                return None
            calls.append(call)
        gate = cls(fd, (calls[0], calls[1], calls[2]))
        try:
            gate.open()  # a no-op, which fails where the kernel lacks them
        except OSError:
            return None
        return gate

    def is_closed(self) -> bool:
        """Whether another writer is starving: one system call, on every turn."""
        assert fcntl is not None
        found = fcntl.fcntl(self.fd, self._get, _ANY_LOCK_ON_BYTE_ZERO)
        kind: int = struct.unpack(_FLOCK, found)[0]
        return kind != fcntl.F_UNLCK

    def close(self) -> None:
        assert fcntl is not None
        fcntl.fcntl(self.fd, self._set_wait, _byte_zero(fcntl.F_RDLCK))

    def wait_until_open(self) -> None:
        """An exclusive lock waits for every starving writer's shared one; it is dropped at once."""
        assert fcntl is not None
        fcntl.fcntl(self.fd, self._set_wait, _byte_zero(fcntl.F_WRLCK))
        self.open()

    def open(self) -> None:
        """Drop whatever this description holds on the gate (a no-op when nothing)."""
        assert fcntl is not None
        fcntl.fcntl(self.fd, self._set, _byte_zero(fcntl.F_UNLCK))


_FLOCK = "hhqqi4x"  # struct flock: type, whence, start, len, pid (0 for these locks), padding


def _byte_zero(kind: int) -> bytes:
    return struct.pack(_FLOCK, kind, os.SEEK_SET, 0, 1, 0)


# Asking for an exclusive lock finds any lock another description holds.
_ANY_LOCK_ON_BYTE_ZERO = _byte_zero(fcntl.F_WRLCK) if fcntl is not None else b""


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
