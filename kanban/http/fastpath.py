"""The lease verbs' fast lane: claim-next, heartbeat, complete... (and seed 003's claim by id)
answered without FastAPI's request pipeline, because agents call them far more often than
anything else.

It runs in front of the whole app (`KanbanAPI.__call__`): it applies the browser guard, the token
check and the body cap to the request itself, and takes only the plain case; everything else goes
to the app, its bytes replayed, so answers stay byte for byte FastAPI's. The lanes are built from
the lease routes FastAPI declares: docs/architecture.md#the-http-fast-lane
"""

import asyncio
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, cast

import orjson
from fastapi.routing import APIRoute
from pydantic import BaseModel
from starlette.responses import Response
from starlette.routing import BaseRoute

from boardlib.errors import BoardError
from boardlib.store.base import StoreError, WouldWait

from .acting import Forbidden
from .auth import ASGIApp, BearerAuth, BrowserGuard, Message, Receive, Scope, Send
from .envelopes import ENVELOPE_ATTRIBUTE, PLAIN, Envelope
from .handlers import failure_reply
from .limits import declared_length
from .replies import board_error_reply, forbidden_reply
from .segments import unescaped
from .service import Service

TASK_ID = "{task_id}"
# The endpoint parameters a lane knows how to fill; a lease route with any other is refused at
# start-up, so a new verb cannot silently lose a parameter here.
KNOWN_PARAMETERS = frozenset({"who", "body", "task_id"})


@dataclass(frozen=True, slots=True)
class Lane:
    """One lease route, as the fast lane runs it."""

    endpoint: Callable[..., Response]
    model: type[BaseModel]
    body_required: bool
    envelope: Envelope
    takes_task_id: bool


def route_endpoint(route: BaseRoute) -> Callable[..., Any] | None:
    return route.endpoint if isinstance(route, APIRoute) else None


def lane_of(route: APIRoute) -> Lane:
    """The lane of one FastAPI route, read from its endpoint's signature: `body: Model`,
    `body: Annotated[Model | None, Body()] = None`, `who: Who`, `task_id: str`."""
    endpoint = route.endpoint
    signature = inspect.signature(endpoint)
    unknown = set(signature.parameters) - KNOWN_PARAMETERS
    if unknown:
        raise TypeError(f"{route.path}: the fast lane cannot fill {sorted(unknown)}")
    hints = typing.get_type_hints(endpoint)
    models = [
        member
        for member in typing.get_args(hints["body"]) or (hints["body"],)
        if isinstance(member, type) and issubclass(member, BaseModel)
    ]
    if len(models) != 1:
        raise TypeError(f"{route.path}: the body must be one pydantic model")
    spec = getattr(endpoint, ENVELOPE_ATTRIBUTE, PLAIN)
    return Lane(
        endpoint=endpoint,
        model=models[0],
        body_required=signature.parameters["body"].default is inspect.Parameter.empty,
        envelope=spec if isinstance(spec, Envelope) else PLAIN,
        takes_task_id="task_id" in signature.parameters,
    )


class LeaseLanes:
    """The lanes, found by path without a regular expression: `PREFIX/claim-next` by its whole
    path, `PREFIX/{task_id}/VERB` by its last segment."""

    def __init__(self, routes: list[BaseRoute]) -> None:
        self.exact: dict[str, Lane] = {}
        self.by_verb: dict[str, Lane] = {}
        self.prefix = ""
        for route in routes:
            if not isinstance(route, APIRoute) or route.methods != {"POST"}:
                raise TypeError(f"the fast lane takes POST routes only, not {route}")
            lane = lane_of(route)
            head, _, verb = route.path.rpartition("/")
            if head.endswith("/" + TASK_ID) and "{" not in verb:
                prefix = head.removesuffix(TASK_ID)
                self.by_verb[verb] = lane
            elif "{" not in route.path:
                prefix = head + "/"
                self.exact[route.path] = lane
            else:
                raise TypeError(f"{route.path}: not a path shape the fast lane knows")
            if self.prefix not in ("", prefix):
                raise TypeError(f"{route.path}: the lease routes share one prefix")
            self.prefix = prefix

    def match(self, path: str) -> tuple[Lane, str | None] | None:
        lane = self.exact.get(path)
        if lane is not None:
            return lane, None
        if not path.startswith(self.prefix):
            return None
        task_id, slash, verb = path[len(self.prefix) :].partition("/")
        if not slash or not task_id:
            return None
        lane = self.by_verb.get(verb)
        return None if lane is None else (lane, unescaped(task_id))


