"""A request body's `Content-Encoding` is honoured as seed 003's `express.json` honours it, on the
whole stack and on the lease verbs' fast lane alike. It used to be ignored: a `br` body's bytes
were read as JSON and written, and a gzip body was a 400 "error parsing the body"."""

import gzip
import json
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from kanban.http.limits import BODY_LIMIT

from .conftest import Api, serving

JSON = {"Content-Type": "application/json"}


@pytest.fixture
def api(tmp_path: Path, board_path: Path) -> Iterator[Api]:
    with serving(tmp_path, db=board_path) as opened:
        yield opened


def _packed(document: dict[str, object], coding: str) -> bytes:
    raw = json.dumps(document).encode()
    return gzip.compress(raw) if coding == "gzip" else zlib.compress(raw)


@pytest.mark.parametrize("coding", ["gzip", "deflate"])
def test_a_gzip_or_deflate_body_is_inflated(api: Api, coding: str) -> None:
    headers = {**JSON, "Content-Encoding": coding}
    made = api.client.post(
        "/api/board", content=_packed({"title": "packed"}, coding), headers=headers
    )
    assert made.status_code == 200, made.text
    task = made.json()["task"]
    assert api.stored(task["id"]).title == "packed"
    claimed = api.client.post(  # a lease verb: the fast lane hands it to the cap to inflate
        f"/api/board/{task['id']}/claim",
        content=_packed({"assigneeAgentId": "alice"}, coding),
        headers=headers,
    )
    assert claimed.status_code == 200, claimed.text
    assert api.stored(task["id"]).assignee_agent_id == "alice"


@pytest.mark.parametrize("path", ["/api/board", "/api/board/claim-next"])
def test_a_body_in_another_coding_is_415_unread_and_writes_nothing(api: Api, path: str) -> None:
    api.create("waiting")
    before = api.fingerprint()
    body = {"title": "br?"} if path == "/api/board" else {"agent": "alice"}
    answer = api.client.post(
        path, content=json.dumps(body).encode(), headers={**JSON, "Content-Encoding": "br"}
    )
    assert answer.status_code == 415, answer.text
    assert answer.json()["reason"] == "unsupported_encoding"
    assert answer.json()["encoding"] == "br"
    assert api.fingerprint() == before


def test_a_body_that_does_not_inflate_is_400_and_writes_nothing(api: Api) -> None:
    before = api.fingerprint()
    gzip_headers = {**JSON, "Content-Encoding": "gzip"}
    for body in (b'{"title": "not gzip"}', gzip.compress(b'{"title": "cut"}')[:12]):
        answer = api.client.post("/api/board", content=body, headers=gzip_headers)
        assert answer.status_code == 400, answer.text
        assert answer.json()["error"] == "invalid body"
        assert "does not inflate" in answer.json()["details"]["formErrors"][0]
    assert api.fingerprint() == before


def test_the_cap_counts_the_inflated_body(api: Api) -> None:
    """A few kilobytes that inflate past 2 MB are cut off at the cap, not inflated whole."""
    before = api.fingerprint()
    bomb = gzip.compress(b'{"title": "' + b" " * (BODY_LIMIT * 4) + b'"}')
    assert len(bomb) < BODY_LIMIT // 100
    answer = api.client.post(
        "/api/board", content=bomb, headers={**JSON, "Content-Encoding": "gzip"}
    )
    assert answer.status_code == 413, answer.text
    assert api.fingerprint() == before
