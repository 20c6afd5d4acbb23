"""The contention recipe of seed 000: pragmas at every connection, `BEGIN IMMEDIATE` write
transactions, and a jittered retry of the whole transaction on transient lock errors only.

Everything that opens a connection calls `connect`; everything that writes goes through
`run_transaction`. A 0-row result (a lost claim race) is the caller's data and is never retried
here: only SQLITE_BUSY, SQLITE_BUSY_SNAPSHOT and SQLITE_LOCKED are.
"""

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ..config import BoardConfig
from ..errors import BoardError, Reason
from .writer_queue import WriterQueue

T = TypeVar("T")

# Applied to every connection, in this order. journal_mode is persistent in the file; the rest are
# per connection.
#
# wal_autocheckpoint is SQLite's default of 1000 pages, not seed 000's 50. A checkpoint runs inside
# the committing writer's turn (it follows the COMMIT, before the writer queue is released) and
# costs the same fixed work and fsyncs whatever it copies, so its frequency decides the claim rate:
# a claim writes ~7 pages, so 50 pages checkpointed every ~7 claims. Measured on a 2-core machine,
# 100,000-task board: 1 process 158 -> 89 us CPU per claim (COMMIT 145 -> 60 us); 16 processes
# 282 -> 125 us CPU per claim, 4.0 -> 0.6 context switches per claim, the writer turn held 718 ->
# 226 us. 2000 pages gained nothing more. The WAL stays bounded (~4 MB before it is reused), and
# with synchronous=NORMAL a power loss (not a crash of the process) can lose at most the commits
# since the last checkpoint, as before, only more of them.
BUSY_TIMEOUT_MS = 250
PRAGMAS: tuple[tuple[str, str], ...] = (
    ("journal_mode", "WAL"),
    ("busy_timeout", str(BUSY_TIMEOUT_MS)),
    ("wal_autocheckpoint", "1000"),
    ("synchronous", "NORMAL"),
    ("foreign_keys", "ON"),
)

_SQLITE_BUSY = 5
_SQLITE_LOCKED = 6


def is_transient_lock_error(error: BaseException) -> bool:
    """BUSY, BUSY_SNAPSHOT (517 = BUSY | 2<<8), LOCKED and their extended forms: another writer has
    the lock right now, so re-running the whole transaction later can succeed."""
    if not isinstance(error, sqlite3.OperationalError):
        return False
    code = getattr(error, "sqlite_errorcode", None)
    if code is None:
        return "locked" in str(error) or "busy" in str(error)
    return code & 0xFF in (_SQLITE_BUSY, _SQLITE_LOCKED)


def connect(path: str | Path, *, query_only: bool = False, uri: bool = False) -> sqlite3.Connection:
    """A connection with the recipe applied. `isolation_level=None` stops the sqlite3 module from
    opening implicit deferred transactions: we issue `BEGIN IMMEDIATE` ourselves. `uri=True` takes
    `path` as a `file:` URI (the read-only fallbacks of `board_file.read_only_uri`)."""
    conn = sqlite3.connect(
        str(path), isolation_level=None, check_same_thread=False, timeout=0.25, uri=uri
    )
    conn.row_factory = sqlite3.Row
    for name, value in PRAGMAS:
        if query_only and name == "journal_mode":
            continue  # a reader must not try to change the file; the writer set WAL already
        try:
            conn.execute(f"PRAGMA {name}={value}")
        except sqlite3.OperationalError as error:
            # journal_mode reads the file, which another process may hold exclusively locked
            # right now. The mode is stored in the file, so the connection that set it before
            # (or the next one) covers it; the transaction's retries wait for the lock.
            if name != "journal_mode" or not is_transient_lock_error(error):
                conn.close()
                raise
    if query_only:
        conn.execute("PRAGMA query_only=1")
    return conn


def run_transaction(
    conn: sqlite3.Connection,
    work: Callable[[sqlite3.Connection], T],
    *,
    config: BoardConfig,
    write: bool = True,
    queue: WriterQueue | None = None,
) -> T:
    """Run `work(conn)` inside one transaction (`BEGIN IMMEDIATE` for writes) and commit.

    On a transient lock error the transaction is rolled back and re-run from scratch after a
    jittered 20-150 ms sleep, until a wall-clock budget (monotonic, not an attempt count, so a
    contended write cannot freeze the caller longer than the budget) runs out; then
    `BoardError(BUSY)`. Any other error, including a `BoardError` refusal, rolls back and
    propagates at once. A writer first waits for its turn in `queue` (see `writer_queue`), within
    the same budget.
    """
    deadline = time.monotonic() + config.retry_budget_ms / 1000
    if queue is None:
        return _attempts(conn, work, config=config, write=write, deadline=deadline)
    if not queue.acquire(deadline - time.monotonic()):
        raise BoardError(Reason.BUSY, "database busy, try again", waited="writer queue")
    try:
        return _attempts(conn, work, config=config, write=write, deadline=deadline)
    finally:
        queue.release()


def attempt_once(conn: sqlite3.Connection, work: Callable[[sqlite3.Connection], T]) -> T:
    """One write transaction that waits for no lock: the caller set SQLite's busy timeout to 0
    (and holds the writers' turn), so a lock held elsewhere fails its `BEGIN IMMEDIATE` at once,
    `WouldWait` with nothing written. A busy error later in the transaction rolls it back and
    reaches the caller, which runs the write again where it may wait."""
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as error:
        if is_transient_lock_error(error):
            # imported here, where it is raised: an import statement runs the import machinery
            # each time (~1.7 us), which every claim answered inline paid before
            from .base import WouldWait

            raise WouldWait from error
        raise
    try:
        result = work(conn)
        conn.execute("COMMIT")
        return result
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _attempts(
    conn: sqlite3.Connection,
    work: Callable[[sqlite3.Connection], T],
    *,
    config: BoardConfig,
    write: bool,
    deadline: float,
) -> T:
    low, high = config.retry_jitter_ms
    attempt = 0
    while True:
        attempt += 1
        try:
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                result = work(conn)
                conn.execute("COMMIT")
                return result
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError as error:
            if not is_transient_lock_error(error):
                raise
            left = deadline - time.monotonic()
            if left <= 0 or attempt >= config.retry_max_attempts:
                raise BoardError(
                    Reason.BUSY, "database busy, try again", attempts=attempt
                ) from error
            import random  # only a retried write needs it: a CLI call that never waits skips ~1 ms

            time.sleep(min(random.uniform(low, high) / 1000, left))
