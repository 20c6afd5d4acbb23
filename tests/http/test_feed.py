"""The change feed (a JSON page after a cursor, or a live SSE stream resumable with Last-Event-ID),
the health probes, and the body limits, against a real uvicorn on a free loopback port."""

import asyncio
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from boardlib import Board, BoardConfig
from kanban.http.app import ServerSettings, create_app
from kanban.http.routes.events import TWO_IDS
from tests.cli.conftest import Kanban
from tests.http.conftest import Live, live_server, serving


@pytest.fixture
def live(tmp_path: Path, board_path: Path) -> Iterator[Live]:
    with live_server(tmp_path, board_path, sse_ping_s=0.5, feed_poll_s=0.05) as server:
        yield server


def read_sse(
    response: httpx.Response, want: int, timeout_s: float = 20
) -> tuple[list[dict], list[str]]:
    """Read `want` events (and the comments seen meanwhile) from a streaming SSE response."""
    events: list[dict] = []
    comments: list[str] = []
    current: dict[str, Any] = {}
    deadline = time.monotonic() + timeout_s
    for line in response.iter_lines():
        assert time.monotonic() < deadline, "timed out reading the stream"
        if line.startswith(":"):
            comments.append(line)
        elif line.startswith("id:"):
            current["id"] = line[3:].strip()
        elif line.startswith("data:"):
            current["data"] = json.loads(line[5:].strip())
        elif line == "" and current:
            events.append(current)
            current = {}
            if len(events) >= want:
                break
    return events, comments


@contextmanager
def feed_stream(
    live: Live,
    *last_event_ids: bytes | str,
    params: dict[str, Any] | None = None,
    timeout_s: float = 30,
) -> Iterator[httpx.Response]:
    """A stream request to the live server's feed (each of `last_event_ids` a Last-Event-ID
    header of its own), its answer open for the block."""
    headers: list[tuple[str, bytes | str]] = [("Accept", "text/event-stream")]
    headers += [("Last-Event-ID", value) for value in last_event_ids]
    with (
        httpx.Client(base_url=live.url, timeout=timeout_s) as client,
        client.stream("GET", "/api/board/events", headers=headers, params=params) as stream,
    ):
        yield stream


# -- the page ----------------------------------------------------------------------------------


def test_events_page_after_a_cursor(tmp_path: Path) -> None:
    with serving(tmp_path) as api:
        first = api.create("one")
        api.client.post(f"/api/board/{first['id']}/claim", json={"assigneeAgentId": "a"})
        api.create("two")
        page = api.client.get("/api/board/events").json()
        assert [event["kind"] for event in page["events"]] == [
            "task_created",
            "task_claimed",
            "task_created",
        ]
        assert page["next"] == page["events"][-1]["seq"] == api.last_seq()
        after = api.client.get("/api/board/events", params={"since": page["events"][0]["seq"]})
        assert [event["kind"] for event in after.json()["events"]] == [
            "task_claimed",
            "task_created",
        ]
        one = api.client.get("/api/board/events", params={"taskId": first["id"], "limit": 1})
        assert [event["kind"] for event in one.json()["events"]] == ["task_created"]
        empty = api.client.get("/api/board/events", params={"since": page["next"]}).json()
        assert empty == {"events": [], "next": page["next"]}
        bad = api.client.get("/api/board/events", params={"since": -1})
        assert bad.status_code == 400 and bad.json()["error"] == "invalid query"


# -- the stream --------------------------------------------------------------------------------


def test_the_stream_delivers_new_events_live_and_resumes(live: Live) -> None:
    api = live.api
    api.create("before")
    with feed_stream(live) as stream:
        assert stream.status_code == 200
        assert stream.headers["content-type"].startswith("text/event-stream")

        def write_later() -> None:
            time.sleep(0.3)
            api.create("while watching")
            # a write from another process's connection is seen too
            with Board(api.path, reconcile_orphans=False) as other:
                other.create_task("from elsewhere")

        writer = threading.Thread(target=write_later)
        writer.start()
        events, _ = read_sse(stream, want=3)
        writer.join()
    titles = [event["data"]["kind"] for event in events]
    assert titles == ["task_created"] * 3
    assert [int(event["id"]) for event in events] == [1, 2, 3]
    assert [event["data"]["seq"] for event in events] == [1, 2, 3]
    # Resume after the second event: only the third (and nothing twice).
    with feed_stream(live, "2") as stream:
        again, _ = read_sse(stream, want=1)
    assert [event["id"] for event in again] == ["3"]


