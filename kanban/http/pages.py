"""The bodies of recent task-list pages, by their ETag: a poller that asks the first page of an
unchanged board again, without `If-None-Match`, gets the same bytes without a query.

A strong ETag names one body (the same board at the same version, asked the same list, answers
the same bytes: `replies.list_etag`), so the tag is the whole key, and a write to any task moves
the board's version and with it every tag. Bounded by count and bytes, oldest out first.
"""

import threading
from collections import OrderedDict

PAGES_KEPT = 64
PAGE_BYTES_KEPT = 8 * 1024 * 1024


class PageCache:
    """Recent page bodies by ETag (thread-safe: the pool's threads list too)."""

    def __init__(self, entries: int = PAGES_KEPT, max_bytes: int = PAGE_BYTES_KEPT) -> None:
        self.entries = entries
        self.max_bytes = max_bytes
        self._bodies: OrderedDict[str, bytes] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, etag: str) -> bytes | None:
        with self._lock:
            body = self._bodies.get(etag)
            if body is None:
                self.misses += 1
                return None
            self._bodies.move_to_end(etag)
            self.hits += 1
            return body

    def put(self, etag: str, body: bytes) -> None:
        if len(body) > self.max_bytes // 4:  # a whole board's list is not a page to keep
            return
        with self._lock:
            old = self._bodies.pop(etag, None)
            self._bytes -= len(old) if old is not None else 0
            self._bodies[etag] = body
            self._bytes += len(body)
            while len(self._bodies) > self.entries or self._bytes > self.max_bytes:
                _, dropped = self._bodies.popitem(last=False)
                self._bytes -= len(dropped)
