"""Time, in epoch milliseconds, from one place that tests can drive.

Leases, event TTLs and the root-create rate window all read `Clock.now_ms()`, so a test advances a
`ManualClock` instead of sleeping. Subprocesses (the CLI under test) get the same control through
`KANBAN_NOW_MS`, honoured only when `KANBAN_TEST_CLOCK=1` is also set so a stray variable in a real
agent's environment cannot freeze its board's time.
"""

import os
import threading
import time
from collections.abc import Mapping
from typing import Protocol

TEST_CLOCK_FLAG = "KANBAN_TEST_CLOCK"
NOW_VARIABLE = "KANBAN_NOW_MS"


class Clock(Protocol):
    def now_ms(self) -> int: ...


class SystemClock:
    """Wall-clock time."""

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000


class ManualClock:
    """A clock that only moves when told to (thread-safe, for tests and the demo's fast-forward)."""

    def __init__(self, start_ms: int = 1_700_000_000_000) -> None:
        self._now = start_ms
        self._lock = threading.Lock()

    def now_ms(self) -> int:
        with self._lock:
            return self._now

    def advance(self, *, ms: int = 0, seconds: float = 0, minutes: float = 0) -> int:
        with self._lock:
            self._now += ms + int(seconds * 1000) + int(minutes * 60_000)
            return self._now

    def set(self, now_ms: int) -> None:
        with self._lock:
            self._now = now_ms


def clock_from_env(environ: Mapping[str, str] | None = None) -> Clock:
    """The clock for this process: a fixed test time when both test variables are set."""
    env = os.environ if environ is None else environ
    if env.get(TEST_CLOCK_FLAG) == "1" and env.get(NOW_VARIABLE):
        return ManualClock(int(env[NOW_VARIABLE]))
    return SystemClock()
