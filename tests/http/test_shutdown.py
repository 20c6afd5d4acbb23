"""`kanban serve` always leaves within --graceful (issue 29's review of every long wait at
shutdown), and within --graceful + 2 s whatever it got stuck on (the watchdog)."""

import concurrent.futures
import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from boardlib import Board
from boardlib.errors import ServerReason
from kanban.http.envelopes import RETRY_AFTER_S, SHUTTING_DOWN_MESSAGE
from tests.backends import is_postgres
from tests.cli.conftest import KANBAN, clean_env
from tests.http.warm import popen_serve
from tests.worktrees.conftest import GIT_ENV, make_repo


def ready_url(process: "subprocess.Popen[str]", log: Path) -> str:
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line, f"the server did not start: {log.read_text()}"
    return str(json.loads(line)["listening"])


def stop(process: "subprocess.Popen[str]", within_s: float) -> tuple[int | None, float]:
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    try:
        code: int | None = process.wait(timeout=within_s + 10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)
        code = None
    return code, time.monotonic() - started


@pytest.mark.slow
def test_a_request_still_running_at_the_deadline_is_left_behind(
    tmp_path: Path, board_path: Path
) -> None:
    """A verify gate longer than --graceful: its request is cut off (the client gets an error),
    its thread is not waited for, and the server still checkpoints and exits 0 in time."""
    graceful = 2.0  # as passed below
    repo = make_repo(tmp_path / "repo")
    Board(board_path).close()
    log = tmp_path / "server.log"
    git = {key: GIT_ENV[key] for key in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")}
    env = clean_env(KANBAN_WORKTREES=str(tmp_path / "state" / "worktrees"), **git)
    pid_file = tmp_path / "verify.pid"
    with log.open("w") as stderr:
        process = popen_serve(
            [str(KANBAN), "--db", str(board_path), "serve", "--port", "0", "--graceful", "2"],
            env=env,
            stderr=stderr,
        )
    try:
        url = ready_url(process, log)
        with httpx.Client(base_url=url, timeout=60) as http:
            task = http.post("/api/board", json={"title": "long gate"}).json()["task"]
            http.post(f"/api/board/{task['id']}/claim", json={"assigneeAgentId": "alice"})
            made = http.post(f"/api/board/{task['id']}/workspace", json={"repoPath": str(repo)})
            worktree = Path(made.json()["worktree"]["worktreePath"])
            verify = f"echo $$ > {pid_file}; exec sleep 60"
            handoff = {"handoffFrom": "alice", "runtime": "test", "commands": {"verify": verify}}
            answer = http.post(f"/api/board/{task['id']}/workspace/handoff", json=handoff)
            assert answer.status_code == 200
            (worktree / "app.py").write_text("def answer():\n    return 43\n")
            result: dict[str, Any] = {}

            def complete() -> None:
                try:
                    body = {"action": "complete"}
                    got = http.patch(f"/api/board/{task['id']}/workspace", json=body)
                    result["status"] = got.status_code
                    result["headers"] = dict(got.headers)
                    result["body"] = got.text
                except httpx.HTTPError as error:
                    result["error"] = repr(error)

            in_flight = threading.Thread(target=complete)
            in_flight.start()
            deadline = time.monotonic() + 20
            while not pid_file.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert pid_file.exists(), "the verify command did not start"
            code, took = stop(process, graceful)
            in_flight.join(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
        if pid_file.exists() and pid_file.read_text().strip():
            # the gate's own session outlives the server; the test cleans up after it
            with contextlib.suppress(ProcessLookupError):
                os.killpg(int(pid_file.read_text()), signal.SIGKILL)
    text = log.read_text()
    assert code == 0, f"exit {code}:\n{text[-3000:]}"
    assert took < graceful, f"shutdown took {took:.2f} s, --graceful is {graceful} s"
    # cut off, not answered as done: in the route's envelope, retryable (was text/plain 500)
    assert result.get("status") == 503, result
    assert result["headers"]["retry-after"] == str(RETRY_AFTER_S)
    assert json.loads(result["body"]) == {
        "ok": False,
        "error": SHUTTING_DOWN_MESSAGE,
        "reason": ServerReason.SHUTTING_DOWN,
    }
    assert "request threads still running past --graceful" in text
    if not is_postgres(board_path):
        wal = Path(f"{board_path}-wal")
        assert not wal.exists() or wal.stat().st_size == 0
    with Board(board_path, read_only=True) as board:  # an interrupted gate, which `complete`
        assert board.get_task(task["id"]).status == "in_review"  # by its builder runs again


@pytest.mark.slow
def test_a_lease_verb_cut_off_at_the_deadline_answers_in_its_envelope(tmp_path: Path) -> None:
    """The fast lane's claim-next, waiting for a write lock the test holds, is still running at
    the deadline: the seed's `{ok: false, error: <reason>}` of the lease routes, 503 with
    Retry-After (was uvicorn's text/plain 500)."""
    db = tmp_path / "board.db"
    with Board(db) as board:
        board.create_task("waits for the lock")
    log = tmp_path / "server.log"
    env = clean_env(KANBAN_RETRY_BUDGET_MS="30000")  # the claim outwaits --graceful
    with log.open("w") as stderr:
        process = popen_serve(
            [str(KANBAN), "--db", str(db), "serve", "--port", "0", "--graceful", "2"],
            env=env, stderr=stderr,
        )  # fmt: skip
    holder = sqlite3.connect(db, isolation_level=None, timeout=30)
    try:
        url = ready_url(process, log)
        holder.execute("BEGIN IMMEDIATE")
        with httpx.Client(base_url=url, timeout=60) as http:
            waiting = concurrent.futures.ThreadPoolExecutor(1).submit(
                http.post, "/api/board/claim-next", json={"agent": "alice"}
            )
            time.sleep(0.5)
            assert not waiting.done(), waiting.result()
            process.send_signal(signal.SIGTERM)
            answer = waiting.result(timeout=10)
        holder.close()  # the checkpoint on the way out waits for it
        code = process.wait(timeout=10)
    finally:
        holder.close()
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
    assert code == 0, log.read_text()[-3000:]
    assert answer.status_code == 503, answer.text
    assert answer.headers["retry-after"] == str(RETRY_AFTER_S)
    assert answer.json() == {
        "ok": False,
        "error": ServerReason.SHUTTING_DOWN,
        "reason": ServerReason.SHUTTING_DOWN,
        "message": SHUTTING_DOWN_MESSAGE,
    }


STUBBORN_SERVER = textwrap.dedent(
    """
    import asyncio, sys
    import kanban.http.server as server
    from boardlib import Board
    from kanban.http.service import ServerSettings

    made = server.create_app

    def with_a_stubborn_task(settings, *, board=None):
        app = made(settings, board=board)

        @app.get("/stubborn")
        async def stubborn():
            async def refuse():  # what the old feed's orphaned waiters did: never be cancelled
                while True:
                    try:
                        await asyncio.sleep(3600)
                    except asyncio.CancelledError:
                        pass

            app.state.stubborn = asyncio.create_task(refuse())
            return {"ok": True}

        return app

    server.create_app = with_a_stubborn_task
    db, graceful = sys.argv[1], float(sys.argv[2])
    settings = ServerSettings(db=db, upkeep=False)
    sys.exit(server.serve(settings, Board(db), server.bind("127.0.0.1", 0), graceful_s=graceful))
    """
)


# 3.0 waits about 4.5 s for the watchdog by nature: the slow run; 1.0 proves it in the fast loop
@pytest.mark.parametrize("graceful", [1.0, pytest.param(3.0, marks=pytest.mark.slow)])
def test_the_watchdog_ends_a_shutdown_that_hangs_within_graceful_plus_2_s(
    tmp_path: Path, board_path: Path, graceful: float
) -> None:
    from kanban.http.server import WATCHDOG_AFTER_S, WATCHDOG_EXIT

    Board(board_path).close()
    log = tmp_path / "server.log"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-c", STUBBORN_SERVER, str(board_path), str(graceful)],
            env=clean_env(),
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
    try:
        url = ready_url(process, log)
        with httpx.Client(base_url=url, timeout=30) as http:
            assert http.get("/stubborn").json() == {"ok": True}
            assert http.post("/api/board", json={"title": "written"}).status_code == 200
        code, took = stop(process, graceful + 2)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
    text = log.read_text()
    assert code == WATCHDOG_EXIT, f"exit {code} after {took:.2f} s:\n{text[-3000:]}"
    assert graceful + WATCHDOG_AFTER_S <= took < graceful + 2, f"took {took:.2f} s"
    assert "shutdown did not finish within --graceful + 2 s" in text
    assert "Current thread 0x" in text and "Thread 0x" in text  # every thread's stack, to read
    if not is_postgres(board_path):  # the watchdog's checkpoint: the board is whole on its own
        wal = Path(f"{board_path}-wal")
        assert not wal.exists() or wal.stat().st_size == 0
    with Board(board_path, read_only=True) as board:
        assert [task.title for task in board.all_tasks()] == ["written"]
