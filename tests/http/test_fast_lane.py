"""The lease verbs' fast lane (`kanban/http/fastpath.py`) answers exactly as FastAPI does.

Two apps on two boards seeded alike, one with the lane and one without, are sent the same
generated requests (every lease verb, odd task ids, bodies valid and not, malformed JSON, NaN,
integers past 64 bits, lone surrogates, UTF-16, other content types, chunked bodies, with and
without per-agent tokens): status, headers and body must be byte for byte the same, and so must
both boards after every request. The lane's own counters prove both of its sides ran (answered
here, handed to FastAPI).
"""

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import APIRouter
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boardlib.store.base import StoreError
from boardlib.worktrees import GitFailure
from kanban.http.app import Who
from kanban.http.auth import TokenBook
from kanban.http.fastpath import LeaseFastLane, LeaseLanes
from kanban.http.routes import lease
from tests.examples import examples
from tests.http.conftest import TOKENS, Api, live_server, serving, token_book

# The lease verbs, and seed 003's claim by id.
VERBS = [*sorted(route.path.rsplit("/", 1)[1] for route in lease.router.routes), "claim"]  # type: ignore[attr-defined]
TASK_IDS = [*(f"TASK-{n}" for n in range(1, 8)), "TASK-99", "task-1", " "]
NAMES = ["alice", "bob", "carol", "ops", ""]
KEYS = [
    "agent",
    "assigneeAgentId",
    "role",
    "team",
    "runtime",
    "minutes",
    "respectDeps",
    "respect_deps",
    "epoch",
    "summary",
    "note",
    "reason",
    "to",
    "other",
]
# Bodies JSON parsers disagree on, or that are not an object: FastAPI must judge them.
ODD_BODIES = [
    b"",
    b"null",
    b"[]",
    b"{}",
    b"{",
    b'"alice"',
    b'{"agent": NaN}',
    b'{"agent": "alice", "minutes": Infinity}',
    b'{"agent":"alice","agent":"bob"}',
    b'{"agent":"\\ud800"}',
    b'{"agent":"alice"} trailing',
    b'{"agent":"alice","epoch":1.0}',
    b'{"agent":"alice","epoch":99999999999999999999999}',
    '{"agent":"alice"}'.encode("utf-16"),
    b'{"agent":"al\xffice"}',
]
CONTENT_TYPES = [
    None,
    "application/json",
    "application/json; charset=utf-8",
    "Application/JSON",
    "text/plain",
    "application/x-www-form-urlencoded",
    "application/vnd.api+json",
]

# Headers a browser sends (or a page on another name resolving to this server): each is refused
# by the guards in front of the app, and must be by the lane too.
BROWSER_HEADERS = [
    {"origin": "http://evil.example"},
    {"origin": "null"},
    {"origin": "http://localhost"},
    {"sec-fetch-site": "cross-site"},
    {"sec-fetch-site": "same-origin"},
    {"host": "evil.example"},
    {"host": "127.0.0.1:8080"},
]
BODY_LIMIT = 128  # the twins' cap: bodies pass it, padded ones do not

