"""`GET /api/board/events`: the board's event log after a cursor, as a JSON page or, with
`Accept: text/event-stream`, as a live Server-Sent Events stream (a comment every 15 s keeps
proxies from closing it; reconnecting with `Last-Event-ID` resumes where it stopped). At shutdown
the stream ends at once with a comment and a `retry:` hint, so the client reconnects (to this
server once it is back, or to another behind the same address) instead of holding the old one.

`Last-Event-ID` is checked before the stream starts, so a refusal is an ordinary answer: a value
that is not a seq is the 400 a bad `since` gets (the same bounds, the same message), and an id
above the board's newest event, which this board never sent, is a 409 naming the newest seq."""

import json
import logging
from collections.abc import AsyncIterator
from typing import Annotated

from anyio import to_thread
from fastapi import APIRouter, Header, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BeforeValidator, Field, TypeAdapter, ValidationError
from sse_starlette import EventSourceResponse, ServerSentEvent
from sse_starlette.sse import SendTimeoutError
from starlette.types import Receive, Scope, Send

from boardlib import Board
from boardlib import validation as validate
from boardlib.errors import BoardError, Reason

from ..accept import STREAM, wants_stream
from ..deps import Who
from ..envelopes import INVALID_QUERY, envelope, error_responses
from ..replies import EventPage, reply

router = APIRouter(prefix="/api/board", tags=["events"])

log = logging.getLogger(__name__)

RECONNECT_MS = 1000  # the `retry:` hint of a stream the server ends at shutdown
# sse-starlette also ends streams on shutdown (it watches uvicorn's exit flag every 0.5 s); this
# long it lets ours finish on its own, goodbye included, before it cancels them.
SHUTDOWN_GRACE_S = 1.0
# Under `kanban serve` the connection of a client that takes nothing for --sse-send-timeout is
# dropped by the server's protocol (stalls.py). This per-send timeout is the backstop for a
# server without that guard, far longer: one send of a slow reader that still takes bytes may
# wait seconds (until the transport's buffer is down to its low-water mark), and must not end it.
SEND_BACKSTOP = 6

# A cursor is a seq: `since` and `Last-Event-ID` take the same whole numbers, 0 to 2**63 - 1 (the
# store's 64-bit integers), parsed alike: ASCII digits only (pydantic alone takes "+5", "1_0" and
# "5.0" for 5, 10 and 5).
SEQ_MIN, SEQ_END = 0, 2**63


def _seq_digits(value: object) -> object:
    """A seq as text: ASCII digits, within the bound (said exactly: pydantic's own message
    rounds 2**63 through a float)."""
    if isinstance(value, str):
        if not (value.isascii() and value.isdigit()):
            raise ValueError("a seq is written in ASCII digits, nothing else")
        if int(value) >= SEQ_END:
            raise ValueError(f"a seq is at most {SEQ_END - 1}")
    return value


SEQ = TypeAdapter(Annotated[int, BeforeValidator(_seq_digits), Field(ge=SEQ_MIN, lt=SEQ_END)])
LAST_EVENT_ID = "Last-Event-ID"
TWO_IDS = "sent more than once with different values: send the last id read, once"


