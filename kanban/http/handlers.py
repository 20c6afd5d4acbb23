"""Failures -> the seed's envelopes: FastAPI's exception handlers, one per kind of failure, each
answering in the envelope the matched route declared (`@envelope`), so it applies even to a
failure raised before the endpoint runs (a body that is not JSON). `app.py` installs
`EXCEPTION_HANDLERS` as they are listed."""

import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException

from boardlib.errors import BoardError, Reason, ServerReason
from boardlib.inert import inert
from boardlib.store.base import StoreError
from boardlib.worktrees import GitFailure

from .acting import Forbidden
from .envelopes import (
    ENVELOPE_ATTRIBUTE,
    INVALID_QUERY,
    PLAIN,
    TOO_DEEP,
    Envelope,
    bad_byte,
    flattened,
    invalid_body,
)
from .limits import BodyTooLarge, too_large
from .replies import board_error_reply, forbidden_reply, reply, shutting_down_reply

log = logging.getLogger("kanban.http")


def _envelope(request: Request) -> Envelope:
    chosen = getattr(request.state, "envelope", None)
    if isinstance(chosen, Envelope):
        return chosen
    route = request.scope.get("route")
    endpoint = getattr(route, "endpoint", None)
    spec = getattr(endpoint, ENVELOPE_ATTRIBUTE, None)
    return spec if isinstance(spec, Envelope) else PLAIN


async def _board_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, BoardError)
    return board_error_reply(error, _envelope(request))


async def _store_error(request: Request, error: Exception) -> JSONResponse:
    """The database went away under a running server (a PostgreSQL restart): the board's
    `database_unavailable` (503) in the route's envelope, not an unexpected 500."""
    assert isinstance(error, StoreError)
    return board_error_reply(error.refusal(), _envelope(request))


async def _forbidden(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, Forbidden)
    return forbidden_reply(error, _envelope(request))


# FastAPI reads a body sent without `Content-Type: application/json` as no object at all, and
# said "Input should be a valid dictionary or object to extract fields from".
NOT_JSON_TYPE = "the body must be a JSON object sent with Content-Type: application/json"


# A `\ud800` escape with no other half decodes to no text: pydantic said "Input should be a
# valid string, unable to parse raw data as a unicode string", though the input was a string.
LONE_SURROGATE = (
    "not text: a \\u escape in \\ud800-\\udfff is half of a pair and needs its other half"
)


def _message(item: dict[str, Any]) -> str:
    if item.get("type") == "string_unicode":
        return LONE_SURROGATE
    text = str(item.get("msg", "invalid"))
    return text.removeprefix("Value error, ")


def _malformed(item: dict[str, Any], path: list[Any]) -> str:
    """Python's JSON error names the place in a suffix FastAPI drops ("Invalid control character
    at"), leaving a dangling word; the place is the item's `loc` (a character offset)."""
    text = str(item.get("ctx", {}).get("error", "cannot parse")).removesuffix(" at")
    where = path[0] if path and isinstance(path[0], int) else None
    return f"malformed JSON: {text}" + ("" if where is None else f" (at character {where})")


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
            form.append(_malformed(item, path))
            continue
        if item.get("type") == "missing" and not path and where == "body":
            form.append("a JSON object body is required")
            continue
        key = inert(".".join(str(part) for part in path))  # a field the caller made up
        if key:
            fields.setdefault(key, []).append(_message(item))
        else:
            form.append(_message(item))
    text = _envelope(request).invalid if in_body else INVALID_QUERY
    return reply(invalid_body(text, flattened(form, fields)), 400)


async def _http_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, HTTPException)
    if isinstance(error, BodyTooLarge):  # met while the route read the body: the cap's answer
        return reply(too_large(error.limit), 413)
    if error.status_code == 400:  # a body FastAPI could not read at all
        cause = error.__cause__  # FastAPI raises its 400 from what failed
        why = (
            bad_byte(cause)
            if isinstance(cause, UnicodeDecodeError)
            else TOO_DEEP
            if isinstance(cause, RecursionError)
            else str(error.detail)
        )
        details = flattened([why], {})
        return reply(invalid_body(_envelope(request).invalid, details), 400)
    text = {404: "not found", 405: "method not allowed"}.get(error.status_code, str(error.detail))
    path = request.url.path
    if error.status_code == 404 and len(path) > 1 and path.endswith("/"):
        text = f"not found: no route ends in '/' (did you mean {path.rstrip('/')}?)"
    headers = dict(error.headers or {})
    if error.status_code == 405:
        headers["Allow"] = ", ".join(_allowed(request))
    reason = ROUTING_REASONS.get(error.status_code)
    answer = {"error": text} if reason is None else {"error": text, "reason": reason}
    return reply(answer, error.status_code, headers)


# A request no route takes is refused with a reason like any other: a path no route has, or a
# method its path does not take (the answer's `Allow` names those it does).
ROUTING_REASONS: dict[int, str] = {
    404: Reason.NOT_FOUND.value,
    405: ServerReason.METHOD_NOT_ALLOWED.value,
}


def _allowed(request: Request) -> list[str]:
    """Every method some route takes at this path (RFC 9110's `Allow`): each method is a route of
    its own, and Starlette names only the first that matched the path. HEAD goes with GET
    (`head.py`)."""
    path = request.url.path
    methods: set[str] = set()
    for route in request.app.router.routes:
        regex = getattr(route, "path_regex", None)
        if regex is not None and regex.match(path):
            methods |= set(getattr(route, "methods", None) or ())
    if "GET" in methods:
        methods.add("HEAD")
    return sorted(methods)


async def _git_failure(_request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, GitFailure)
    return reply(error.to_dict(), 500)


async def _unexpected(request: Request, error: Exception) -> JSONResponse:
    log.error("unexpected failure on %s %s", request.method, request.url.path, exc_info=error)
    return reply({"error": f"internal error ({type(error).__name__})", "reason": "unexpected"}, 500)


Handler = Callable[[Request, Exception], Awaitable[JSONResponse]]

# In the order app.py installs them; `Exception` last, the catch-all (500, logged).
EXCEPTION_HANDLERS: tuple[tuple[type[Exception], Handler], ...] = (
    (BoardError, _board_error),
    (StoreError, _store_error),
    (Forbidden, _forbidden),
    (RequestValidationError, _invalid_request),
    (HTTPException, _http_error),
    (GitFailure, _git_failure),
    (Exception, _unexpected),
)


async def failure_reply(scope: MutableMapping[str, Any], error: Exception) -> tuple[Response, bool]:
    """The answer the app's handlers give `error` raised by a request answered ahead of the app
    (the fast lane), the handler found by the error's class as Starlette finds it; and whether it
    was the catch-all, whose failure Starlette raises again once answered, for the server's log."""
    handlers = dict(EXCEPTION_HANDLERS)
    kind = next(kind for kind in type(error).__mro__ if kind in handlers)
    return await handlers[kind](Request(scope), error), kind is Exception


def cut_short_reply(scope: MutableMapping[str, Any]) -> Response:
    """The answer to a request that shutdown cut off at the --graceful deadline, in the envelope
    of the route it reached (a request not yet routed gets the plain one)."""
    return shutting_down_reply(_envelope(Request(scope)))
