"""Request bodies are capped at 2 MB (seed 003's `express.json({limit: '2mb'})`), refused with 413
before they are read whole: a declared `Content-Length` over the cap is refused at once, and a body
without one (chunked) is counted as it streams and cut off the moment it passes the cap. A body
within its declared length needs no counting (the HTTP server reads exactly that many bytes), so
it passes without the counting wrappers every request used to pay for.

A body's `Content-Encoding` is honoured as `express.json` honours it: `gzip` and `deflate` are
inflated as they stream (the cap counts the inflated bytes, so a small bomb is cut off at 2 MB),
`identity` is the body as sent, and any other coding is refused with 415 before it is read. A
coding is never ignored: that read a `br` body's bytes as JSON, and a gzip one as a parse error."""

import json
import zlib
from collections.abc import Iterable

from starlette.exceptions import HTTPException

from boardlib.errors import ServerReason

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


# The codings a body is inflated from (`x-gzip` is gzip's old name); zlib reads either header
# with this window (32: find the gzip or zlib header; 15: the largest window).
INFLATED_CODINGS = frozenset({"gzip", "x-gzip", "deflate"})
INFLATE_WBITS = 32 + 15
IDENTITY = "identity"
NOT_INFLATING = "the body does not inflate as its Content-Encoding says"
ACCEPTED_CODINGS = (IDENTITY, "deflate", "gzip")


def content_coding(headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    """The coding a request declares for its body, lowercased (several stacked codings, as
    `gzip, br`, are kept whole: none is taken); None when there is none, or only `identity`."""
    codings: list[str] = []
    for key, value in headers:
        if key == b"content-encoding":
            codings += [part.strip().lower() for part in value.decode("latin-1").split(",")]
    codings = [coding for coding in codings if coding and coding != IDENTITY]
    return ", ".join(codings) or None


def unsupported_coding_body(coding: str) -> bytes:
    return json.dumps(
        {
            "error": f"unsupported content encoding {coding!r}: send the body as "
            f"{', '.join(ACCEPTED_CODINGS)}",
            "reason": ServerReason.UNSUPPORTED_ENCODING.value,
            "encoding": coding,
            "accepted": list(ACCEPTED_CODINGS),
        },
        separators=(",", ":"),
    ).encode()


class BodyTooLarge(HTTPException):
    """Raised from `receive` when a streamed body passes the cap. An `HTTPException`, because
    FastAPI turns any other exception met while reading a body into a 400."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, TOO_LARGE_MESSAGE)
        self.limit = limit


def too_large(limit: int) -> dict[str, object]:
    """The 413's JSON, from the cap or from the route that was reading the body alike."""
    return {"error": TOO_LARGE_MESSAGE, "reason": ServerReason.TOO_LARGE.value, "limit": limit}


def too_large_body(limit: int) -> bytes:
    return json.dumps(too_large(limit), separators=(",", ":")).encode()


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
        streamed = header(scope, b"transfer-encoding") is not None
        coding = content_coding(scope["headers"]) if declared or streamed else None
        if coding is not None and coding not in INFLATED_CODINGS:
            await send_json(send, 415, unsupported_coding_body(coding), (b"connection", b"close"))
            return
        if coding is None and declared is not None and not streamed:
            await self.app(scope, receive, send)  # read to its declared length: nothing to count
            return
        seen = 0
        started = False
        inflater = None if coding is None else zlib.decompressobj(INFLATE_WBITS)

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                body = message.get("body", b"")
                if inflater is not None:
                    body = _inflate(inflater, body, self.limit - seen, message.get("more_body"))
                    message = {**message, "body": body}
                seen += len(body)
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


def _inflate(inflater: "zlib._Decompress", data: bytes, room: int, more: object) -> bytes:
    """The next inflated part of a body: at most one byte past `room` (the cap then refuses it),
    the stream checked whole at its end. A body that does not inflate is the 400 a body that
    cannot be read gets, in the route's envelope (FastAPI passes an HTTPException on)."""
    try:
        out = inflater.decompress(data, max(room, 0) + 1)
        if not more and len(out) <= room:
            out += inflater.flush()
    except zlib.error as error:
        raise HTTPException(400, f"{NOT_INFLATING}: {error}") from error
    if not more and len(out) <= room and not (inflater.eof and not inflater.unused_data):
        why = "bytes after its end" if inflater.unused_data else "cut short"
        raise HTTPException(400, f"{NOT_INFLATING}: {why}")
    return out


async def _refuse(send: Send, limit: int) -> None:
    await send_json(send, 413, too_large_body(limit), (b"connection", b"close"))