values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-1, 3),
    st.integers(2**62, 2**66),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from(NAMES),
    st.text(max_size=4),
    st.lists(st.sampled_from(NAMES), max_size=2),
)
objects = st.dictionaries(st.sampled_from(KEYS), values, max_size=4)
bodies = st.one_of(
    objects.map(lambda document: json.dumps(document).encode()),
    st.sampled_from(ODD_BODIES),
)
# Bodies a lease verb may well accept: the plain case the lane answers itself.
claim_bodies = st.fixed_dictionaries(
    {"assigneeAgentId": st.sampled_from(NAMES[:3])},
    optional={"minutes": st.integers(1, 30), "assigneeRuntime": st.just("claude")},
)
likely_bodies = st.fixed_dictionaries(
    {"agent": st.sampled_from(NAMES[:3])},
    optional={
        "epoch": st.integers(0, 3),
        "minutes": st.integers(1, 30),
        "note": st.just("a note"),
        "reason": st.just("a reason"),
        "summary": st.just("done"),
        "to": st.sampled_from(NAMES[:3]),
    },
).map(lambda document: json.dumps(document).encode())
odd_requests = st.fixed_dictionaries(
    {
        "method": st.sampled_from(["POST"] * 9 + ["GET"]),
        "verb": st.sampled_from(VERBS),
        "task_id": st.sampled_from(TASK_IDS),
        "body": bodies,
        "content_type": st.sampled_from(CONTENT_TYPES),
        "chunked": st.sampled_from([False] * 5 + [True]),
        "token": st.sampled_from([None, *TOKENS]),
        "advance_ms": st.sampled_from([0] * 6 + [60_000, 16 * 60_000]),
        # What the guards judge before anything is read: web pages, DNS rebinding, the body cap.
        "browser": st.sampled_from([{}] * 6 + BROWSER_HEADERS),
        "padding": st.sampled_from([0] * 5 + [BODY_LIMIT]),
    }
)
plain_requests = st.fixed_dictionaries(
    {
        "method": st.just("POST"),
        "verb": st.sampled_from(VERBS),
        "task_id": st.sampled_from(TASK_IDS),
        "body": likely_bodies | claim_bodies.map(lambda d: json.dumps(d).encode()) | st.just(b""),
        "content_type": st.just("application/json"),
        "chunked": st.just(False),
        "token": st.sampled_from(list(TOKENS)),
        "advance_ms": st.sampled_from([0] * 6 + [60_000, 16 * 60_000]),
        "browser": st.sampled_from([{}] * 6 + BROWSER_HEADERS),
        "padding": st.sampled_from([0] * 5 + [BODY_LIMIT]),
    }
)
requests = st.one_of(odd_requests, plain_requests)


def lane_of_app(api: Api) -> LeaseFastLane | None:
    """The lane in the app's middleware stack (None when the app was built without it)."""
    return lane_in(api.client.app)  # type: ignore[attr-defined]


def lane_in(app: Any) -> LeaseFastLane | None:
    """The lane in front of the app (None when the app was built without it)."""
    lane = getattr(app, "lease_lane", None)
    return lane if isinstance(lane, LeaseFastLane) else None


def seed(api: Api) -> None:
    """Seven tasks: four todo, one held by alice, one of alice's in review, and a todo waiting
    on the first (its claim is the seed's `conflict`, `unmet_dependencies` in `reason`)."""
    for n in range(4):
        api.create(f"task {n}", priority=n % 2)
    held = api.claimed("alice", title="held")
    assert api.client.post(f"/api/board/{held['id']}/complete", json={"agent": "alice"}).is_success
    api.claimed("alice", title="in progress")
    api.create("waiting", dependsOn=["TASK-1"])


def board_state(api: Api) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    tasks = api.board.list_tasks(include_dropped=True)
    return [task.to_json() for task in tasks], [e.to_json() for e in api.board.events(since=0)]


def send(api: Api, request: dict[str, Any]) -> tuple[int, list[tuple[str, str]], bytes]:
    path = (
        "/api/board/claim-next"
        if request["verb"] == "claim-next"
        else f"/api/board/{request['task_id']}/{request['verb']}"
    )
    headers = {}
    if request["content_type"] is not None:
        headers["content-type"] = request["content_type"]
    if request["token"] is not None:
        headers["authorization"] = f"Bearer {TOKENS[request['token']]}"
    headers.update(request["browser"])
    content = request["body"] + b" " * request["padding"]  # JSON allows trailing whitespace
    body: Any = iter([content]) if request["chunked"] else content
    answer = api.client.request(request["method"], path, content=body, headers=headers)
    return answer.status_code, answer.headers.multi_items(), answer.content


@pytest.fixture(params=["open", "tokens"])
def twins(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Api, Api]]:
    tokens: TokenBook | None = token_book() if request.param == "tokens" else None
    with (
        serving(tmp_path / "fast", tokens=tokens, fast_lane=True, body_limit=BODY_LIMIT) as fast,
        serving(tmp_path / "slow", tokens=tokens, fast_lane=False, body_limit=BODY_LIMIT) as slow,
    ):
        for api in (fast, slow):
            api.client.headers["authorization"] = f"Bearer {TOKENS['ops']}"
            seed(api)
            del api.client.headers["authorization"]
        yield fast, slow


