"""The FastAPI application: wiring only. Routes live in `routes/`, envelopes in `envelopes.py`,
identities in `auth.py`; this module opens the board for the server's lifetime, starts the
upkeep (lease sweep, worktree garbage collection, the change feed) and turns every failure into
the seed's envelope.
"""

import inspect
import json
import logging
import os
from collections.abc import AsyncIterator, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import orjson
from anyio import to_thread
from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from boardlib import Board, BoardConfig, Clock
from boardlib.errors import BoardError, Reason
from boardlib.location import DatabaseUrl, redact_url
from boardlib.recovery import LeaseSweeper
from boardlib.worktrees import GitFailure, WorktreeJanitor, Worktrees, start_worktree_gc

from .acting import Caller, Forbidden, identity_in
from .auth import BearerAuth, BrowserGuard, TokenBook
from .envelopes import (
    ENVELOPE_ATTRIBUTE,
    INVALID_QUERY,
    PLAIN,
    RETRY_AFTER_S,
    Envelope,
    flattened,
    forbidden,
    invalid_body,
    invalid_details,
    refusal_body,
    status_of,
)
from .feed import ChangeFeed
from .limits import BODY_LIMIT, TOO_LARGE_MESSAGE, BodyLimit

log = logging.getLogger("kanban.http")

HEADERS = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"}


@dataclass
class ServerSettings:
    """What `kanban serve` was told. `db` is handed to `Board` as given: a path, or a
    `postgresql://` URL (a Postgres board then keeps a connection pool for the request threads)."""

    db: str | Path | DatabaseUrl
    tokens: TokenBook | None = None
    repo_roots: tuple[Path, ...] = ()
    sse_ping_s: float = 15.0
    feed_poll_s: float = 0.1
    upkeep: bool = True
    sweep_interval_ms: int | None = None
    gc_interval_ms: int | None = None
    worktrees_root: Path | None = None
    body_limit: int = BODY_LIMIT
    clock: Clock | None = None
    config: BoardConfig | None = None
    # The lease verbs' fast lane (`fastpath.py`); off, FastAPI answers them as every route (the
    # tests compare the two answer for answer).
    fast_lane: bool = True


def shown_location(location: "str | Path | DatabaseUrl") -> str:
    """The board's location as it may be shown (ready line, /readyz): a database URL loses its
    password, so a probe never hands out credentials (`boardlib.location` does the redacting)."""
    if isinstance(location, DatabaseUrl):
        return location.display
    return redact_url(str(location)) if "://" in str(location) else str(location)


POOL_SIZE = 8
# Threads for the lease verbs' fast lane, by store. A SQLite board has one writer connection
# per process, so a second thread would only wait on its lock: under 16 claiming clients the
# server spent 0.31-0.32 ms of CPU a claim with one thread, 0.35-0.36 with two, 0.39-0.44 with
# four. A Postgres board claims in parallel on its pool's connections.
LEASE_THREADS = {"sqlite": 1}


class Service:
    """The server's long-lived parts: one board (thread-safe), the worktree subsystem, the
    change feed and the background upkeep."""

    def __init__(self, settings: ServerSettings, board: Board | None = None) -> None:
        self.settings = settings
        self._owns_board = board is None
        self.board = board if board is not None else self._open_board()
        self.trees = Worktrees(self.board, root=settings.worktrees_root)
        self.feed = ChangeFeed(self.board, settings.feed_poll_s)
        self.lease_pool = ThreadPoolExecutor(
            max_workers=LEASE_THREADS.get(self.board.store.backend, POOL_SIZE),
            thread_name_prefix="kanban-lease",
        )
        self.sweeper: LeaseSweeper | None = None
        self.janitor: WorktreeJanitor | None = None
        self.repo_roots = tuple(Path(os.path.realpath(root)) for root in settings.repo_roots)

    def _open_board(self) -> Board:
        settings = self.settings
        return Board(
            settings.db,
            clock=settings.clock,
            config=settings.config or BoardConfig.from_env(),
            recover=True,  # the lease/orphan pass at start
            pool_size=POOL_SIZE,  # requests run on worker threads (Postgres; SQLite ignores it)
        )

    async def start(self) -> None:
        """The upkeep that keeps the board healthy with nobody calling: the lease/orphan pass
        now (one read when nothing expired) and on an interval, and worktree garbage collection."""
        if self.settings.upkeep:
            await to_thread.run_sync(self.board.release_expired_leases)
            self.sweeper = self.board.start_sweeper(self.settings.sweep_interval_ms)
            self.janitor = start_worktree_gc(
                self.board,
                interval_ms=self.settings.gc_interval_ms,
                root=self.settings.worktrees_root,
            )

    async def stop(self) -> None:
        """Stop the upkeep, fold the WAL into the board file and close it."""
        await self.feed.stop()
        await to_thread.run_sync(self.lease_pool.shutdown)
        if self.janitor is not None:
            await to_thread.run_sync(self.janitor.stop)
            self.janitor = None
        if self.sweeper is not None:
            await to_thread.run_sync(self.sweeper.stop)
            self.sweeper = None
        if self._owns_board:
            try:
                await to_thread.run_sync(self.board.checkpoint)
            finally:
                self.board.close()

    def caller(self, request: Request) -> Caller:
        return self.caller_for(request.scope)

    def caller_for(self, scope: MutableMapping[str, Any]) -> Caller:
        return Caller(identity_in(scope), self.board, self.trees, self.repo_roots)


