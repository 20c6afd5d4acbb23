"""The server keeps the board healthy with nobody calling it: orphan reconciliation at start,
stale-task reconciliation on an interval, and worktree garbage collection."""

import json
import time
from pathlib import Path

import httpx
import pytest

from boardlib import Board, BoardConfig, ManualClock
from tests.cli.conftest import KANBAN, clean_env
from tests.http.conftest import live_server
from tests.http.warm import popen_serve


def wait_for(predicate, timeout_s: float = 15.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_expired_leases_are_released_on_an_interval(tmp_path: Path) -> None:
    with live_server(tmp_path, upkeep=True, reconcile_interval_ms=100) as live:
        api = live.api
        task = api.claimed("alice")
        assert api.stored(task["id"]).status == "in_progress"
        api.clock.advance(ms=BoardConfig().lease_ms + 1)  # alice died: nobody calls anything
        assert wait_for(lambda: api.stored(task["id"]).status == "todo")
        stored = api.stored(task["id"])
        assert (stored.assignee_agent_id, stored.claim_epoch) == (None, 2)
        released = [e for e in api.events() if e.task_id == task["id"]][-1]
        assert (released.kind, released.actor, released.data["assignee"]) == (
            "lease_expired",
            "system",
            "alice",
        )
        service = live.app.state.service
        assert wait_for(lambda: service.janitor is not None and service.janitor.passes >= 1)


@pytest.mark.slow
def test_kanban_serve_releases_dead_claims_as_it_starts(tmp_path: Path) -> None:
    db = tmp_path / "board.db"
    lease = BoardConfig().lease_ms
    long_ago = int(time.time() * 1000) - 3 * lease
    with Board(db, clock=ManualClock(start_ms=long_ago)) as board:
        task = board.create_task("abandoned")
        board.claim(task.id, "ghost")
    process = popen_serve(
        [str(KANBAN), "--db", str(db), "serve", "--port", "0"],
        env=clean_env(KANBAN_WORKTREES=str(tmp_path / "worktrees")),
    )
    try:
        assert process.stdout is not None
        url = json.loads(process.stdout.readline())["listening"]
        # Released before the first request: the pass runs as the board opens.
        with Board(db, read_only=True) as reader:
            stored = reader.get_task(task.id)
        assert (stored.status, stored.assignee_agent_id) == ("todo", None)
        assert httpx.get(f"{url}/api/board/{task.id}").json()["task"]["status"] == "todo"
    finally:
        process.terminate()
        assert process.wait(timeout=30) == 0


def test_the_app_runs_the_lease_pass_as_it_starts(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from kanban.http.app import ServerSettings, create_app

    clock = ManualClock(start_ms=1_800_000_000_000)
    with Board(tmp_path / "board.db", clock=clock) as board:
        task = board.create_task("abandoned")
        board.claim(task.id, "ghost")
        clock.advance(ms=BoardConfig().lease_ms + 1)
        settings = ServerSettings(
            db=board.path, reconcile_interval_ms=3_600_000, worktrees_root=tmp_path / "trees"
        )
        with TestClient(create_app(settings, board=board)):
            assert board.get_task(task.id).status == "todo"  # before any request


def test_stopping_the_upkeep_waits_for_a_pass_under_way_only_as_long_as_asked() -> None:
    """Shutdown has to fit in --graceful: a pass that takes long is left to its daemon thread."""
    import threading

    from boardlib.recovery import StaleTaskReconciler

    running, release = threading.Event(), threading.Event()

    def slow_pass() -> None:
        running.set()
        release.wait(10)

    reconciler = StaleTaskReconciler(slow_pass, interval_s=0.01).start()
    assert running.wait(5)
    started = time.monotonic()
    reconciler.stop(timeout_s=0.2)
    took = time.monotonic() - started
    release.set()
    assert 0.15 < took < 1.0, took
