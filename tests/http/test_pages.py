"""`GET /api/board` a page at a time (limit + keyset cursor) and revalidated (ETag, 304): a seed
client that passes neither still gets the whole list in the seed's order and shape, the database
writes the same documents the records would, and a tag changes whenever any task does."""

import contextlib
import json
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from boardlib import Board, BoardConfig
from tests.backends import is_postgres, raw_execute
from tests.http.conftest import Api, serving
from tests.racers import racing_context


@pytest.fixture
def api(tmp_path: Path, board_path: Path) -> Iterator[Api]:
    with serving(tmp_path, db=board_path) as opened:
        yield opened


def ids(answer: Any) -> list[str]:
    return [task["id"] for task in answer.json()["tasks"]]


def test_a_seed_client_without_limit_gets_the_whole_list_as_before(api: Api) -> None:
    made = [api.create(f"t{n}") for n in range(5)]
    api.clock.advance(ms=10)
    edited = api.client.patch(f"/api/board/{made[1]['id']}", json={"priority": 3})
    assert edited.status_code == 200
    answer = api.client.get("/api/board")
    assert answer.status_code == 200
    body = answer.json()
    assert list(body) == ["tasks"]  # no page fields for a client that asked for no page
    # newest change first: the edited task leads, then newest created among equal times
    assert ids(answer) == [
        made[1]["id"],
        *(task["id"] for task in reversed(made) if task != made[1]),
    ]
    with api.reader() as reader:
        assert body["tasks"] == [task.to_json() for task in reader.list_tasks()]


def test_documents_written_by_the_database_match_the_records(api: Api) -> None:
    """Every column as `Task.to_json` has it: JSON columns embedded, text with control characters
    and quotes, nulls, and a cost that 15 digits would not round-trip."""
    task = api.create('he said "hi"\\\x1b[2J', description="line\nbreak\ttab \u2603")
    api.client.post(f"/api/board/{task['id']}/claim", json={"assigneeAgentId": "alice"})
    double = "DOUBLE PRECISION"  # floating point on both stores (0.1 + 0.2 is exact on Postgres)
    raw_execute(
        api.path,
        f"UPDATE tasks SET cost_usd = CAST(0.1 AS {double}) + CAST(0.2 AS {double}) "
        f"WHERE id = '{task['id']}'",
    )
    stored = api.stored(task["id"]).to_json()
    assert stored["costUsd"] == 0.1 + 0.2
    for params in ({}, {"limit": 5}):
        listed = api.client.get("/api/board", params=params).json()["tasks"]
        assert listed == [stored]
    raw = api.client.get("/api/board").content
    assert b"\\u001b" in raw and b"\x1b" not in raw  # control characters travel escaped


def test_pages_walk_creation_order_newest_first_and_end_with_null(api: Api) -> None:
    made = [api.create(f"t{n}")["id"] for n in range(7)]
    seen: list[str] = []
    pages = 0
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 3}
        if cursor is not None:
            params["cursor"] = cursor
        body = api.client.get("/api/board", params=params).json()
        pages += 1
        seen += [task["id"] for task in body["tasks"]]
        cursor = body["nextCursor"]
        if cursor is None:
            break
    assert pages == 3
    assert seen == list(reversed(made))
    # a cursor alone pages in pages of 100, here the rest of the board
    first = api.client.get("/api/board", params={"limit": 2}).json()
    rest = api.client.get("/api/board", params={"cursor": first["nextCursor"]}).json()
    assert [task["id"] for task in rest["tasks"]] == list(reversed(made))[2:]
    assert rest["nextCursor"] is None


def test_pages_keep_their_filters(api: Api) -> None:
    red = [api.create(f"red {n}", teamId="red")["id"] for n in range(4)]
    api.create("blue", teamId="blue")
    first = api.client.get("/api/board", params={"teamId": "red", "limit": 3}).json()
    second = api.client.get(
        "/api/board", params={"teamId": "red", "limit": 3, "cursor": first["nextCursor"]}
    ).json()
    assert [t["id"] for t in first["tasks"] + second["tasks"]] == list(reversed(red))
    assert second["nextCursor"] is None
    ready = api.client.get("/api/board", params={"ready": "true", "limit": 10}).json()
    assert len(ready["tasks"]) == 5 and ready["nextCursor"] is None


@pytest.mark.parametrize(
    "params",
    [
        {"cursor": "TASK-3"},
        {"cursor": "k1.-4"},
        {"cursor": "k1.99999999999999999999"},
        {"cursor": "k1.\u0663"},  # a digit, but not an ASCII one
        {"limit": 0},
        {"cursor": ""},
    ],
)
def test_a_cursor_the_board_did_not_hand_out_is_a_400_that_changes_nothing(
    api: Api, params: dict[str, Any]
) -> None:
    api.create("one")
    before = api.fingerprint()
    answer = api.client.get("/api/board", params=params)
    assert answer.status_code == 400, answer.text
    body = answer.json()
    assert body["error"] == "invalid query"
    assert set(body["details"]["fieldErrors"]) <= {"cursor", "limit"}
    assert api.fingerprint() == before