async def caller(request: Request) -> Caller:
    """The dependency every route takes: who calls, and the board. Async because it does no
    I/O: a sync dependency would cost every request a trip through the thread pool."""
    service: Service = request.app.state.service
    return service.caller(request)


# A route's `who: Who` parameter: the caller, resolved once per request by `caller`.
Who = Annotated[Caller, Depends(caller)]


# -- failures -> envelopes --------------------------------------------------------------------


_RAW_HEADERS = [(name.lower().encode(), value.encode()) for name, value in HEADERS.items()]
_JSON_TYPE = (b"content-type", b"application/json")


class Json(JSONResponse):
    """JSON encoded by orjson: a 10,000-task list in 21-28 ms instead of 69-179 ms with the
    standard library. Control characters in agent text come out escaped (\\u001b), as with json.
    The header block is built from a prepared list rather than Starlette's generic
    `init_headers` (the same headers, in the same order): every answer pays for it."""

    def __init__(
        self, content: Any, status_code: int = 200, headers: dict[str, str] | None = None
    ) -> None:
        self.status_code = status_code
        self.background = None
        self.body = orjson.dumps(content)
        if headers:
            merged = {**HEADERS, **headers}
            raw = [
                (name.lower().encode("latin-1"), v.encode("latin-1")) for name, v in merged.items()
            ]
        else:
            raw = _RAW_HEADERS.copy()
        raw += ((b"content-length", str(len(self.body)).encode()), _JSON_TYPE)
        self.raw_headers = raw


def reply(content: Any, status: int = 200, headers: dict[str, str] | None = None) -> JSONResponse:
    return Json(content, status, headers)


def _envelope(request: Request) -> Envelope:
    chosen = getattr(request.state, "envelope", None)
    if isinstance(chosen, Envelope):
        return chosen
    route = request.scope.get("route")
    endpoint = getattr(route, "endpoint", None)
    spec = getattr(endpoint, ENVELOPE_ATTRIBUTE, None)
    return spec if isinstance(spec, Envelope) else PLAIN


def board_error_reply(error: BoardError, spec: Envelope) -> JSONResponse:
    """The board's refusal in the route's envelope (shared with the lease verbs' fast lane)."""
    if error.reason is Reason.INVALID_INPUT:
        return reply(invalid_body(spec.invalid, invalid_details(error)), 400)
    body = refusal_body(error, spec)
    if error.reason is Reason.BUSY:
        return reply(body, 503, {"Retry-After": str(RETRY_AFTER_S)})
    return reply(body, status_of(error))


def forbidden_reply(error: Forbidden, spec: Envelope) -> JSONResponse:
    status, body = forbidden(error.message, spec, **error.details)
    return reply(body, status)


async def _board_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, BoardError)
    return board_error_reply(error, _envelope(request))


async def _forbidden(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, Forbidden)
    return forbidden_reply(error, _envelope(request))


# FastAPI reads a body sent without `Content-Type: application/json` as no object at all, and
# said "Input should be a valid dictionary or object to extract fields from".
NOT_JSON_TYPE = "the body must be a JSON object sent with Content-Type: application/json"


def _message(item: dict[str, Any]) -> str:
    text = str(item.get("msg", "invalid"))
    return text.removeprefix("Value error, ")


async def _invalid_request(request: Request, error: Exception) -> JSONResponse:
    """FastAPI's validation failures as seed 003's zod-flatten 400 (never FastAPI's 422)."""
    assert isinstance(error, RequestValidationError)
    form: list[str] = []
    fields: dict[str, list[str]] = {}
    in_body = False
    said_json = "json" in request.headers.get("content-type", "").lower()
    for item in error.errors():
        where, *path = item.get("loc", ()) or ("body",)
        in_body = in_body or where == "body"
        if where == "body" and not path and not said_json:  # `curl -d` sends a form type
            form.append(NOT_JSON_TYPE)
            continue
        if item.get("type") == "json_invalid":
            form.append(f"malformed JSON: {item.get('ctx', {}).get('error', 'cannot parse')}")
            continue
        if item.get("type") == "missing" and not path and where == "body":
            form.append("a JSON object body is required")
            continue
        key = ".".join(str(part) for part in path)
        if key:
            fields.setdefault(key, []).append(_message(item))
        else:
            form.append(_message(item))
    text = _envelope(request).invalid if in_body else INVALID_QUERY
    return reply(invalid_body(text, flattened(form, fields)), 400)


