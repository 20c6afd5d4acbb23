"""The FastAPI application: wiring only. The server's parts are in `service.py`, the route
dependencies in `deps.py`, the routes in `routes/`, the answers in `replies.py` and
`envelopes.py`, the exception handlers in `handlers.py`; this module puts them together. Nothing
in the package imports it but `server.py` and `kanban serve` (an import contract holds that).
"""

import inspect
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from boardlib import Board

from .auth import BearerAuth, BrowserGuard, Receive, Scope, Send
from .deps import Who
from .fastpath import LeaseFastLane, route_endpoint
from .handlers import EXCEPTION_HANDLERS
from .head import HeadAsGet
from .limits import BodyLimit
from .openapi import DESCRIPTION, openapi_document
from .routes import budgets, events, executions, health, inbox, land, lease, tasks, workspace
from .segments import route_by_segment, unescape_parameters
from .service import ServerSettings, Service, shown_location

# Where callers have always found them: `from kanban.http.app import ServerSettings, create_app`.
__all__ = ["ServerSettings", "Service", "Who", "create_app", "shown_location"]

# FastAPI (0.16x) asks OpenTelemetry on every request whether a provider is configured; this
# server exports no telemetry, so it need not ask. Older FastAPI has no such argument.
NO_TELEMETRY: dict[str, Any] = (
    {"telemetry": {"tracing": False, "metrics": False, "logs": False}}
    if "telemetry" in inspect.signature(FastAPI.__init__).parameters
    else {}
)


class KanbanAPI(FastAPI):
    """FastAPI with the lease verbs' fast lane in front of its whole stack (`fastpath.py`): the
    app's own outer layers (error, telemetry, body-size middlewares and ours) cost a claim about
    as much server CPU as the lane's own work."""

    lease_lane: LeaseFastLane | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            route_by_segment(scope)  # `%2F` stays inside its segment (`segments.py`)
        lane = self.lease_lane
        if lane is None or scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        scope["app"] = self  # what Starlette sets first: the lane finds the service through it
        await lane(scope, receive, send)

    async def whole_stack(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The app as FastAPI runs it, for the requests the lane passes on."""
        await super().__call__(scope, receive, send)


def create_app(settings: ServerSettings, *, board: Board | None = None) -> KanbanAPI:
    """The app for `settings`. Pass `board` to serve an already open board (tests, embedding);
    it is then neither checkpointed nor closed at shutdown."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        service = Service(settings, board)
        app.state.service = service
        await service.start()
        try:
            yield
        finally:
            await service.stop()

    app = KanbanAPI(
        title="kanban",
        version="1",
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url="/docs",
        redoc_url=None,
        # a trailing slash is a 404 that names the route, not a 307 with an empty body that a
        # client which does not follow it reads as nothing done
        redirect_slashes=False,
        **NO_TELEMETRY,
    )
    # The routes go straight onto the app's router rather than through include_router: the
    # nested routers' matching cost ~0.1 ms of server CPU per request (0.93 -> 0.82 ms a claim).
    for module in (health, events, inbox, budgets, lease, tasks, executions, workspace, land):
        app.router.routes.extend(module.router.routes)
    unescape_parameters(app.router.routes)
    app.openapi = lambda: openapi_document(app)  # type: ignore[method-assign]
    for kind, handler in EXCEPTION_HANDLERS:
        app.add_exception_handler(kind, handler)
    # Outermost first: HEAD as GET, keep web pages out, authenticate, cap the body, then FastAPI
    # (each add_middleware goes outside the ones before it). The lane asks the same guards, set
    # up from the same options.
    guard_options = {"open_server": settings.tokens is None}
    auth_options = {"book": settings.tokens}
    app.add_middleware(BodyLimit, limit=settings.body_limit)
    app.add_middleware(BearerAuth, **auth_options)
    app.add_middleware(BrowserGuard, **guard_options)
    app.add_middleware(HeadAsGet)
    if settings.fast_lane:  # the lease protocol, and seed 003's claim by id, in front of it all
        claim_by_id = [
            route for route in tasks.router.routes if route_endpoint(route) is tasks.claim
        ]
        app.lease_lane = LeaseFastLane(
            app.whole_stack,
            routes=[*lease.router.routes, *claim_by_id],
            guard=BrowserGuard(app.whole_stack, **guard_options),
            auth=BearerAuth(app.whole_stack, **auth_options),
            body_limit=settings.body_limit,
        )
    return app
