"""Seed 003's error envelopes, and which route answers in which.

`reason` (`{ok: false, error: <reason>}`), `message` (`{ok: false, error: <message>}`) or `plain`
(`{error: <message>}`), each with the board's reason, a message and the details in camelCase. A
route declares its envelope with `@envelope(...)`; the exception handlers read it from the matched
route. The shapes: docs/architecture.md#http-envelopes
"""

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, create_model

from boardlib.errors import HTTP_STATUS, BoardError, Reason, ServerReason
from boardlib.naming import camel

Style = Literal["reason", "message", "plain"]
F = TypeVar("F", bound=Callable[..., Any])

RETRY_AFTER_S = 1
INVALID_BODY = "invalid body"
INVALID_HANDOFF = "invalid handoff"
INVALID_QUERY = "invalid query"
INVALID_REQUEST = "invalid request"
RESERVED_KEYS = frozenset({"ok", "error", "reason", "message", "details"})


def status_of(error: BoardError) -> int:
    return HTTP_STATUS.get(error.reason, 500)


@dataclass(frozen=True, slots=True)
class Envelope:
    """How one route answers a refusal: its style, the seed's fixed 404 text (when it has one)
    and the 400 text for a body that fails validation."""

    style: Style = "plain"
    not_found: str | None = None
    invalid: str = INVALID_BODY
    # The refusals this route answers as `{ok: false, error: <text>}` whatever its style, in the
    # seed's words: keyed by the board's reason (the deps route's `task_dependency_cycle`), or
    # by HTTP status for every reason answered with it (the claim's 409 is `conflict`, whichever
    # rule refused it: the seed names no other). A reason's entry wins over its status's.
    ok_forms: tuple[tuple[Reason | int, str], ...] = ()

    def seed_word(self, error: BoardError) -> str | None:
        forms = dict(self.ok_forms)
        return forms.get(error.reason, forms.get(status_of(error)))

    def words(self) -> dict[int, tuple[str, ...]]:
        """The `error` values of each status keyed in `ok_forms` (its own word, and those of the
        reasons keyed that answer with it): what the route's OpenAPI document enumerates."""
        words = {key: [word] for key, word in self.ok_forms if isinstance(key, int)}
        for key, word in self.ok_forms:
            if isinstance(key, Reason) and HTTP_STATUS.get(key) in words:
                words[HTTP_STATUS[key]].append(word)
        return {status: tuple(sorted(set(spelled))) for status, spelled in words.items()}

    def style_for(self, error: BoardError) -> Style:
        return "reason" if self.seed_word(error) is not None else self.style

    def error_text(self, error: BoardError) -> str:
        spelled = self.seed_word(error)
        if spelled is not None:
            return spelled
        if self.style == "reason":
            return error.reason.value
        if error.reason is Reason.NOT_FOUND and self.not_found is not None:
            return self.not_found
        return error.message


PLAIN = Envelope()
ENVELOPE_ATTRIBUTE = "__kanban_envelope__"


def envelope(
    style: Style = "plain",
    *,
    not_found: str | None = None,
    invalid: str = INVALID_BODY,
    ok_forms: dict[Reason | int, str] | None = None,
) -> Callable[[F], F]:
    """Declare the refusal envelope of the decorated endpoint."""
    return declare(Envelope(style, not_found, invalid, tuple((ok_forms or {}).items())))


def declare(spec: Envelope) -> Callable[[F], F]:
    """Declare `spec`, an envelope a route also chooses per request (`request.state.envelope`)."""

    def mark(endpoint: F) -> F:
        setattr(endpoint, ENVELOPE_ATTRIBUTE, spec)
        return endpoint

    return mark


# -- bodies -----------------------------------------------------------------------------------


def details_of(error: BoardError) -> dict[str, Any]:
    return {
        key: value
        for key, value in error.to_dict().items()
        if key not in RESERVED_KEYS and key not in ("field",)
    }


def refusal_body(error: BoardError, spec: Envelope) -> dict[str, Any]:
    text = spec.error_text(error)
    body: dict[str, Any] = {"error": text}
    if spec.style_for(error) != "plain":
        body = {"ok": False, **body}
    body["reason"] = error.reason.value
    if text != error.message:
        body["message"] = error.message
    body.update(details_of(error))
    return body


