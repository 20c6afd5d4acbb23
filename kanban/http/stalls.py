"""Clients that stop reading are dropped: uvicorn's HTTP protocol with a stall guard.

uvicorn buffers what a response writes in the transport and pauses the app's sends above the
transport's high-water mark (64 KiB). A client that reads nothing keeps them paused for ever, and
a graceful close after its response was given up waits for that buffer to drain, so the socket
and its buffers stayed (measured: 19 of 20 stalled event streams still open after 80 s). Here a
paused connection whose bytes in flight (the transport's buffer and the kernel's unacknowledged
ones) have not shrunk by one for `stall_s` seconds is aborted: its buffers are freed at once, and
an event stream's client reconnects with `Last-Event-ID`. A slow reader that takes anything at
all keeps its connection. At shutdown every connection is watched, paused or not, on an allowance
of `SHUTDOWN_STALL_S`, so a stalled client never holds the exit up. An event stream's socket gets
a fixed kernel send buffer (`STREAM_SNDBUF`), not Linux's autotuned one of up to 4 MB: a stalled
follower is found after ~200 KB, not after ~14,000 events formatted for nobody.
"""

import asyncio
import contextlib
import fcntl
import importlib.util
import logging
import socket
import struct
import termios
import time
from typing import Any, ClassVar

from starlette.types import Receive, Scope, Send

log = logging.getLogger("kanban.http")

SHUTDOWN_STALL_S = 1.0
# How often a paused connection's buffer is looked at, as a share of the allowance.
CHECKS_PER_ALLOWANCE = 4
# An event stream's kernel send buffer (Linux doubles it): ~4,000 events/s at 100 ms round trip.
STREAM_SNDBUF = 64 * 1024
EVENT_STREAM = b"text/event-stream"


def _unacknowledged(transport: asyncio.Transport) -> int:
    """What the transport holds plus what the kernel holds unacknowledged (`TIOCOUTQ`): it
    shrinks whenever the client takes anything. The transport alone would not show it: the
    kernel wakes a writer only once a third of its send buffer is free, seconds apart for a slow
    reader."""
    size = transport.get_write_buffer_size()
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError, ValueError):
            size += struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0" * 4))[0]
    return size


def _asks_for_a_stream(scope: Scope) -> bool:
    if scope["type"] != "http" or scope["method"] != "GET":
        return False
    return any(name == b"accept" and EVENT_STREAM in value for name, value in scope["headers"])


class _StallGuard(asyncio.Protocol):
    """Mixed in before uvicorn's protocol class: watches the transport while writing is paused."""

    stall_s: ClassVar[float] = 10.0
    transport: asyncio.Transport
    client: Any
    app: Any
    _inner_app: Any
    _stall_check: asyncio.TimerHandle | None = None
    _stall_size = 0
    _stall_since = 0.0
    _allowance_s: float | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._inner_app, self.app = self.app, self._app

    async def _app(self, scope: Scope, receive: Receive, send: Send) -> None:
        if _asks_for_a_stream(scope):
            sock = self.transport.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, STREAM_SNDBUF)
        await self._inner_app(scope, receive, send)

    def pause_writing(self) -> None:
        super().pause_writing()
        self._stall_size = _unacknowledged(self.transport)
        self._stall_since = time.monotonic()
        self._watch()

    def resume_writing(self) -> None:
        if self._allowance_s is None:  # at shutdown the watch goes on until the connection ends
            self._unwatch()
        super().resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self._unwatch()
        super().connection_lost(exc)

    def shutdown(self) -> None:
        """Watched from now on, paused or not: a stream's last bytes under the high-water mark,
        never taken, keep its closing transport open, and uvicorn waits for it until the
        in-flight budget is spent (9.1 s of a 10 s --graceful; 1.3 s with the watch). A check
        already due was timed for the old allowance (a quarter of --sse-send-timeout: 7.5 s of
        a 30 s one, and the exit waited for it): it is dropped for one on the new clock."""
        super().shutdown()  # type: ignore[misc]  # uvicorn's protocols have it
        self._allowance_s = min(self.stall_s, SHUTDOWN_STALL_S)
        if self._stall_check is None:  # not paused: its clock starts now
            self._stall_size = _unacknowledged(self.transport)
            self._stall_since = time.monotonic()
        self._unwatch()
        self._watch()

    def _allowance(self) -> float:
        return self.stall_s if self._allowance_s is None else self._allowance_s

    def _watch(self) -> None:
        if self._stall_check is None:
            delay = self._allowance() / CHECKS_PER_ALLOWANCE
            self._stall_check = asyncio.get_running_loop().call_later(delay, self._check)

    def _unwatch(self) -> None:
        if self._stall_check is not None:
            self._stall_check.cancel()
            self._stall_check = None

    def _check(self) -> None:
        self._stall_check = None
        waiting = self.transport.get_write_buffer_size()
        if self.transport.is_closing() and waiting == 0:
            return
        size, now = _unacknowledged(self.transport), time.monotonic()
        if size < self._stall_size or not waiting:
            # the client took something (a slow reader, not a stall), or nothing waits for it
            # (an in-flight request at shutdown, still working or idle: the kernel has the rest)
            self._stall_size, self._stall_since = size, now
        elif now - self._stall_since >= self._allowance():
            log.warning(
                "dropped a client that stopped reading (nothing taken for %.1f s, %d bytes "
                "waiting; an event stream resumes with Last-Event-ID): %s",
                now - self._stall_since,
                size,
                self.client,
            )
            self.transport.abort()
            return
        self._watch()


def _uvicorn_protocol() -> type[asyncio.Protocol]:
    """The class uvicorn's `http="auto"` picks: httptools when installed, else h11."""
    if importlib.util.find_spec("httptools") is not None:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        return HttpToolsProtocol
    from uvicorn.protocols.http.h11_impl import H11Protocol

    return H11Protocol


def stall_guarded_protocol(stall_s: float) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol class that aborts a connection stalled for `stall_s` seconds
    (`uvicorn.Config(http=...)`)."""
    base = _uvicorn_protocol()
    return type(f"StallGuarded{base.__name__}", (_StallGuard, base), {"stall_s": stall_s})
