"""`kanban serve`: the app under uvicorn, bound safely, shut down cleanly.

- **Binding.** 127.0.0.1 by default. A host that is not loopback is refused unless a token
  guards it: an open board on a network is anyone's board.
- **Ready line.** Once listening, one JSON line on stdout names the URL (with the real port when
  `--port 0` asked for any free one), so scripts and tests can wait for it.
- **Shutdown.** SIGTERM or Ctrl-C: end the live event streams at once, let in-flight requests
  finish, stop the feed and the upkeep, checkpoint the WAL, close the board, exit 0; all within
  `graceful_s` (a request thread still running then is left behind).
- **Seed envelopes, never uvicorn's text/plain.** A request cut off when the in-flight budget
  is spent gets 503 `shutting_down` with Retry-After (it may or may not have taken effect); one
  uvicorn's HTTP parser refuses (a bad Content-Length or chunk) gets the 400 envelope.
- **Watchdog.** If shutdown gets stuck anyway, the process exits 1 at `graceful_s` + 2 s at the
  latest. docs/architecture.md, "The change feed and shutdown", has the steps and their budgets.
"""

import asyncio
import contextlib
import copy
import faulthandler
import json
import logging
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import uvicorn

from boardlib import Board

from .app import create_app
from .auth import Receive, Scope, Send, is_loopback
from .handlers import cut_short_reply
from .replies import malformed_request_bytes
from .service import ServerSettings, shown_location
from .stalls import SHUTDOWN_STALL_S, stall_guarded_protocol

log = logging.getLogger("kanban.http")

# What shutdown keeps, out of --graceful, for its steps after the in-flight requests: cancelling
# what is left, the lifespan's stop (the feed's poller, the upkeep threads), the checkpoint.
TAIL_S = 1.0
# The watchdog fires this long after the signal past --graceful, and its own last steps (the
# checkpoint try, the stack dump) take at most WATCHDOG_CHECKPOINT_S more: gone within + 2 s.
WATCHDOG_AFTER_S = 1.5
WATCHDOG_CHECKPOINT_S = 0.3
WATCHDOG_EXIT = 1
# Request threads may run until this long before the --graceful deadline: leaving takes a moment.
EXIT_MARGIN_S = 0.25


class UnsafeBinding(ValueError):
    """The server would expose an unguarded board; the message says why and what to do."""


def check_binding(host: str, settings: ServerSettings) -> None:
    if settings.tokens is None and not is_loopback(host):
        raise UnsafeBinding(
            f"refusing to serve on {host} without a token: anyone who can reach this address "
            "could claim, approve and cancel tasks. Pass --token (or KANBAN_TOKEN), or "
            "--tokens FILE for per-agent identities, or bind to 127.0.0.1."
        )


def bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound before anything else starts so a taken port fails fast."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError:
        sock.close()
        raise
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


class ShutdownWatchdog:
    """Ends the process if it is still alive `limit_s` after shutdown began. Armed by the first
    signal (or by shutdown itself), once; a daemon thread, so a process that finished in time
    never waits for it."""

    def __init__(self, limit_s: float, board: Board) -> None:
        self.limit_s = limit_s
        self._board = board
        self._timer: threading.Timer | None = None
        self.armed_at: float | None = None

    def arm(self) -> None:
        if self._timer is not None:
            return
        self.armed_at = time.monotonic()
        self._timer = threading.Timer(self.limit_s, self._expire)
        self._timer.name = "kanban-shutdown-watchdog"
        self._timer.daemon = True
        self._timer.start()

    def _expire(self) -> None:
        log.error(
            "shutdown did not finish within --graceful + 2 s (%.1f s): exiting now; "
            "the threads' stacks follow",
            self.limit_s + WATCHDOG_CHECKPOINT_S,
        )
        with contextlib.suppress(Exception):
            faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
        # The WAL is durable as it is (the next open folds it in); try to fold it now anyway,
        # but never wait on a board that whatever got stuck may be holding.
        folding = threading.Thread(target=self._checkpoint, daemon=True)
        folding.start()
        folding.join(WATCHDOG_CHECKPOINT_S)
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os._exit(WATCHDOG_EXIT)

    def _checkpoint(self) -> None:
        with contextlib.suppress(Exception):
            self._board.checkpoint()