def flattened(form: list[str], fields: dict[str, list[str]]) -> dict[str, Any]:
    return {"formErrors": form, "fieldErrors": fields}


def invalid_details(error: BoardError) -> dict[str, Any]:
    """zod-like details for a board `invalid_input`: the field it names, else the whole body."""
    given = error.details.get("details")
    if isinstance(given, dict) and "formErrors" in given:
        return given
    field = error.details.get("field")
    if isinstance(field, str) and field:
        return flattened([], {camel(field): [error.message]})
    return flattened([error.message], {})


def invalid_body(text: str, details: dict[str, Any]) -> dict[str, Any]:
    return {"error": text, "reason": Reason.INVALID_INPUT.value, "details": details}


def malformed_request(why: str) -> dict[str, Any]:
    """A request HTTP's parser refused before any route saw it (`server.py`): no route, so no
    route's envelope, only the seed's 400 shape; `why` is the parser's own fixed text."""
    return invalid_body(INVALID_REQUEST, flattened([f"not a valid HTTP/1.1 request: {why}"], {}))


# JSON over HTTP is UTF-8 (RFC 8259 section 8.1). Python's `json.loads` would read a UTF-16 or
# UTF-32 body (it guesses the encoding from the first bytes), and a byte that is not UTF-8 was
# FastAPI's "There was an error parsing the body", naming neither the cause nor the place.
NOT_UTF8 = "the body is not UTF-8 JSON (JSON over HTTP is UTF-8)"


def bad_byte(error: UnicodeDecodeError) -> str:
    """What `NOT_UTF8` says of a body that does not decode: the first bad byte and its offset."""
    return f"{NOT_UTF8}: byte 0x{error.object[error.start]:02x} at offset {error.start}"


def other_encoding(body: bytes) -> str | None:
    """What `NOT_UTF8` says of a body `json.loads` would read in another encoding, else None: in
    words, not a codec's name ("it reads as utf-16-le" left a caller to decode the jargon)."""
    encoding = json.detect_encoding(body)
    if encoding.startswith("utf-8"):
        return None
    name, _, order = encoding.upper().partition("-")[2].partition("-")
    looks = (
        f"UTF-{name} with a byte-order mark"
        if not order
        else f"UTF-{name} {ENDIANNESS[order]}, without a byte-order mark"
    )
    return f"{NOT_UTF8}: it looks like {looks}; send it encoded as UTF-8"


ENDIANNESS = {"LE": "little-endian", "BE": "big-endian"}

# Python's JSON reader recurses once per array or object level and gives up near the recursion
# limit (about 1,000 levels); FastAPI said "There was an error parsing the body" of it too.
TOO_DEEP = "malformed JSON: nested too deeply to read"


def http_refusal(reason: str, message: str, spec: Envelope, **details: Any) -> dict[str, Any]:
    """A refusal the server makes itself, the board never having judged the request, in the
    route's envelope as the board's own refusals are (`refusal_body`)."""
    body: dict[str, Any] = {"error": reason if spec.style == "reason" else message}
    if spec.style != "plain":
        body = {"ok": False, **body}
    body["reason"] = reason
    if body["error"] != message:
        body["message"] = message
    body.update({camel(key): value for key, value in details.items() if value is not None})
    return body


def forbidden(message: str, spec: Envelope, **details: Any) -> tuple[int, dict[str, Any]]:
    """An identity that may not do this (an agent token naming another agent, a role it does not
    have). HTTP's own refusal: the board never sees the request."""
    return 403, http_refusal(ServerReason.FORBIDDEN.value, message, spec, **details)


# A request still running when shutdown's --graceful budget ran out: cut off, its answer unknown.
SHUTTING_DOWN_MESSAGE = (
    "the server shut down before this request finished: it may or may not have taken effect; "
    "read the board again, or retry once the server is back"
)


# -- OpenAPI: every error shape, declared once -------------------------------------------------


