"""Clients that stop reading are dropped: uvicorn's HTTP protocol with a stall guard.

uvicorn pauses the app's sends above the transport's high-water mark (64 KiB); a client that
reads nothing kept its socket and buffers for ever (measured: 19 of 20 stalled event streams
still open after 80 s). A paused connection whose client has taken nothing (no byte acknowledged)
for `stall_s` seconds is aborted: its buffers are freed at once, and an event stream's client
reconnects with `Last-Event-ID`. An event stream is watched while it runs, paused or not: one
with any bytes waiting, none taken for `QUIET_STALL_FACTOR` allowances, is aborted alike (a dead
reader on a quiet board never fills the buffers). A slow reader that takes anything keeps its
connection; so does an idle one with nothing waiting. At shutdown every connection is watched on
the shutdown allowance, so a stalled client never holds the exit up. A stream's socket gets a
fixed kernel send buffer (`STREAM_SNDBUF`), not Linux's autotuned one of up to 4 MB: a stalled
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

from .accept import wants_stream

log = logging.getLogger("kanban.http")

SHUTDOWN_STALL_S = 1.0
# A stream not paused but with bytes waiting gets this many allowances (30 s of the default 10):
# it holds little, and a lossy link's retransmission backoff (the RTO doubles from 200 ms) can
# leave a live reader's last bytes unacknowledged for over ten seconds.
QUIET_STALL_FACTOR = 3
# The bytes a connection's peer has acknowledged, in Linux's `struct tcp_info` (since 4.2).
TCPI_BYTES_ACKED = struct.Struct("Q")
TCPI_BYTES_ACKED_AT = 120
TCP_INFO_SIZE = 256
# How often a paused connection's buffer is looked at, as a share of the allowance.
CHECKS_PER_ALLOWANCE = 4
# ... but no more often than this: a zero allowance (`--graceful 0`) would spin the loop.
SOONEST_CHECK_S = 0.01
# An event stream's kernel send buffer (Linux doubles it): ~4,000 events/s at 100 ms round trip.
STREAM_SNDBUF = 64 * 1024


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


def _taken(transport: asyncio.Transport, unacknowledged: int) -> int:
    """A count that grows exactly when the client takes bytes: the kernel's `tcpi_bytes_acked`.
    Where it cannot be read, the bytes in flight shrinking stands for it, which is exact only
    while nothing new is written (a paused connection, a stream that has ended)."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_SIZE)
            if len(info) >= TCPI_BYTES_ACKED_AT + TCPI_BYTES_ACKED.size:
                return int(TCPI_BYTES_ACKED.unpack_from(info, TCPI_BYTES_ACKED_AT)[0])
    return -unacknowledged


def _asks_for_a_stream(scope: Scope) -> bool:
    if scope["type"] != "http" or scope["method"] != "GET":
        return False
    accept = [value for name, value in scope["headers"] if name == b"accept"]
    return wants_stream(b",".join(accept).decode("latin-1"))


class _StallGuard(asyncio.Protocol):
    """Mixed in before uvicorn's protocol class: watches the transport while writing is paused,
    for the whole of an event stream, and for every connection once shutdown begins."""

    stall_s: ClassVar[float] = 10.0
    shutdown_stall_s: ClassVar[float] = SHUTDOWN_STALL_S
    transport: asyncio.Transport
    client: Any
    app: Any
    _inner_app: Any
    _stall_check: asyncio.TimerHandle | None = None
    _stall_taken = 0
    _stall_since = 0.0
    _allowance_s: float | None = None
    _paused = False
    _streaming = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._inner_app, self.app = self.app, self._app

    async def _app(self, scope: Scope, receive: Receive, send: Send) -> None:
        if _asks_for_a_stream(scope):
            sock = self.transport.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, STREAM_SNDBUF)
            self._streaming = True
            self._restart_watch()
        await self._inner_app(scope, receive, send)

    def pause_writing(self) -> None:
        super().pause_writing()
        self._paused = True
        if self._allowance_s is None:
            self._restart_watch()

    def resume_writing(self) -> None:
        self._paused = False
        if self._allowance_s is None:  # at shutdown the watch goes on until the connection ends
            self._unwatch()
            if self._streaming:
                self._restart_watch()
        super().resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self._streaming = False
        self._unwatch()
        super().connection_lost(exc)

    def shutdown(self) -> None:
        """Watched from now on, paused or not: a stream's last bytes under the high-water mark,
        never taken, keep its closing transport open, and uvicorn waits for it until the
        in-flight budget is spent (9.1 s of a 10 s --graceful; 1.3 s with the watch). A check
        already due was timed for the old allowance (a quarter of --sse-send-timeout: 7.5 s of
        a 30 s one, and the exit waited for it): it is dropped for one on the new clock."""
        super().shutdown()  # type: ignore[misc]  # uvicorn's protocols have it
        self._allowance_s = min(self.stall_s, self.shutdown_stall_s)
        if self._stall_check is None:  # not watched: its clock starts now
            self._restart_watch()
        else:
            self._unwatch()
            self._watch()

    def _allowance(self) -> float:
        if self._allowance_s is not None:
            return self._allowance_s
        return self.stall_s if self._paused else self.stall_s * QUIET_STALL_FACTOR

    def _restart_watch(self) -> None:
        self._unwatch()
        self._stall_taken = _taken(self.transport, _unacknowledged(self.transport))
        self._stall_since = time.monotonic()
        self._watch()

    def _watch(self) -> None:
        if self._stall_check is None:
            delay = max(SOONEST_CHECK_S, self._allowance() / CHECKS_PER_ALLOWANCE)
            self._stall_check = asyncio.get_running_loop().call_later(delay, self._check)

    def _unwatch(self) -> None:
        if self._stall_check is not None:
            self._stall_check.cancel()
            self._stall_check = None

    def _check(self) -> None:
        self._stall_check = None
        buffered = self.transport.get_write_buffer_size()
        if self.transport.is_closing() and buffered == 0:
            return
        size, now = _unacknowledged(self.transport), time.monotonic()
        taken = _taken(self.transport, size)
        # Nothing waits for the client: an idle stream's bytes were all taken, or (paused or
        # at shutdown) the transport is empty and the kernel has the rest.
        quiet = not self._paused and self._allowance_s is None
        idle = size == 0 if quiet else buffered == 0
        if taken > self._stall_taken or idle:  # it took something: a slow reader, not a stall
            self._stall_taken, self._stall_since = taken, now
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


def stall_guarded_protocol(
    stall_s: float, shutdown_stall_s: float = SHUTDOWN_STALL_S
) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol class that aborts a connection stalled for `stall_s` seconds,
    and for `shutdown_stall_s` once shutdown begins (`uvicorn.Config(http=...)`)."""
    base = _uvicorn_protocol()
    attributes = {"stall_s": stall_s, "shutdown_stall_s": shutdown_stall_s}
    return type(f"StallGuarded{base.__name__}", (_StallGuard, base), attributes)