@pytest.mark.slow
def test_the_fast_lane_answers_every_lease_request_as_fastapi_does(
    twins: tuple[Api, Api],
) -> None:
    fast, slow = twins
    lane = lane_of_app(fast)
    assert lane is not None and lane_of_app(slow) is None
    assert board_state(fast) == board_state(slow)

    @settings(
        max_examples=examples(300),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(request=requests)
    def same_answer(request: dict[str, Any]) -> None:
        for api in (fast, slow):
            api.clock.advance(ms=request["advance_ms"])
        assert send(fast, request) == send(slow, request), request
        assert board_state(fast) == board_state(slow), request

    same_answer()
    # Both sides of the lane ran: plain requests answered here, the rest judged by FastAPI.
    # A floor, not an expectation: CI once drew exactly 20 plain requests of 300.
    least = examples(300) // 50  # 6 of CI's 300 examples, 1 of the fast loop's 75
    assert lane.answered > least and lane.handed_on > least, (lane.answered, lane.handed_on)


def test_a_claim_waiting_on_dependencies_is_refused_alike_on_and_off_the_lane(
    twins: tuple[Api, Api],
) -> None:
    """The lane answers the claim in the route's envelope as FastAPI does: seed 003's `conflict`,
    the board's `unmet_dependencies` in `reason`, byte for byte; neither board changes."""
    fast, slow = twins
    lane = lane_of_app(fast)
    assert lane is not None
    request = {
        "method": "POST", "verb": "claim", "task_id": "TASK-7",
        "body": b'{"assigneeAgentId": "bob"}', "content_type": "application/json",
        "chunked": False, "token": "bob", "advance_ms": 0, "browser": {}, "padding": 0,
    }  # fmt: skip
    before = board_state(fast)
    answered = lane.answered
    on_lane = send(fast, request)
    assert lane.answered == answered + 1
    assert on_lane == send(slow, request)
    status, _headers, body = on_lane
    refusal = json.loads(body)
    assert status == 409
    assert (refusal["error"], refusal["reason"]) == ("conflict", "unmet_dependencies")
    assert board_state(fast) == board_state(slow) == before


def test_plain_claims_are_answered_by_the_lane_and_a_bad_body_by_fastapi(tmp_path: Path) -> None:
    with serving(tmp_path) as api:
        lane = lane_of_app(api)
        assert lane is not None
        task = api.create("one")
        answer = api.client.post("/api/board/claim-next", json={"agent": "alice"})
        assert answer.status_code == 200 and answer.json()["task"]["id"] == task["id"]
        assert (lane.answered, lane.handed_on) == (1, 0)
        other = api.create("two")
        by_id = api.client.post(f"/api/board/{other['id']}/claim", json={"assigneeAgentId": "bob"})
        assert by_id.status_code == 200 and api.stored(other["id"]).assignee_agent_id == "bob"
        assert (lane.answered, lane.handed_on) == (2, 0)
        before = api.fingerprint()
        bad = api.client.post(f"/api/board/{task['id']}/heartbeat", json={"agent": "a" * 201})
        assert bad.status_code == 400
        assert bad.json()["details"]["fieldErrors"]["agent"]
        assert (lane.answered, lane.handed_on) == (2, 1)
        refused = api.client.post(f"/api/board/{task['id']}/heartbeat", json={"agent": "bob"})
        assert refused.status_code == 403
        assert (refused.json()["ok"], refused.json()["reason"]) == (False, "not_assignee")
        assert (lane.answered, lane.handed_on) == (3, 1)
        assert api.fingerprint() == before
        # the board's write turn was free every time: each ran on the event loop, no thread hop
        assert (lane.inline, lane.pooled) == (3, 0)


@pytest.mark.parametrize(
    "failure", [RuntimeError("a defect"), GitFailure(["worktree", "add"], 128, "fatal: broken")]
)
def test_a_failure_inside_the_lane_is_answered_as_the_apps_handlers_answer_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
    failure: Exception,
) -> None:  # fmt: skip
    """The lane runs ahead of the app's error middlewares: a failure it did not expect gets the
    answer those give it (a 500 in the same envelope; a defect is logged), not a bare 500 from
    the HTTP server."""
    on_lane, off_lane = claims_failing_with(failure, tmp_path, monkeypatch, caplog)
    assert on_lane == off_lane
    status, _headers, _body, logged = on_lane
    assert status == 500
    if isinstance(failure, RuntimeError):
        assert logged == ["unexpected failure on POST /api/board/claim-next"]