async def _http_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, HTTPException)
    if error.status_code == 413:
        return reply({"error": TOO_LARGE_MESSAGE, "reason": "too_large"}, 413)
    if error.status_code == 400:  # a body FastAPI could not read at all
        details = flattened([str(error.detail)], {})
        return reply(invalid_body(_envelope(request).invalid, details), 400)
    text = {404: "not found", 405: "method not allowed"}.get(error.status_code, str(error.detail))
    return reply({"error": text}, error.status_code, dict(error.headers or {}))


async def _git_failure(_request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, GitFailure)
    return reply(error.to_dict(), 500)


async def _unexpected(request: Request, error: Exception) -> JSONResponse:
    log.error("unexpected failure on %s %s", request.method, request.url.path, exc_info=error)
    return reply({"error": f"internal error ({type(error).__name__})", "reason": "unexpected"}, 500)


# -- the application --------------------------------------------------------------------------

DESCRIPTION = """\
The board's REST surface: seed 003's Board API route for route, plus the lease protocol
(claim-next, heartbeat, complete, review...) and a live change feed.

**Envelopes.** Refusals answer `{ok: false, error}` (claim, status changes, workspace actions)
or `{error}` as each route documents, always with the board's `reason`. A 400 carries
`details: {formErrors, fieldErrors}`. **A 409 is data, not a transient error: do not retry it.**
503 (busy) is the one refusal to retry, after `Retry-After` seconds.

**Identity.** With tokens, send `Authorization: Bearer <token>`. A per-agent token *is* the
agent: lease verbs take it from the token and refuse a body that names someone else.
"""


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document without the 422 it adds to every route with parameters: this API
    answers a bad request with seed 003's 400 (422 is only provision's `no_isolation`)."""
    if app.openapi_schema is None:
        from fastapi.openapi.utils import get_openapi

        document = get_openapi(
            title=app.title,
            version=app.version,
            description=app.description,
            routes=app.routes,
        )
        for item in document["paths"].values():
            for operation in item.values():
                answers = operation.get("responses", {})
                if answers.get("422", {}).get("description") == "Validation Error":
                    del answers["422"]
        # Bearer tokens: optional (an open loopback server takes none), /healthz never needs one.
        components = document.setdefault("components", {})
        components["securitySchemes"] = {
            "bearer": {
                "type": "http",
                "scheme": "bearer",
                "description": "--token / KANBAN_TOKEN, or a per-caller token of --tokens FILE",
            }
        }
        document["security"] = [{"bearer": []}, {}]
        document["paths"]["/healthz"]["get"]["security"] = [{}]
        schemas = components.get("schemas", {})
        text = json.dumps(document["paths"])
        for name in ("HTTPValidationError", "ValidationError"):
            if f'/{name}"' not in text:
                schemas.pop(name, None)
        app.openapi_schema = document
    return app.openapi_schema


# FastAPI (0.16x) asks OpenTelemetry on every request whether a provider is configured; this
# server exports no telemetry, so it need not ask. Older FastAPI has no such argument.
NO_TELEMETRY: dict[str, Any] = (
    {"telemetry": {"tracing": False, "metrics": False, "logs": False}}
    if "telemetry" in inspect.signature(FastAPI.__init__).parameters
    else {}
)


def create_app(settings: ServerSettings, *, board: Board | None = None) -> FastAPI:
    """The app for `settings`. Pass `board` to serve an already open board (tests, embedding);
    it is then neither checkpointed nor closed at shutdown."""
    from .fastpath import LeaseFastLane, route_endpoint
    from .routes import events, executions, health, lease, tasks, workspace

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        service = Service(settings, board)
        app.state.service = service
        await service.start()
        try:
            yield
        finally:
            await service.stop()

    app = FastAPI(
        title="kanban",
        version="1",
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url="/docs",
        redoc_url=None,
        **NO_TELEMETRY,
    )
    # The routes go straight onto the app's router rather than through include_router: the
    # nested routers' matching cost ~0.1 ms of server CPU per request (0.93 -> 0.82 ms a claim).
    for module in (health, events, lease, tasks, executions, workspace):
        app.router.routes.extend(module.router.routes)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    app.add_exception_handler(BoardError, _board_error)
    app.add_exception_handler(Forbidden, _forbidden)
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(GitFailure, _git_failure)
    app.add_exception_handler(Exception, _unexpected)
    # Outermost first: keep web pages out, authenticate, cap the body, the lease verbs' fast
    # lane, then FastAPI.
    if settings.fast_lane:  # the lease protocol, and seed 003's claim by id
        claim_by_id = [
            route for route in tasks.router.routes if route_endpoint(route) is tasks.claim
        ]
        app.add_middleware(LeaseFastLane, routes=[*lease.router.routes, *claim_by_id])
    app.add_middleware(BodyLimit, limit=settings.body_limit)
    app.add_middleware(BearerAuth, book=settings.tokens)
    app.add_middleware(BrowserGuard, open_server=settings.tokens is None)
    return app
