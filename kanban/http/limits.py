"""Request bodies are capped at 2 MB (seed 003's `express.json({limit: '2mb'})`), refused with 413
before they are read whole: a declared `Content-Length` over the cap is refused at once, and a body
without one (chunked) is counted as it streams and cut off the moment it passes the cap. A body
within its declared length needs no counting (the HTTP server reads exactly that many bytes), so
it passes without the counting wrappers every request used to pay for."""

from collections.abc import Iterable

from starlette.exceptions import HTTPException

from .auth import ASGIApp, Message, Receive, Scope, Send, header, send_json

BODY_LIMIT = 2 * 1024 * 1024
TOO_LARGE_MESSAGE = "request entity too large"
# A declared length of more digits than this is over any cap: it is not parsed (int() refuses
# strings past 4,300 digits), but stands for this many bytes.
LENGTH_DIGITS = 18
OVER_ANY_CAP = 10**LENGTH_DIGITS


def declared_length(headers: Iterable[tuple[bytes, bytes]]) -> int | None:
    """The body length a request declares, read one way by the body cap and the fast lane: its
    `Content-Length`, digits only (RFC 9110's 1*DIGIT: no sign, space or `_`, which `int()`
    would take), the same in every copy of the header. None when there is none or it is not one
    such number: a body whose length is not trusted, counted as it streams."""
    found: bytes | None = None
    for key, value in headers:
        if key == b"content-length":
            if found is not None and value != found:
                return None
            found = value
    if found is None or not found.isdigit():  # bytes: ASCII digits only
        return None
    return int(found) if len(found) <= LENGTH_DIGITS else OVER_ANY_CAP


class BodyTooLarge(HTTPException):
    """Raised from `receive` when a streamed body passes the cap. An `HTTPException`, because
    FastAPI turns any other exception met while reading a body into a 400."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, TOO_LARGE_MESSAGE)
        self.limit = limit


def too_large_body(limit: int) -> bytes:
    return f'{{"error":"{TOO_LARGE_MESSAGE}","reason":"too_large","limit":{limit}}}'.encode()


class BodyLimit:
    """ASGI middleware enforcing `limit` bytes per request body."""

    def __init__(self, app: ASGIApp, limit: int = BODY_LIMIT) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = declared_length(scope["headers"])
        if declared is not None and declared > self.limit:
            await _refuse(send, self.limit)
            return
        if declared is not None and header(scope, b"transfer-encoding") is None:
            await self.app(scope, receive, send)  # read to its declared length: nothing to count
            return
        seen = 0
        started = False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise BodyTooLarge(self.limit)
            return message

        async def tracked(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, tracked)
        except BodyTooLarge:
            if not started:
                await _refuse(send, self.limit)


async def _refuse(send: Send, limit: int) -> None:
    await send_json(send, 413, too_large_body(limit), (b"connection", b"close"))
