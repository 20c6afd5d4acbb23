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
        raw = env[NOW_VARIABLE].strip()
        if not (raw.isascii() and raw.isdigit() and len(raw) <= 15):
            from .errors import invalid_input

            raise invalid_input(
                f"{NOW_VARIABLE} must be epoch milliseconds (digits), not {raw!r}",
                variable=NOW_VARIABLE,
            )
        return ManualClock(int(raw))
    return SystemClock()


def span(ms: int) -> str:
    """A duration for people: `45 s`, `14 min`, `2 h 5 min`, `3 days`."""
    seconds = abs(ms) // 1000
    if seconds < 60:
        return f"{seconds} s"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    return f"{hours // 24} days"


def local_time(at_ms: int) -> str:
    """An instant as local ISO date and time with its offset, for text that is kept (a run's
    tombstone) and so cannot say "in 14 min"."""
    from datetime import datetime

    try:
        return datetime.fromtimestamp(at_ms / 1000).astimezone().isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError):
        return f"{at_ms} ms since the epoch"


def moment(at_ms: int, now_ms: int) -> str:
    """An instant for a sentence meant for people: local time plus how far it is from now,
    `10:34:12, in 14 min` (`2027-01-05 10:34:12, 3 days ago` on another day). JSON fields keep
    the epoch milliseconds; this is only for the words around them."""
    from datetime import datetime

    try:
        at = datetime.fromtimestamp(at_ms / 1000).astimezone()
        today = datetime.fromtimestamp(now_ms / 1000).astimezone().date()
    except (OverflowError, OSError, ValueError):
        return f"{at_ms} ms since the epoch"
    shown = at.strftime("%H:%M:%S" if at.date() == today else "%Y-%m-%d %H:%M:%S")
    distance = at_ms - now_ms
    if abs(distance) < 1000:
        relative = "now"
    elif distance > 0:
        relative = f"in {span(distance)}"
    else:
        relative = f"{span(distance)} ago"
    return f"{shown}, {relative}"