@pytest.mark.parametrize(
    ("accept", "streams"),
    [
        (["text/event-stream"], True),
        (["Text/Event-Stream"], True),  # media types match whatever their case
        (["application/json, text/event-stream"], True),
        (["application/json", "text/event-stream"], True),  # two headers are one list
        (["text/event-stream;q=0.5, */*;q=0.1"], True),
        (["text/event-stream;q=0"], False),  # not acceptable: RFC 9110 12.4.2
        (["text/event-stream;q=0.1, application/json"], False),  # JSON preferred
        (["text/event-stream-ish"], False),
        (["*/*"], False),
        ([], False),
    ],
)
def test_accept_is_weighed_as_http_says(live: Live, accept: list[str], streams: bool) -> None:
    """The stream was chosen by `text/event-stream` anywhere in `Accept` (found by hand):
    `text/event-stream;q=0` (which says it is not acceptable), or one a client weighs below
    JSON, got the stream anyway, and `Text/Event-Stream` the page. Each now gets what its
    weights ask for."""
    live.api.create("one")
    headers = [("Accept", value) for value in accept]
    with (
        httpx.Client(base_url=live.url, timeout=10) as client,
        client.stream("GET", "/api/board/events", headers=headers) as answer,
    ):
        assert answer.status_code == 200
        kind = answer.headers["content-type"]
        if streams:
            assert kind.startswith("text/event-stream"), kind
        else:
            assert kind == "application/json", kind
            assert [event["seq"] for event in json.loads(answer.read())["events"]] == [1]


def test_the_stream_sends_heartbeat_comments(live: Live) -> None:
    with feed_stream(live) as stream:
        seen: list[str] = []
        started = time.monotonic()
        for line in stream.iter_lines():
            if line.startswith(":"):
                seen.append(line)
            if len(seen) >= 2 or time.monotonic() - started > 10:
                break
    assert len(seen) >= 2, "no heartbeat comments within 10 s at a 0.5 s interval"