class LeaseFastLane:
    """The lease verbs' plain requests answered here, in front of the app; all else passed on to
    `app` (the whole FastAPI stack). The guards are the app's own middlewares, asked first: a
    request any of them would refuse goes on unread, so it is refused where it always was."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        routes: list[BaseRoute],
        guard: BrowserGuard,
        auth: BearerAuth,
        body_limit: int,
    ) -> None:
        self.app = app
        self.lanes = LeaseLanes(routes)
        self.guard = guard
        self.auth = auth
        self.body_limit = body_limit
        # Lease requests answered here, and lease requests handed to FastAPI to judge: what
        # the tests read to know which side answered.
        self.answered = 0
        self.handed_on = 0
        # Of the answered: how many ran on the event loop, and how many waited on the pool.
        self.inline = 0
        self.pooled = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = self.lanes.match(scope["path"]) if scope["type"] == "http" else None
        if found is None or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        lane, task_id = found
        json_typed = _sized_json(scope["headers"], self.body_limit)
        identity = None if json_typed is None else self.auth.admitted(scope)
        if identity is None or self.guard.refusal(scope) is not None:
            self.handed_on += 1
            await self.app(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client left: nobody to answer
                return
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        plain, parsed = _validated(lane, body, bool(json_typed))
        if not plain:  # FastAPI judges it, from the same bytes
            self.handed_on += 1
            await self.app(scope, _replay(body, receive), send)
            return
        self.answered += 1
        state = scope.setdefault("state", {})
        state["identity"] = identity
        state["envelope"] = lane.envelope  # for an answer given outside the lane (shutdown's)
        service: Service = scope["app"].state.service
        arguments: dict[str, Any] = {"who": service.caller_for(scope), "body": parsed}
        if lane.takes_task_id:
            arguments["task_id"] = task_id
        pooled = False
        try:
            try:
                # The common case, when the board's write turn is free: answered right here, no
                # thread hop (a claim's server CPU 0.32 -> 0.16 ms). Else on the lease pool.
                with service.board.at_once():
                    response = lane.endpoint(**arguments)
            except WouldWait:
                pooled = True
                response = await asyncio.get_running_loop().run_in_executor(
                    service.lease_pool, partial(lane.endpoint, **arguments)
                )
        except BoardError as error:
            response = board_error_reply(error, lane.envelope)
        except StoreError as error:  # the database went away: the board's refusal for it
            response = board_error_reply(error.refusal(), lane.envelope)
        except Forbidden as error:
            response = forbidden_reply(error, lane.envelope)
        except Exception as error:  # as the app's handlers answer it: a 500, logged
            response, unexpected = await failure_reply(scope, error)
            await response(scope, receive, send)
            if unexpected:
                raise  # as Starlette's outermost middleware does, for the server to log
            return
        if pooled:
            self.pooled += 1
        else:
            self.inline += 1
        await response(scope, receive, send)


def _sized_json(headers: list[tuple[bytes, bytes]], limit: int) -> bool | None:
    """None for a body of no declared length within `limit` (chunked: it goes to the app unread,
    where the body cap counts it; over the cap or unreadable: the cap refuses it) or one with a
    `Content-Encoding` (the cap inflates or refuses it), else whether it is declared
    `application/json`: FastAPI reads no other body as JSON (not even one without a content
    type) and refuses it as not an object."""
    chunked = False
    json_typed: bool | None = None
    for key, value in headers:
        if key in (b"transfer-encoding", b"content-encoding"):
            chunked = True
        elif key == b"content-type":
            this = value.partition(b";")[0].strip().lower() == b"application/json"
            json_typed = this if json_typed is None else json_typed and this
    length = declared_length(headers)  # as the cap reads it
    if chunked or length is None or length > limit:
        return None
    return bool(json_typed)


def _validated(lane: Lane, body: bytes, json_typed: bool) -> tuple[bool, BaseModel | None]:
    """(True, the body FastAPI would hand the endpoint: a model, or None for an absent optional
    body), or (False, None) when FastAPI must judge the body itself."""
    if not body:
        return not lane.body_required, None
    if not json_typed:
        return False, None
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        return False, None
    if not isinstance(document, dict):
        return False, None
    try:
        return True, lane.model.model_validate(document)
    except ValueError:  # pydantic's ValidationError
        return False, None


def _replay(body: bytes, receive: Receive) -> Receive:
    """`receive` for the app behind: the body already read, then the connection's own."""
    pending = [cast(Message, {"type": "http.request", "body": body, "more_body": False})]

    async def replayed() -> Message:
        return pending.pop() if pending else await receive()

    return replayed
