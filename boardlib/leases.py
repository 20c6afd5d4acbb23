"""Lease liveness, declared once: the Python check and the SQL predicate say the same thing.

A lease is live through its last millisecond: it has expired only once `now` is strictly past
`lease_until`. The store's release of expired leases uses `EXPIRED_SQL`; the board's holder
check and the TUI's card use `lease_expired`, so at the boundary millisecond every surface agrees
that the worker still holds the task (a test pins it). A renewal writes `renewal`'s columns,
whether a heartbeat asked for it or a seed 003 call of the holder carries it (`Board._beat`).
`beating` renews from a thread while a long step runs. Imports nothing of the project, like
`transitions`.
"""

import contextlib
import threading
from collections.abc import Callable, Iterator


def expired_sql(now: str = "?") -> str:
    """The SQL twin of `lease_expired`, with the current time bound as the parameter `now` (`?`
    or a named one such as `:now`)."""
    return f"lease_until < {now}"


EXPIRED_SQL = expired_sql()


def lease_expired(lease_until: int | None, now: int) -> bool:
    """Whether a lease ending at `lease_until` has run out at `now` (no lease: never expires)."""
    return lease_until is not None and lease_until < now


def renewal(now: int, lease_ms: int) -> dict[str, int]:
    """The columns a renewal writes: the lease runs `lease_ms` from `now`, the beat is `now`
    (`updated_at` is left alone: a beat never reorders a list)."""
    return {"lease_until": now + lease_ms, "last_heartbeat_at": now}


@contextlib.contextmanager
def beating(every_s: float, beat: Callable[[], bool], name: str) -> Iterator[None]:
    """Call `beat` from a thread named `name` every `every_s` seconds while the block runs, until
    it says False (nothing is left to keep alive): a holder's heartbeat during a long git step,
    a running gate's. `beat` handles its own errors; the block's end stops it and waits for it."""
    done = threading.Event()

    def run() -> None:
        while not done.wait(every_s):
            if not beat():
                return

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