@contextmanager
def server_log() -> Iterator[list[logging.LogRecord]]:
    """What the live server logs at WARNING and above meanwhile: the app's loggers and uvicorn's
    (which does not propagate to the root), where "Exception in ASGI application" goes."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    keep = Keep(logging.WARNING)
    loggers = [logging.getLogger(), logging.getLogger("uvicorn.error")]
    for logger in loggers:
        logger.addHandler(keep)
    try:
        yield records
    finally:
        for logger in loggers:
            logger.removeHandler(keep)


def assert_quiet(records: list[logging.LogRecord]) -> None:
    loud = [f"{r.name}: {r.getMessage()}" for r in records if r.exc_info or r.levelno >= 40]
    assert not loud, loud


def open_stream(
    live: Live, last_event_id: bytes | str, since: int | None = None, *more_ids: str
) -> httpx.Response:
    """The first answer to a stream request resuming at `last_event_id` (and `more_ids`, each a
    header of its own): a refusal read whole, or (a 200) the live stream closed unread, so a test
    never waits on one it should not get."""
    params = None if since is None else {"since": since}
    with feed_stream(live, last_event_id, *more_ids, params=params, timeout_s=10) as answer:
        if answer.status_code != 200:
            answer.read()
        return answer


# What an SSE client library could resend, that no board sent: each is refused as `since` is.
# "+5", "1_0" and "5.0" were taken for 5, 10 and 5.
NOT_A_SEQ = [
    b"9223372036854775808", b"\xb2", b"abc", b"-1", b"1.5", b"0x10", b"1e3", b"+5", b"1_0", b"5.0"
]  # fmt: skip


@pytest.mark.parametrize("value", NOT_A_SEQ, ids=repr)
def test_a_last_event_id_that_is_not_a_seq_is_the_400_a_bad_since_gets(
    live: Live, value: bytes
) -> None:
    """The header takes exactly what `since` takes: nothing out of range (2**63), no non-ASCII
    digit (the byte 0xb2 reads as `²`, which `str.isdigit` calls a digit), no text. Refused as a
    400 before the stream starts, in the envelope a bad `since` gets with the header named in its
    place, nothing written and nothing logged; the server goes on streaming."""
    api = live.api
    api.create("one")
    api.create("two")
    before = api.fingerprint()
    with server_log() as records:
        answer = open_stream(live, value)
        as_since = api.client.get("/api/board/events", params={"since": value.decode("latin-1")})
    assert answer.status_code == 400, answer.headers
    assert answer.headers["content-type"].startswith("application/json")
    assert as_since.status_code == 400
    said = as_since.json()
    said["details"]["fieldErrors"] = {"Last-Event-ID": said["details"]["fieldErrors"]["since"]}
    assert answer.json() == said
    assert said["error"] == "invalid query" and said["reason"] == "invalid_input"
    assert api.fingerprint() == before
    assert_quiet(records)
    # the JSON page does not read the header: it answers as it always did
    page = api.client.get("/api/board/events", headers={"Last-Event-ID": value})
    assert page.status_code == 200 and len(page.json()["events"]) == 2
    with feed_stream(live, "1") as stream:
        events, _ = read_sse(stream, want=1)
    assert [event["id"] for event in events] == ["2"]


def test_two_last_event_ids_that_differ_are_refused(live: Live) -> None:
    """Two `Last-Event-ID` headers that differ: the first was taken silently, so a client (or a
    proxy adding its own) resumed from an id it may not have meant. A 400 naming the header; the
    same id twice is that id."""
    api = live.api
    api.create("one")
    api.create("two")
    before = api.fingerprint()
    for first, second in (("1", "2"), ("", "1"), ("1", "abc")):
        answer = open_stream(live, first, None, second)
        assert answer.status_code == 400, (first, second, answer.headers)
        body = answer.json()
        assert body["error"] == "invalid query" and body["reason"] == "invalid_input"
        assert body["details"]["fieldErrors"] == {"Last-Event-ID": [TWO_IDS]}
    assert api.fingerprint() == before
    with feed_stream(live, "1", "1") as stream:
        assert stream.status_code == 200
        events, _ = read_sse(stream, want=1)
    assert [event["id"] for event in events] == ["2"]


def test_a_task_id_that_cannot_be_an_id_is_refused_before_the_stream(live: Live) -> None:
    """`?taskId=` with a NUL in it: the page refused it, but the stream answered 200 and then
    failed on its first read (a logged "unexpected failure"). Both now give the 400 the page
    gave, before anything is streamed."""
    api = live.api
    api.create("one")
    with server_log() as records:
        page = api.client.get("/api/board/events", params={"taskId": "TASK-1\x00"})
        with feed_stream(live, params={"taskId": "TASK-1\x00"}, timeout_s=10) as stream:
            stream.read()
    assert page.status_code == 400, page.text
    assert stream.status_code == 400, stream.headers
    assert stream.json() == page.json()
    assert page.json()["error"] == "invalid query" and page.json()["reason"] == "invalid_input"
    assert set(page.json()["details"]["fieldErrors"]) == {"taskId"}
    assert_quiet(records)


def test_an_unknown_task_id_filters_to_nothing_yet(live: Live) -> None:
    """A well-formed id no task has is a filter that matches nothing, as `teamId` or `assignee`
    naming nobody is on the list: an empty page, and a stream that delivers the task's events
    once it exists."""
    api = live.api
    api.create("one")
    page = api.client.get("/api/board/events", params={"taskId": "TASK-2", "since": 0})
    assert page.status_code == 200
    assert page.json() == {"events": [], "next": 0}
    with feed_stream(live, params={"taskId": "TASK-3"}) as stream:
        assert stream.status_code == 200
        api.create("two")
        api.create("three")
        events, _ = read_sse(stream, want=1)
    assert [event["data"]["taskId"] for event in events] == ["TASK-3"]


def test_an_empty_last_event_id_is_no_id(live: Live) -> None:
    """SSE's empty last event id means none: the stream starts at `since`, as without one."""
    live.api.create("one")
    live.api.create("two")
    with feed_stream(live, "", params={"since": 1}) as stream:
        assert stream.status_code == 200
        events, _ = read_sse(stream, want=1)
    assert [event["id"] for event in events] == ["2"]