def claims_failing_with(
    failure: Exception, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> list[tuple[int, list[tuple[str, str]], bytes, list[str]]]:  # fmt: skip
    """A claim-next answered on the lane, then off it, while the board's claim raises
    `failure`: each answer's status, headers and body, and what the server logged for it."""
    answers = []
    with (
        serving(tmp_path / "fast", fast_lane=True) as fast,
        serving(tmp_path / "slow", fast_lane=False) as slow,
    ):
        for api in (fast, slow):
            api.create("one")

            def broken(*args: Any, **kwargs: Any) -> None:
                raise failure

            monkeypatch.setattr(api.board, "claim_next", broken)
            caplog.clear()
            answer = api.client.post("/api/board/claim-next", json={"agent": "alice"})
            logged = [r.getMessage() for r in caplog.records if r.name == "kanban.http"]
            answers.append(
                (answer.status_code, answer.headers.multi_items(), answer.content, logged)
            )
        lane = lane_of_app(fast)
        assert lane is not None and lane.answered == 1
    return answers


def test_a_database_gone_under_the_server_is_503_database_unavailable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A PostgreSQL server that goes away under a running `kanban serve` (a restart) raised the
    store's StoreError through to a 500 "unexpected": it is the board's reason,
    database_unavailable, 503 with Retry-After, on the lane and off it alike."""
    gone = StoreError("cannot reach the database at db.example:5432")
    on_lane, off_lane = claims_failing_with(gone, tmp_path, monkeypatch, caplog)
    assert on_lane == off_lane
    status, headers, body, logged = on_lane
    assert status == 503 and dict(headers)["retry-after"] and logged == []
    assert json.loads(body)["reason"] == "database_unavailable"


def test_a_claim_waiting_on_the_write_lock_does_not_stall_the_server(tmp_path: Path) -> None:
    """The lane keeps the thread pool: while another process's transaction holds the board's
    write lock, a claim waits (then claims, or is refused busy) on the pool, not on the event
    loop, and the server answers others."""
    with live_server(tmp_path) as live:
        live.api.create("one")
        holder = sqlite3.connect(live.api.path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        outcome: dict[str, Any] = {}

        def claim() -> None:
            with httpx.Client(base_url=live.url, timeout=30) as client:
                started = time.perf_counter()
                answer = client.post("/api/board/claim-next", json={"agent": "alice"})
                outcome.update(status=answer.status_code, s=time.perf_counter() - started)

        lane = lane_in(live.app)
        assert lane is not None
        waiting = threading.Thread(target=claim)
        waiting.start()
        try:
            # Until the lane has taken the claim: on a slow machine the client thread can take
            # longer than any fixed sleep to send it, and a claim sent after the ROLLBACK below
            # would find the lock free.
            deadline = time.monotonic() + 10
            while lane.answered == 0 and time.monotonic() < deadline:
                time.sleep(0.01)
            assert lane.answered == 1
            time.sleep(0.1)  # the claim is now waiting on the lock
            assert not outcome
            started = time.perf_counter()
            probe = live.api.client.get("/healthz")
            assert probe.status_code == 200
            assert time.perf_counter() - started < 0.5
            assert not outcome  # the claim still waits: it was not what blocked /healthz
        finally:
            holder.execute("ROLLBACK")
            holder.close()
            waiting.join(timeout=30)
        assert outcome["status"] in (200, 503), outcome
        assert (lane.inline, lane.pooled) == (0, 1)


def test_the_lane_refuses_a_route_it_could_not_run_faithfully() -> None:
    router = APIRouter(prefix="/api/board")

    @router.post("/{task_id}/poke")
    def poke(task_id: str, who: Who, verbose: bool = False) -> None:
        """A query parameter the lane would silently drop."""

    with pytest.raises(TypeError, match="cannot fill"):
        LeaseLanes(router.routes)
