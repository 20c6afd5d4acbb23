"""What kanban's connection pools say about a lost database: one line when the server stops
answering, one when it answers again, on the `psycopg.pool` logger where the pool says it.

psycopg-pool warns of every connection it fails to make or finds closed: two lines each on
stderr, several a second while calls keep coming (92 lines from `kanban serve` in a 30 s
outage; the MCP server's log, rich-framed, ten times as tall). Each call already answers
`database_unavailable`, so of a kanban pool's retries the first of an outage is told, reworded,
and its reason kept for the refusals that follow (the pool's own says only "couldn't get a
connection after 1.50 sec"); the rest are dropped. Other pools in the process are untouched.
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
        self._failure: dict[str, str] = {}  # pool name -> why its last connect failed
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
            self._failure.pop(name, None)

    def failure(self, name: str) -> str | None:
        """Why the pool's last connection attempt failed, while it has made none since."""
        with self._lock:
            return self._failure.get(name)

    def connected(self, name: str, conn: Any) -> None:
        """The pool made a connection (its `configure`): an outage it told of is over."""
        self._connections.add(conn)
        with self._lock:
            was_down = self._failure.pop(name, None) is not None
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
                told = first in self._failure
                self._failure[first] = database_line(str(args[1]))
            if told:
                return False
            record.msg = "kanban: database unavailable at %s: %s (database_unavailable); retrying"
            record.args = (shown, self._failure.get(first, ""))
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