def test_the_cli_refuses_a_follower_resumed_ahead_of_the_log_as_the_stream_does(
    live: Live, board_path: Path
) -> None:
    """A stream resumed above the newest event (`Last-Event-ID`) is 409 `conflict`, while the CLI's
    resume, `events --follow --since`, refused the same seq `invalid_input`: one condition, two
    reasons for a loop to branch on. Both are `conflict`, naming the newest seq."""
    live.api.create("one")
    live.api.create("two")
    stream = open_stream(live, "99").json()
    cli = Kanban(board_path, init=False, test_clock=False)
    follower = cli.refused(
        "events", "--follow", "--since", "99", "--timeout", "10", reason="conflict"
    )
    assert (stream["reason"], stream["newest"]) == (follower["reason"], follower["newest"])
    assert stream["newest"] == 2


def test_a_last_event_id_above_the_newest_event_is_409_naming_it(live: Live) -> None:
    """An id no event of this board has reached was sent by another board (this one re-created
    since): 409 `conflict` with the newest seq, before any stream, instead of a stream that says
    nothing until the log passes the id. The newest id itself resumes; `since` (the seed's
    cursor, no header) above the newest keeps its meaning, a stream that waits for it."""
    api = live.api
    api.create("one")
    api.create("two")
    before = api.fingerprint()
    with server_log() as records:
        ahead = open_stream(live, "99")
        far = open_stream(live, str(2**63 - 1))
    assert ahead.status_code == 409
    body = ahead.json()
    assert (body["reason"], body["lastEventId"], body["newest"]) == ("conflict", 99, 2)
    assert "Last-Event-ID 99 is ahead of this board's newest event (seq 2)" in body["error"]
    assert "ok" not in body  # the route's plain envelope
    assert far.status_code == 409 and far.json()["lastEventId"] == 2**63 - 1
    assert api.fingerprint() == before
    assert_quiet(records)
    assert open_stream(live, "2").status_code == 200
    assert open_stream(live, "99", since=0).status_code == 409  # the header decides, as before
    with feed_stream(live, params={"since": 3}) as stream:
        assert stream.status_code == 200
        api.create("three")
        api.create("four")
        events, _ = read_sse(stream, want=1)
    assert [event["id"] for event in events] == ["4"]
    # once the log has reached the id, the same header resumes
    assert open_stream(live, "4").status_code == 200


def test_the_default_heartbeat_is_every_15_seconds() -> None:
    assert ServerSettings(db="x").sse_ping_s == 15.0


# -- health ------------------------------------------------------------------------------------


def test_healthz_and_readyz(tmp_path: Path) -> None:
    with serving(tmp_path) as api:
        assert api.client.get("/healthz").json() == {"ok": True}
        ready = api.client.get("/readyz")
        assert ready.status_code == 200
        assert ready.json() == {"ok": True, "database": str(api.path), "schemaCurrent": True}


def test_readyz_is_503_when_the_schema_is_not_current(tmp_path: Path) -> None:
    with serving(tmp_path) as api:
        with Board(api.path, reconcile_orphans=False) as other:
            other.store.write(lambda tx: tx.conn.execute("PRAGMA user_version = 999"))
        ready = api.client.get("/readyz")
        assert ready.status_code == 503
        assert ready.json()["schemaCurrent"] is False