def test_an_unchanged_list_answers_304_and_any_task_write_changes_the_tag(api: Api) -> None:
    task = api.claimed("alice")
    first = api.client.get("/api/board")
    etag = first.headers["etag"]
    assert etag.startswith('"') and first.headers["cache-control"] == "no-cache"
    again = api.client.get("/api/board", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["etag"] == etag
    for weak_or_listed in (f"W/{etag}", f'"other", {etag}', "*"):
        assert (
            api.client.get("/api/board", headers={"If-None-Match": weak_or_listed}).status_code
            == 304
        )
    # another list of the same board has its own tag
    page = api.client.get("/api/board", params={"limit": 1})
    assert page.headers["etag"] != etag
    assert (
        api.client.get(
            "/api/board", params={"limit": 1}, headers={"If-None-Match": etag}
        ).status_code
        == 200
    )
    # a heartbeat moves no `updatedAt`, but the lease it renews is in the list: a new tag
    api.clock.advance(ms=1000)
    beat = api.client.post(f"/api/board/{task['id']}/heartbeat", json={"agent": "alice"})
    assert beat.status_code == 200
    changed = api.client.get("/api/board", headers={"If-None-Match": etag})
    assert changed.status_code == 200
    assert changed.headers["etag"] != etag
    assert changed.json()["tasks"][0]["leaseUntil"] == beat.json()["task"]["leaseUntil"]
    # and the new tag holds until the next write
    assert (
        api.client.get("/api/board", headers={"If-None-Match": changed.headers["etag"]}).status_code
        == 304
    )


def test_pages_and_revalidations_are_read_on_the_event_loop_when_the_reader_is_free(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page and a 304 are read without a thread hop when the board's reader is free this
    instant; the whole list, a page while another thread reads, and any Postgres read (a round
    trip) are read on the pool, with the same answer."""
    import asyncio
    import threading

    for n in range(3):
        api.create(f"t{n}")
    tried: list[str] = []  # where each store read began
    ran: list[str] = []  # where each store read that was not turned away ran

    def here() -> str:
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no loop runs in a pool thread
            return "pool"
        return "loop"

    read = api.board.store.read

    def recorded(work: Any) -> Any:
        tried.append(here())
        result = read(work)
        ran.append(here())
        return result

    monkeypatch.setattr(api.board.store, "read", recorded)
    inline = "pool" if is_postgres(api.path) else "loop"

    def reads(path_params: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
        ran.clear()
        return api.client.get("/api/board", params=path_params, headers=headers or {})

    page = reads({"limit": 2})  # the tag (no page kept for it yet), then the page
    assert len(page.json()["tasks"]) == 2 and ran == (
        ["pool"] if inline == "pool" else 2 * [inline]
    )
    kept = reads({"limit": 2})  # the tag, and the page kept for it: no query
    assert kept.content == page.content and ran == [inline]
    again = reads({"limit": 2}, {"If-None-Match": page.headers["etag"]})
    assert again.status_code == 304 and ran == [inline]
    whole = reads({})
    assert len(whole.json()["tasks"]) == 3 and ran == ["pool"]
    stale = reads({}, {"If-None-Match": '"old"'})
    assert stale.status_code == 200 and ran == [inline, "pool"]  # asked once, listed once

    lock = getattr(api.board.store, "_read_lock", None)
    if lock is None:  # Postgres: every read is a round trip, already on the pool
        return
    # Another thread holds the reader: the page gives way on the loop, waits on the pool.
    tried.clear()
    ran.clear()
    answers: list[Any] = []
    with lock:
        asking = threading.Thread(
            target=lambda: answers.append(api.client.get("/api/board", params={"limit": 2}))
        )
        asking.start()
        deadline = time.monotonic() + 30
        while "pool" not in tried and time.monotonic() < deadline:
            time.sleep(0.005)  # until the pool thread is in the read, waiting for the lock
        assert tried == ["loop", "pool"] and ran == [] and not answers
        assert api.client.get("/healthz").status_code == 200  # the loop answers meanwhile
        assert not answers
    asking.join(timeout=30)
    assert ran == ["pool"]
    assert answers[0].status_code == 200 and ids(answers[0]) == ids(page)


def test_a_page_asked_again_at_the_same_version_is_the_same_bytes_without_a_query(
    api: Api,
) -> None:
    made = [api.create(f"t{n}") for n in range(3)]
    pages = api.client.app.state.service.pages
    first = api.client.get("/api/board", params={"limit": 2})
    misses = pages.misses
    again = api.client.get("/api/board", params={"limit": 2})
    assert again.content == first.content and again.headers["etag"] == first.headers["etag"]
    if not is_postgres(api.path):  # a Postgres page is one round trip: nothing kept to ask
        assert pages.hits == 1 and pages.misses == misses
    # any task write moves the version: the next page is read, and shows the write
    api.clock.advance(ms=10)
    edited = api.client.patch(f"/api/board/{made[2]['id']}", json={"title": "renamed"})
    assert edited.status_code == 200
    after = api.client.get("/api/board", params={"limit": 2})
    assert after.headers["etag"] != first.headers["etag"]
    assert after.json()["tasks"][0]["title"] == "renamed"
    with api.reader() as reader:
        newest = [reader.get_task(made[2]["id"]), reader.get_task(made[1]["id"])]
        assert after.json()["tasks"] == [task.to_json() for task in newest]


def test_the_kept_pages_are_bounded_by_count_and_bytes() -> None:
    from kanban.http.pages import PageCache

    kept = PageCache(entries=3, max_bytes=400)
    for n in range(5):
        kept.put(f"tag{n}", b"x" * 10)
    assert [kept.get(f"tag{n}") is not None for n in range(5)] == [False, False, True, True, True]
    kept.put("big", b"y" * 101)  # more than a quarter of the bytes: not a page to keep
    assert kept.get("big") is None
    kept.put("a", b"a" * 100)
    kept.put("b", b"b" * 100)
    kept.put("c", b"c" * 100)
    kept.put("d", b"d" * 100)  # 4 x 100 > 400 - the oldest goes
    assert kept.get("a") is None and kept.get("d") == b"d" * 100


# -- a walk while agents work -------------------------------------------------------------------

WORKERS = 8


def _agent(db: str, name: str, seconds: float, barrier: Any) -> None:
    """A process that keeps the board moving: dispatch a task, claim the best one, finish it
    into review, approve another agent's work."""
    with Board(db, config=BoardConfig(), reconcile_orphans=False) as board:
        barrier.wait()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            board.create_task(f"{name} new")
            task = board.claim_next(name)
            if task is not None:
                board.heartbeat(task.id, name)
                board.complete(task.id, name)
            for review in board.list_tasks(status="in_review", limit=3):
                if name not in review.holders:
                    with contextlib.suppress(Exception):  # another reviewer was first
                        board.approve(review.id, name)


@pytest.mark.slow
def test_a_walk_of_pages_sees_every_lasting_task_exactly_once_while_8_agents_work(
    api: Api,
) -> None:
    for n in range(300):
        api.board.create_task(f"seeded {n}", priority=n % 5)
    ctx = racing_context()
    barrier = ctx.Barrier(WORKERS + 1)
    procs = [
        ctx.Process(target=_agent, args=(str(api.path), f"agent{n}", 60.0, barrier))
        for n in range(WORKERS)
    ]
    for proc in procs:
        proc.start()
    try:
        barrier.wait(timeout=120)
        time.sleep(0.5)  # the agents are at work
        walks = 0
        while walks < 3:
            walks += 1
            with api.reader() as reader:
                before = {task.id for task in reader.list_tasks()}
            seen: Counter[str] = Counter()
            cursor = None
            while True:
                params: dict[str, Any] = {"limit": 7}
                if cursor is not None:
                    params["cursor"] = cursor
                answer = api.client.get("/api/board", params=params)
                assert answer.status_code == 200, answer.text
                body = answer.json()
                seen.update(task["id"] for task in body["tasks"])
                cursor = body["nextCursor"]
                if cursor is None:
                    break
                time.sleep(0.002)  # let the agents write between pages
            with api.reader() as reader:
                after = {task.id for task in reader.list_tasks()}
            lasting = before & after
            assert not [task for task, count in seen.items() if count > 1]
            assert lasting <= set(seen), sorted(lasting - set(seen))[:5]
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.join(timeout=30)
    with api.reader() as reader:
        statuses = Counter(task.status for task in reader.list_tasks())
    assert statuses["done"] > 0  # the agents did move tasks while the walks ran


def test_the_page_json_is_what_the_route_documents(api: Api) -> None:
    api.create("one")
    schema = api.client.get("/openapi.json").json()
    listed = schema["components"]["schemas"]["TaskList"]
    assert "nextCursor" in listed["properties"]
    body = api.client.get("/api/board", params={"limit": 1}).json()
    assert set(body) == {"tasks", "nextCursor"}
    json.dumps(body)