class _AnswersCutShort(asyncio.Protocol):
    """Mixed in before uvicorn's protocol class (the stall-guarded one): a request that shutdown
    cancels before its response started is answered in the route's envelope (503
    `shutting_down`, Retry-After). uvicorn's own answer to any exception out of the app is a
    text/plain 500, which a client of the seed's API cannot read. Per connection, so a request
    pays nothing for it: the cancellation is caught only where uvicorn's cycle already knows
    whether the response started."""

    app: Any
    cycle: Any
    _cut_short_app: Any
    _shutting_down = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._cut_short_app, self.app = self.app, self._answering

    def shutdown(self) -> None:
        self._shutting_down = True
        super().shutdown()  # type: ignore[misc]  # uvicorn's protocols have it

    async def _answering(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self._cut_short_app(scope, receive, send)
        except asyncio.CancelledError:
            cycle = getattr(self, "cycle", None)
            started = cycle is None or cycle.response_started
            if not self._shutting_down or started or scope["type"] != "http":
                raise
            await cut_short_reply(scope)(scope, receive, send)


CHUNKED = "chunked"


def transfer_codings(headers: list[tuple[bytes, bytes]]) -> list[str]:
    """The transfer codings a request's `Transfer-Encoding` headers name, in order, lowercased
    (several headers are one list, as HTTP reads them)."""
    return [
        part.strip().lower()
        for key, value in headers
        if key == b"transfer-encoding"
        for part in value.decode("latin-1").split(",")
        if part.strip()
    ]


class _RefusedTransferCoding(Exception):
    """Raised from the parser's callback at the end of a request's headers: httptools reads a
    body whose codings end in chunked (`gzip, chunked`) as chunked and hands it on undecoded."""


class _AnswersMalformed(asyncio.Protocol):
    """Mixed in before uvicorn's protocol class: a request its HTTP parser refuses (a
    Content-Length that is not one number or two that differ, a Transfer-Encoding other than
    chunked, a broken chunked body, a bad request line or header) gets seed 003's 400 envelope,
    not uvicorn's text/plain "Invalid HTTP request received.". The app never sees such a
    request, so no route's envelope applies: the plain one, with the parser's reason."""

    transport: asyncio.Transport
    server_state: Any
    headers: list[tuple[bytes, bytes]]

    def on_headers_complete(self) -> None:
        """httptools refuses `Transfer-Encoding: gzip` but takes `gzip, chunked` (one header or
        two), whose body the app read as JSON without the gzip decoded: refused as the parser
        refuses the first (h11, which has no such callback, refuses both itself)."""
        codings = transfer_codings(self.headers)
        if codings and codings != [CHUNKED]:
            raise _RefusedTransferCoding(
                f"Request has a `Transfer-Encoding` other than `{CHUNKED}` alone (its body "
                "would be read undecoded)"
            )
        super().on_headers_complete()  # type: ignore[misc]  # httptools' protocol has it

    def send_400_response(self, msg: str) -> None:
        """uvicorn calls it (both of its protocols) from inside its `except` for the parser's
        error, which names what was wrong."""
        cycle = getattr(self, "cycle", None)
        if cycle is not None and cycle.response_started and not cycle.response_complete:
            self.transport.close()  # a 400 now would land inside the answer being written
            return
        refused = sys.exc_info()[1]
        if refused is not None and isinstance(refused.__context__, _RefusedTransferCoding):
            refused = refused.__context__  # httptools says only "User callback error"
        why = (str(refused) if refused is not None else "") or msg
        self.transport.write(malformed_request_bytes(why, self.server_state.default_headers))
        self.transport.close()


def served_protocol(stall_s: float, graceful_s: float = 30.0) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol as `kanban serve` runs it: stall-guarded, answering a request
    cut off at shutdown in the envelope, and a request its parser refuses too."""
    guarded = stall_guarded_protocol(stall_s, shutdown_stall_allowance(graceful_s))
    mixins = (_AnswersMalformed, _AnswersCutShort, guarded)
    return type(f"EnvelopeAnswering{guarded.__name__}", mixins, {})


class _Server(uvicorn.Server):
    def __init__(
        self,
        config: uvicorn.Config,
        on_ready: Callable[[], None],
        on_shutdown: Callable[[], None],
        watchdog: ShutdownWatchdog,
    ) -> None:
        super().__init__(config)
        self._on_ready = on_ready
        self._on_shutdown = on_shutdown
        self._watchdog = watchdog

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self._on_ready()

    def handle_exit(self, sig: int, frame: Any) -> None:
        self._watchdog.arm()
        super().handle_exit(sig, frame)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """Live streams end first, so uvicorn does not wait for them as in-flight requests."""
        self._watchdog.arm()
        self._on_shutdown()
        await super().shutdown(sockets)


def in_flight_budget(graceful_s: float) -> float:
    """How long in-flight requests may take at shutdown: --graceful less the tail it keeps."""
    return max(0.0, graceful_s - min(TAIL_S, graceful_s / 2))


def shutdown_stall_allowance(graceful_s: float) -> float:
    """How long a client may take nothing once shutdown begins: one second, or half the
    in-flight budget when that is shorter. A stalled stream left to the budget's end is
    cancelled by uvicorn, which logs an error and a traceback for it (`--graceful 0.5`: a 0.25 s
    budget against the 1 s allowance); dropped by the guard first it leaves one warning."""
    return min(SHUTDOWN_STALL_S, in_flight_budget(graceful_s) / 2)


class _NothingCancelled(logging.Filter):
    """uvicorn logs "Cancel 0 running task(s)" as an error whenever its wait for in-flight
    requests is given no time (`--graceful 0`), even with none left to cancel: said of nothing,
    the line is dropped."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (str(record.msg).startswith("Cancel %s running task") and record.args == (0,))


_NOTHING_CANCELLED = _NothingCancelled()  # one instance: adding it again is a no-op


# uvicorn's logging, with its access lines on stderr as `--access-log` says: stdout is the
# one JSON line announcing where the server listens.
_LOGGING = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
_LOGGING["handlers"]["access"]["stream"] = "ext://sys.stderr"


def serve(
    settings: ServerSettings,
    board: Board,
    sock: socket.socket,
    *,
    access_log: bool = False,
    graceful_s: float = 30.0,
    announce: Callable[[dict[str, Any]], None] | None = None,
) -> int:
    """Serve `board` on the bound `sock` until SIGTERM/SIGINT; 0 on a clean shutdown. The board
    is checkpointed and closed on the way out."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    ready = {
        "listening": f"http://{shown}:{port}",
        "db": shown_location(settings.db),
        "auth": "tokens"
        if settings.tokens is not None and settings.tokens.per_caller
        else ("token" if settings.tokens is not None else "none"),
    }
    app = create_app(settings, board=board)
    config = uvicorn.Config(
        app,
        # a connection that takes nothing for this long is dropped (stalls.py)
        http=served_protocol(settings.sse_send_timeout_s, graceful_s),
        log_level="warning",
        log_config=_LOGGING,
        access_log=access_log,
        lifespan="on",
        server_header=False,
    )
    logging.getLogger("uvicorn.error").addFilter(_NOTHING_CANCELLED)
    if access_log:  # uvicorn gave its access logger the warning level too: every line dropped
        logging.getLogger("uvicorn.access").setLevel(logging.INFO)
    # uvicorn types it as whole seconds but hands it to asyncio.wait_for, which takes a float.
    config.timeout_graceful_shutdown = in_flight_budget(graceful_s)  # type: ignore[assignment]
    watchdog = ShutdownWatchdog(graceful_s + WATCHDOG_AFTER_S, board)

    def end_streams() -> None:
        service = getattr(app.state, "service", None)
        if service is not None:
            service.feed.close()

    server = _Server(config, lambda: (announce or _print_line)(ready), end_streams, watchdog)

    def stop_soon(_signum: int, _frame: object) -> None:
        watchdog.arm()
        server.should_exit = True

    # uvicorn handles SIGTERM/SIGINT while it serves, and re-raises the signal once it has shut
    # down. These handlers cover both ends: a signal before uvicorn listens still stops it (right
    # after start-up), and the re-raise lands here, so the exit code is ours (0), not death by
    # SIGTERM.
    previous = {sig: signal.signal(sig, stop_soon) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        server.run(sockets=[sock])
        code = 0 if server.started else 1
    except SystemExit as stop:  # uvicorn exits 3 when the app's startup failed
        code = int(stop.code) if isinstance(stop.code, int) else 1
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        try:
            board.checkpoint()
        finally:
            board.close()
    if watchdog.armed_at is not None:  # the watchdog stays armed until the process is gone
        leave_threads_behind(code, deadline=watchdog.armed_at + graceful_s - EXIT_MARGIN_S)
    return code


def leave_threads_behind(code: int, *, deadline: float) -> None:
    """Exit now if request threads are still running when shutdown is done: uvicorn cancelled
    their requests past the in-flight budget, but a thread cannot be cancelled, and the
    interpreter would wait for it at exit (a `sleep 20` verify gate: 20 s). They may finish
    until the --graceful deadline; after it the process leaves without them."""
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
    stuck = sorted(
        {
            thread.name
            for thread in threading.enumerate()
            if thread is not threading.main_thread() and not thread.daemon and thread.is_alive()
        }
    )
    if stuck:
        log.warning(
            "exiting with request threads still running past --graceful: %s", ", ".join(stuck)
        )
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def serve_workers(
    settings: ServerSettings,
    open_board: Callable[[], Board],
    sock: socket.socket,
    *,
    workers: int = 1,
    access_log: bool = False,
    graceful_s: float = 30.0,
    announce: Callable[[dict[str, Any]], None] | None = None,
) -> int:
    """`serve` in `workers` processes sharing the one listening socket (the kernel hands each
    connection to one of them), so the server uses more than one core despite the GIL. Each
    worker opens its own board after the fork (SQLite and the writer queue coordinate them as
    they do any processes); only the first runs the upkeep and prints the ready line. SIGTERM or
    SIGINT to this process is passed on; a worker that dies unasked stops the others (exit 1)."""
    if workers <= 1:
        return serve(
            settings,
            open_board(),
            sock,
            access_log=access_log,
            graceful_s=graceful_s,
            announce=announce,
        )
    sys.stdout.flush()
    sys.stderr.flush()
    children: list[int] = []
    for index in range(workers):
        pid = os.fork()
        if pid == 0:  # a worker: serve, then leave without running the parent's clean-up
            code = 1
            try:
                own = replace(settings, upkeep=settings.upkeep and index == 0)
                say = (announce or _print_line) if index == 0 else _quiet

                def ready(doc: dict[str, Any], say: Callable[[dict[str, Any]], None] = say) -> None:
                    say({**doc, "workers": workers})

                code = serve(
                    own,
                    open_board(),
                    sock,
                    access_log=access_log,
                    graceful_s=graceful_s,
                    announce=ready,
                )
            finally:
                sys.stdout.flush()
                os._exit(code)
        children.append(pid)
    sock.close()
    stopping = False

    def pass_on(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True
        for child in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGTERM)

    previous = {sig: signal.signal(sig, pass_on) for sig in (signal.SIGTERM, signal.SIGINT)}
    failed = False
    try:
        while children:
            pid, status = os.wait()
            if pid not in children:
                continue
            children.remove(pid)
            if os.waitstatus_to_exitcode(status) != 0:
                failed = True
                if not stopping:
                    pass_on(signal.SIGTERM, None)
            elif not stopping:  # a worker left on its own: the server is going down
                pass_on(signal.SIGTERM, None)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 1 if failed else 0


def _quiet(_doc: dict[str, Any]) -> None:
    return None


def _print_line(doc: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(doc) + "\n")
    sys.stdout.flush()