# -- body limits -------------------------------------------------------------------------------

LIMIT = 2 * 1024 * 1024


def test_a_declared_oversized_body_is_413_at_once(tmp_path: Path) -> None:
    with serving(tmp_path) as api:
        before = api.fingerprint()
        answer = api.client.post(
            "/api/board",
            content=json.dumps({"title": "x", "description": "d" * LIMIT}).encode(),
            headers={"Content-Type": "application/json"},
        )
        assert answer.status_code == 413
        assert answer.json()["error"] == "request entity too large"
        assert api.fingerprint() == before
        at_limit = api.client.post("/api/board", json={"title": "x", "description": "d" * 20_000})
        assert at_limit.status_code == 200


def test_a_streamed_body_is_cut_off_without_being_read_whole(tmp_path: Path) -> None:
    """No Content-Length: the limit counts chunks as they arrive and refuses as soon as the count
    passes 2 MB; the rest of a 64 MB body is never pulled from the connection."""
    path = tmp_path / "board.db"
    board = Board(path)
    app = create_app(ServerSettings(db=path, upkeep=False), board=board)
    chunk = b"x" * 65536
    pulled = 0
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        pulled += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": pulled < 64 * 1024 * 1024}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/api/board",
        "raw_path": b"/api/board",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"application/json"), (b"transfer-encoding", b"chunked")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
        "state": {},
    }

    async def run() -> None:
        async with app.router.lifespan_context(app):
            await app(scope, receive, send)

    asyncio.run(run())
    board.close()
    assert sent[0]["status"] == 413
    assert json.loads(sent[1]["body"])["error"] == "request entity too large"
    assert pulled <= LIMIT + len(chunk)
    with Board(path, read_only=True) as reader:
        assert reader.all_tasks() == []


def test_over_http_a_chunked_oversized_body_gets_413(live: Live) -> None:
    def body() -> Iterator[bytes]:
        yield b'{"title": "x", "description": "'
        for _ in range(40):
            yield b"d" * 65536
        yield b'"}'

    with httpx.Client(base_url=live.url, timeout=30) as client:
        answer = client.post(
            "/api/board", content=body(), headers={"Content-Type": "application/json"}
        )
    assert answer.status_code == 413
    assert live.api.client.get("/api/board").json()["tasks"] == []


def test_busy_is_503_with_retry_after(tmp_path: Path) -> None:
    """Another writer holds the lock past the retry budget: 503 with Retry-After, and nothing
    written. The one refusal a client should retry."""
    with serving(tmp_path, board_config=BoardConfig(retry_budget_ms=300)) as api:
        task = api.create()
        before = api.fingerprint()
        holder = sqlite3.connect(api.path, isolation_level=None, timeout=0)
        holder.execute("BEGIN IMMEDIATE")
        try:
            answer = api.client.post(
                f"/api/board/{task['id']}/claim", json={"assigneeAgentId": "a"}
            )
            created = api.client.post("/api/board", json={"title": "no"})
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert answer.status_code == 503
        assert answer.headers["retry-after"] == "1"
        body = answer.json()  # the claim route's {ok: false, error: <reason>}
        assert (body["ok"], body["error"], body["message"]) == (
            False,
            "busy",
            "database busy, try again",
        )
        assert created.status_code == 503 and created.headers["retry-after"] == "1"
        assert created.json()["error"] == "database busy, try again"
        assert created.json()["reason"] == "busy" and "ok" not in created.json()
        assert api.fingerprint() == before
        retried = api.client.post(f"/api/board/{task['id']}/claim", json={"assigneeAgentId": "a"})
        assert retried.status_code == 200


def test_a_database_url_is_shown_without_its_password() -> None:
    from kanban.http.app import shown_location

    assert shown_location("postgresql://kb:s3cret@db.example:5432/board") == (
        "postgresql://kb:***@db.example:5432/board"
    )
    assert shown_location("postgresql://db.example/board") == "postgresql://db.example/board"
    assert shown_location(Path("/srv/board.db")) == "/srv/board.db"
