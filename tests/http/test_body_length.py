"""One reading of a request's declared body length, shared by the body cap (`BodyLimit`) and the
lease verbs' fast lane, which each once parsed `Content-Length` their own way: the cap took
`+5`, `-5`, ` 5` and `5_0` (`int()` does) where the lane refused them, and a value of thousands
of digits made the lane raise (`int()` refuses past 4,300) where the cap counted the body."""

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from kanban.http.auth import Message, Receive, Scope, Send
from kanban.http.fastpath import _sized_json
from kanban.http.limits import (
    BODY_LIMIT,
    LENGTH_DIGITS,
    OVER_ANY_CAP,
    BodyLimit,
    declared_length,
    too_large,
)

from .conftest import serving

JSON = (b"content-type", b"application/json")
HUGE = b"9" * 5000

CASES = [
    ([b"5"], 5),
    ([b"0005"], 5),
    ([b"5", b"5"], 5),  # the same length twice is that length
    ([b"5", b"7"], None),  # two lengths: neither is trusted
    ([b"+5"], None),
    ([b"-5"], None),
    ([b" 5"], None),
    ([b"5_0"], None),
    ([b"0x5"], None),
    (["\N{ARABIC-INDIC DIGIT FIVE}".encode()], None),  # a digit, but not an ASCII one
    ([b""], None),
    ([], None),
    ([b"9" * LENGTH_DIGITS], int("9" * LENGTH_DIGITS)),
    ([HUGE], OVER_ANY_CAP),
]


@pytest.mark.parametrize(("values", "length"), CASES)
def test_the_declared_length_is_digits_only_and_one_value(
    values: list[bytes], length: int | None
) -> None:
    assert declared_length([(b"content-length", value) for value in values]) == length


def _through_the_cap(headers: list[tuple[bytes, bytes]]) -> int | None:
    """The status the cap answers with, or None when it passed the request on."""
    sent: list[Message] = []

    async def app(_scope: Scope, _receive: Receive, _send: Send) -> None:
        return None

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    scope: Scope = {"type": "http", "method": "POST", "path": "/", "headers": headers}
    asyncio.run(BodyLimit(app, limit=BODY_LIMIT)(scope, receive, send))
    return int(sent[0]["status"]) if sent else None


@pytest.mark.parametrize(("values", "length"), [*CASES, ([str(BODY_LIMIT + 1).encode()], None)])
def test_the_cap_and_the_fast_lane_read_it_alike(values: list[bytes], length: int | None) -> None:
    headers = [(b"content-length", value) for value in values]
    declared = declared_length(headers)
    over = declared is not None and declared > BODY_LIMIT
    assert _through_the_cap(headers) == (413 if over else None)
    # the lane takes a body of a trusted length within the cap; any other goes to the app
    taken = _sized_json([*headers, JSON], BODY_LIMIT)
    assert (taken is not None) == (declared is not None and not over)


@pytest.mark.parametrize("path", ["/api/board", "/api/board/claim-next"])
def test_a_body_over_the_cap_gets_one_413_declared_or_streamed(tmp_path: Path, path: str) -> None:
    """The cap refused a declared length with the limit in its JSON, but a streamed body cut off
    while the route read it got a 413 without it: one refusal, two shapes."""
    big = b'{"title": "' + b"x" * BODY_LIMIT + b'"}'

    def streamed() -> Iterator[bytes]:  # no Content-Length: httpx sends it chunked
        for start in range(0, len(big), 65536):
            yield big[start : start + 65536]

    with serving(tmp_path) as api:
        before = api.fingerprint()
        answers = [
            api.client.post(path, content=body, headers={"Content-Type": "application/json"})
            for body in (big, streamed())
        ]
        assert [answer.status_code for answer in answers] == [413, 413]
        assert answers[0].json() == answers[1].json() == too_large(BODY_LIMIT)
        assert api.fingerprint() == before
