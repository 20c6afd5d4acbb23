"""Many SSE followers on raw sockets, read by one selector loop in the test's thread: a hundred
of them cost a hundred sockets, not a hundred threads, and they can all be closed in one tight
loop (as when a dashboard fleet goes away at once). Each one decodes HTTP/1.1 chunked framing and
keeps the event ids, the comments and the `retry:` hints it was sent, and whether the server
ended the stream (the last chunk, then end of file)."""

import selectors
import socket
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit


@dataclass
class Follower:
    sock: socket.socket
    status: int | None = None
    ids: list[int] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    retries: list[int] = field(default_factory=list)
    last_chunk: bool = False  # the chunked body's terminating zero-length chunk arrived
    eof: bool = False  # the server closed the connection
    _raw: bytearray = field(default_factory=bytearray)
    _body: bytearray = field(default_factory=bytearray)
    _headers_done: bool = False

    def feed(self, data: bytes) -> None:
        if not data:
            self.eof = True
            return
        self._raw += data
        if not self._headers_done:
            end = self._raw.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self._raw[:end]).decode("latin-1")
            self.status = int(head.split(" ", 2)[1])
            del self._raw[: end + 4]
            self._headers_done = True
        self._unchunk()
        self._parse_events()

    def _unchunk(self) -> None:
        while not self.last_chunk:
            line_end = self._raw.find(b"\r\n")
            if line_end < 0:
                return
            size = int(bytes(self._raw[:line_end]).split(b";")[0], 16)
            if len(self._raw) < line_end + 2 + size + 2:
                return
            start = line_end + 2
            self._body += self._raw[start : start + size]
            del self._raw[: start + size + 2]
            if size == 0:
                self.last_chunk = True

    def _parse_events(self) -> None:
        text = self._body.replace(b"\r\n", b"\n")
        *blocks, rest = bytes(text).split(b"\n\n")
        self._body = bytearray(rest)
        for block in blocks:
            for line in block.decode().split("\n"):
                if line.startswith(":"):
                    self.comments.append(line[1:].strip())
                elif line.startswith("id:"):
                    self.ids.append(int(line[3:].strip()))
                elif line.startswith("retry:"):
                    self.retries.append(int(line[6:].strip()))


class Fleet:
    """`count` followers of `GET /api/board/events?since=...` on the server at `url`."""

    def __init__(self, url: str, count: int, since: int) -> None:
        parts = urlsplit(url)
        host, port = parts.hostname or "127.0.0.1", parts.port or 80
        request = (
            f"GET /api/board/events?since={since} HTTP/1.1\r\nHost: {host}:{port}\r\n"
            "Accept: text/event-stream\r\n\r\n"
        ).encode()
        self.selector = selectors.DefaultSelector()
        self.followers: list[Follower] = []
        for _ in range(count):
            sock = socket.create_connection((host, port), timeout=10)
            sock.sendall(request)
            sock.setblocking(False)
            follower = Follower(sock)
            self.followers.append(follower)
            self.selector.register(sock, selectors.EVENT_READ, follower)

    def pump(self, until: Callable[[], bool], timeout_s: float) -> bool:
        """Read whatever arrives until `until()` holds (True) or `timeout_s` passes (False)."""
        deadline = time.monotonic() + timeout_s
        while not until():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            for key, _ in self.selector.select(timeout=min(left, 0.2)):
                follower: Follower = key.data
                try:
                    data = follower.sock.recv(65536)
                except BlockingIOError:
                    continue
                except ConnectionError:
                    data = b""
                follower.feed(data)
                if follower.eof:
                    self.selector.unregister(follower.sock)
        return True

    def all_streaming(self, timeout_s: float = 30) -> bool:
        return self.pump(lambda: all(f.status is not None for f in self.followers), timeout_s)

    def all_have(self, ids: Iterable[int], timeout_s: float = 30) -> bool:
        wanted = list(ids)
        return self.pump(lambda: all(f.ids == wanted for f in self.followers), timeout_s)

    def all_ended(self, timeout_s: float) -> bool:
        return self.pump(lambda: all(f.eof for f in self.followers), timeout_s)

    def close(self) -> None:
        """Every follower leaves in one tight loop."""
        for follower in self.followers:
            if not follower.eof:
                self.selector.unregister(follower.sock)
            follower.sock.close()
        self.selector.close()