@router.get(
    "/events",
    response_model=None,
    responses={
        200: {
            "model": EventPage,
            "content": {STREAM: {"schema": {"type": "string"}}},
            "description": "A page of events (JSON), or a live stream with "
            "`Accept: text/event-stream`: each event is `id: <seq>`, `data: <event JSON>`.",
        },
        **error_responses("plain", 409),
    },
    summary="The change feed: events after a cursor, paged or streamed live",
)
@envelope("plain", invalid=INVALID_QUERY)
async def events(
    request: Request,
    who: Who,
    since: Annotated[
        int,
        Query(ge=SEQ_MIN, lt=SEQ_END, description="Events after this seq."),
        BeforeValidator(_seq_digits),
    ] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 500,
    task_id: Annotated[
        str | None,
        Query(
            alias="taskId",
            min_length=1,
            max_length=validate.NAME_MAX,
            description="Only this task's events (an id no task has yet: none, until it has).",
        ),
    ] = None,
    accept: Annotated[str | None, Header()] = None,
    last_event_id: Annotated[
        str | None,
        Header(
            alias=LAST_EVENT_ID,
            description="The stream resumes after this seq (the last `id:` read), in place of "
            "`since`: a seq as `since` takes; empty is no id. One above the newest event is 409.",
        ),
    ] = None,
) -> Response:
    # checked here, as the page's read checks it, so the stream refuses it before it starts
    task_id = validate.optional_identifier(task_id, "taskId")
    if wants_stream(",".join(request.headers.getlist("accept"))):
        cursor = since
        resumed = _last_event_id(request.headers.getlist(LAST_EVENT_ID))
        if resumed is not None:
            await _refuse_an_id_ahead(request, who.board, resumed)
            cursor = resumed
        settings = request.app.state.service.settings
        return _Stream(
            _stream(request, cursor, task_id),
            ping=settings.sse_ping_s,
            send_timeout=settings.sse_send_timeout_s * SEND_BACKSTOP,
            headers={"X-Content-Type-Options": "nosniff"},
            shutdown_grace_period=SHUTDOWN_GRACE_S,
        )
    page = await to_thread.run_sync(
        lambda: who.board.events(since=since, task_id=task_id, limit=limit)
    )
    return reply(
        {
            "events": [event.to_json() for event in page],
            "next": page[-1].seq if page else since,
        }
    )


def _last_event_id(values: list[str]) -> int | None:
    """The header's seq, validated exactly as `since` is (a refusal is the same 400, naming the
    header); None when it is absent or empty (SSE's "no last event id"). Sent more than once
    with different values it is refused: taking one of them (FastAPI takes the first) would
    resume from an id the client may not have meant."""
    if len(set(values)) > 1:
        where = ("header", LAST_EVENT_ID)
        raise RequestValidationError([{"type": "value_error", "loc": where, "msg": TWO_IDS}])
    value = values[0] if values else None
    if value is None or not value.strip():
        return None
    try:
        return SEQ.validate_python(value)
    except ValidationError as error:
        raise RequestValidationError(
            [{**item, "loc": ("header", LAST_EVENT_ID)} for item in error.errors(include_url=False)]
        ) from None


async def _refuse_an_id_ahead(request: Request, board: Board, resumed: int) -> None:
    """A `Last-Event-ID` is an id a board sent. One above this board's newest event was sent by
    another (this one was re-created or restored since, or the client moved), and following it
    would skip every event up to it without a word: it is refused, 409, naming the newest.
    Nothing is read when the feed has already seen the log reach the id. On Postgres the newest
    is the safe horizon, which one server process may prove a moment after another served an id
    above it: an id whose event the log holds is followed as usual."""
    if resumed <= request.app.state.service.feed.latest:
        return

    newest = await to_thread.run_sync(board.newest_event_if_ahead, resumed)
    if newest is not None:
        raise BoardError(
            Reason.CONFLICT,
            f"{LAST_EVENT_ID} {resumed} is ahead of this board's newest event (seq {newest}): "
            "it was sent by another board, or this one was re-created or restored since; "
            f"open a new stream without {LAST_EVENT_ID} to read this board's log from the start",
            last_event_id=resumed,
            newest=newest,
        )


class _Stream(EventSourceResponse):
    """A stream that ends, logged once, when its client stops reading: the send that waited
    `send_timeout` is dropped, so a stalled client holds one socket's buffers, never a growing
    queue. It reconnects with the last `id:` it read."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        except SendTimeoutError:
            log.warning(
                "ended the stream of a client that stopped reading: %s", scope.get("client")
            )


async def _stream(request: Request, since: int, task_id: str | None) -> AsyncIterator[object]:
    feed = request.app.state.service.feed
    async for event in feed.follow(since, task_id):
        yield ServerSentEvent(
            id=str(event.seq), data=json.dumps(event.to_json(), separators=(",", ":"))
        )
    yield ServerSentEvent(comment="the server is shutting down: reconnect", retry=RECONNECT_MS)


__all__ = ["JSONResponse", "router"]
