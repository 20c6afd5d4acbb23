"""The dependencies routes share (FastAPI's bigger-applications `dependencies` module): the
caller, resolved once per request from the app's `Service`."""

from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.exceptions import RequestValidationError

from .acting import Caller
from .envelopes import other_encoding
from .service import Service

# A query parameter given twice with different values has two readings (FastAPI takes the last):
# `?status=todo&status=done` lists done tasks alone, `?ready=true&ready=false` all of them.
REPEATED = "sent more than once with different values: send it once"


def _one_value_each(request: Request) -> None:
    """The 400 `invalid query` for a parameter sent with two values; the same value twice is
    that value (as `Last-Event-ID` is read)."""
    seen: dict[str, str] = {}
    twice: list[str] = []
    for name, value in request.query_params.multi_items():
        if seen.setdefault(name, value) != value and name not in twice:
            twice.append(name)
    if twice:
        raise RequestValidationError(
            [{"type": "value_error", "loc": ("query", name), "msg": REPEATED} for name in twice]
        )


# The methods whose JSON body a route reads.
BODY_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})


async def _utf8_only(request: Request) -> None:
    """A JSON body `json.loads` read in another encoding than UTF-8 (UTF-16, UTF-32) is refused
    as one that does not decode is (`handlers.py`). The route read the body already: this one
    is the request's cached copy."""
    if "json" not in request.headers.get("content-type", "").lower():
        return
    body = await request.body()
    why = other_encoding(body) if body else None
    if why is not None:
        raise HTTPException(400, why)


async def caller(request: Request) -> Caller:
    """The dependency every route takes: who calls, and the board. Async because it does no
    I/O: a sync dependency would cost every request a trip through the thread pool."""
    if b"&" in request.scope["query_string"]:  # one parameter cannot be repeated
        _one_value_each(request)
    if request.scope["method"] in BODY_METHODS:
        await _utf8_only(request)
    service: Service = request.app.state.service
    return service.caller(request)


# A route's `who: Who` parameter: the caller, resolved once per request by `caller`.
Who = Annotated[Caller, Depends(caller)]