class ValidationDetails(BaseModel):
    """zod's `flatten()`: errors about the body as a whole, and per field (camelCase path)."""

    model_config = ConfigDict(populate_by_name=True)

    form_errors: list[str] = Field(alias="formErrors")
    field_errors: dict[str, list[str]] = Field(alias="fieldErrors")


class InvalidBody(BaseModel):
    """400: the body (or query, or the request's HTTP framing) failed validation; nothing was
    written."""

    error: str = Field(examples=[INVALID_BODY, INVALID_HANDOFF, INVALID_QUERY, INVALID_REQUEST])
    reason: str | None = None
    details: ValidationDetails


class ErrorBody(BaseModel):
    """`{error: string}`, with the board's `reason` and the refusal's details beside it."""

    model_config = ConfigDict(extra="allow")

    error: str
    reason: str | None = None
    message: str | None = None


class Refusal(BaseModel):
    """`{ok: false, error}`: `error` is the reason (claim, status change) or the seed's text."""

    model_config = ConfigDict(extra="allow")

    ok: Literal[False]
    error: str
    reason: str | None = None
    message: str | None = None


DESCRIPTIONS = {
    400: "Invalid body, query or HTTP framing (a Content-Length that is not one number, a "
    "broken chunked body): nothing was written.",
    401: "Missing or unknown Bearer token (only when the server was started with tokens).",
    403: "Refused for this identity (not the holder, builder is not judge, forbidden).",
    404: "Not found.",
    409: "Refused by the board's rules. Data, not a transient error: do not retry.",
    413: "Body over 2 MB (inflated, when it came gzip or deflate): refused before it was read.",
    415: "A body in a Content-Encoding other than identity, gzip or deflate: not read.",
    422: "The task kind needs no worktree (no_isolation).",
    429: "A create cap (depth, live children, root rate) was reached.",
    500: "Unexpected server failure (a failed git command says git_failed).",
    503: "The database stayed busy past the retry budget; nothing was written. Retry after "
    "the Retry-After header's seconds. (`shutting_down`: the server stopped before the request "
    "finished, which may or may not have taken effect.)",
}


@cache
def seed_refusal(words: tuple[str, ...]) -> type[BaseModel]:
    """`Refusal` whose `error` is one of `words` (an `Envelope.words()` entry): one model, and
    one schema name (`RefusalConflict`), per set of words, whichever routes answer it."""
    name = "Refusal" + "".join(camel(word)[:1].upper() + camel(word)[1:] for word in words)
    error: Any = Literal[words]  # Literal[("a", "b")] is Literal["a", "b"]
    made: type[BaseModel] = create_model(name, __base__=Refusal, error=(error, ...))
    made.__doc__ = f"`{{ok: false, error}}`, `error` in seed 003's words: {', '.join(words)}."
    return made


def error_responses(
    declared: Style | Envelope,
    *codes: int,
    either_codes: tuple[int, ...] = (),
) -> dict[int | str, Any]:
    """The `responses=` of a route: its own refusal codes in its style (given as the route's
    `Envelope`, a status it answers in the seed's words is that `seed_refusal`), plus those every
    route shares: 400 (a body, query or path parameter the board refuses: an id is one too),
    401, 403 (a request a browser marks as cross-site), 413, 415, 500, 503."""
    spec = declared if isinstance(declared, Envelope) else Envelope(declared)
    style, words = spec.style, spec.words()
    refusal = Refusal if style != "plain" else ErrorBody
    shared = {400, 401, 403, 413, 415, 500, 503}
    out: dict[int | str, Any] = {}
    for code in sorted(set(codes) | shared):
        if code == 400:
            model: Any = InvalidBody
        elif code in (401, 413, 415, 500, 503):
            model = ErrorBody
        elif code in words:
            model = seed_refusal(words[code])
        else:
            model = refusal
        if code == 403 and style != "plain":  # the board's refusal, or the browser guard's
            model = Refusal | ErrorBody
        elif code in either_codes:  # the route answers in one form or the other (PATCH's 404)
            model = (model if model is not ErrorBody else Refusal) | ErrorBody
        out[code] = {"model": model, "description": DESCRIPTIONS[code]}
    return out
