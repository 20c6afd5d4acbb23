"""A request uvicorn's parser refuses before the app sees it (a `Content-Length` that is not one
number, a `Transfer-Encoding` other than chunked alone, a broken chunked body, a bad request line or
header) is answered with seed 003's 400 envelope by the real `kanban serve`. It used to be
uvicorn's own `text/plain` "Invalid HTTP request received.", which a client of the API cannot
read as a refusal."""

import gzip
import json
import socket
from collections.abc import Iterator

import pytest

from boardlib.errors import Reason
from kanban.http.envelopes import INVALID_REQUEST

from .test_serve import Served, kanban_serve

pytestmark = pytest.mark.slow  # one real server for the module

HEAD = b"POST /api/board HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
A_TASK = b'{"title": "read as if it were not gzip"}'
GZIPPED = gzip.compress(A_TASK, mtime=0)


def chunked(body: bytes) -> bytes:
    return b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)


MALFORMED = {
    "length not a number": HEAD + b"Content-Length: abc\r\n\r\n{}",
    "two lengths": HEAD + b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}x",
    "length and chunked": HEAD
    + b"Transfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
    "gzip transfer coding": HEAD + b"Transfer-Encoding: gzip\r\n\r\n{}",
    # httptools read these bodies as chunked, undecoded: the second one made a task
    "gzip then chunked": HEAD + b"Transfer-Encoding: gzip, chunked\r\n\r\n" + chunked(GZIPPED),
    "gzip and chunked headers": HEAD
    + b"Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"
    + chunked(A_TASK),
    "broken chunk size": HEAD + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
    "broken after a chunk": HEAD + b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\nzz\r\n",
    "bad request line": b"GARBAGE\r\n\r\n",
    "bad header name": b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header: 1\r\n\r\n",
}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with kanban_serve(tmp_path_factory.mktemp("malformed")) as server:
        yield server


def exchange(served: Served, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send `request` raw and read until the server closes: the status, headers and body."""
    host, port = served.url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, value in (x.split(":", 1) for x in lines)}
    return int(status_line.split()[1]), headers, body


@pytest.mark.parametrize("case", MALFORMED)
def test_a_request_the_parser_refuses_gets_the_envelope(served: Served, case: str) -> None:
    status, headers, body = exchange(served, MALFORMED[case])
    assert status == 400, body
    assert headers["content-type"] == "application/json", body
    assert headers["connection"] == "close"
    assert int(headers["content-length"]) == len(body)
    answer = json.loads(body)
    assert answer["error"] == INVALID_REQUEST
    assert answer["reason"] == Reason.INVALID_INPUT
    assert answer["details"]["fieldErrors"] == {}
    [why] = answer["details"]["formErrors"]
    assert why.startswith("not a valid HTTP/1.1 request: "), why


def test_the_board_is_untouched_and_the_server_still_answers(served: Served) -> None:
    for request in MALFORMED.values():
        exchange(served, request)
    status, _, body = exchange(
        served, b"GET /api/board HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    assert status == 200
    assert json.loads(body) == {"tasks": []}
