"""What kanban's connection pools say about a lost database: one line when the server stops
answering, one when it answers again, on the `psycopg.pool` logger where the pool says it.

psycopg-pool warns of every connection it fails to make or finds closed: two lines each on
stderr, several a second while calls keep coming (92 lines from `kanban serve` in a 30 s
outage; the MCP server's log, rich-framed, ten times as tall). Each call already answers
`database_unavailable`, so of a kanban pool's retries the first of an outage is told, reworded;
the rest are dropped. Until the pool connects again it is `reconnecting`: a call then asks the
server itself (`PostgresStore`), so it never waits for the pool's backoff nor repeats the pool's
last, maybe stale, reason. Other pools in the process are untouched.
"""

import itertools
import logging
import threading
import weakref
from typing import Any

from ..errors import database_line

POOL_LOGGER = "psycopg.pool"
_CONNECT_FAILED = "error connecting in %r: %s"
_RETRIES = ("reconnection attempt in pool %r failed", "discarding ")


class PoolNews(logging.Filter):
    """The filter on `psycopg.pool`, one per process; each kanban pool is `watch`ed by name."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._names = itertools.count(1)
        self._shown: dict[str, str] = {}  # pool name -> the board it serves, as shown
        self._down: set[str] = set()  # pools whose outage was told and its end not yet
        self._reconnecting: set[str] = set()  # pools that failed to connect and have not since
        self._connections: weakref.WeakSet[Any] = weakref.WeakSet()  # every kanban pool's

    def watch(self, shown: str) -> str:
        """A new pool's name, for the board shown as `shown` (its password hidden)."""
        name = f"kanban-{next(self._names)}"
        with self._lock:
            self._shown[name] = shown
        return name

    def forget(self, name: str) -> None:
        with self._lock:
            self._shown.pop(name, None)
            self._down.discard(name)
            self._reconnecting.discard(name)

    def reconnecting(self, name: str) -> bool:
        """Whether the pool's last connection attempt failed and it has made none since: it
        retries on a backoff, so a server that is back may not be asked again for a second."""
        with self._lock:
            return name in self._reconnecting

    def connected(self, name: str, conn: Any) -> None:
        """The pool made a connection (its `configure`): an outage it told of is over."""
        self._connections.add(conn)
        with self._lock:
            self._reconnecting.discard(name)
        self.reached(name)

    def reached(self, name: str) -> None:
        """A connection to the pool's server was made, by the pool or by a caller past it: an
        outage told of is over (told once), though the pool may still be reconnecting."""
        with self._lock:
            was_down = name in self._down
            self._down.discard(name)
            shown = self._shown.get(name)
        if was_down and shown is not None:
            logging.getLogger(POOL_LOGGER).warning(
                "kanban: the board's database is reachable again (%s)", shown
            )

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        first = args[0] if args else None
        if record.msg == _CONNECT_FAILED and isinstance(first, str) and len(args) == 2:
            with self._lock:
                shown = self._shown.get(first)
                if shown is None:
                    return True  # not kanban's pool
                self._reconnecting.add(first)
                told = first in self._down
                self._down.add(first)
            if told:
                return False
            record.msg = "kanban: database unavailable at %s: %s (database_unavailable); retrying"
            record.args = (shown, database_line(str(args[1])))
            return True
        if isinstance(record.msg, str) and record.msg.startswith(_RETRIES):
            if isinstance(first, str):
                with self._lock:
                    return first not in self._shown
            try:
                return first not in self._connections
            except TypeError:  # not a connection: not ours
                return True
        return True


_news: PoolNews | None = None
_installing = threading.Lock()


def pool_news() -> PoolNews:
    """The process's filter, installed on `psycopg.pool` on first use."""
    global _news
    with _installing:
        if _news is None:
            _news = PoolNews()
            logging.getLogger(POOL_LOGGER).addFilter(_news)
        return _news
