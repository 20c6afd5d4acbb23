"""The real `kanban serve` in a subprocess on a free loopback port: racing clients, per-agent
tokens, refusing an unsafe binding, and a clean SIGTERM (in-flight requests finish, the WAL is
checkpointed, exit 0)."""

import json
import os
import random
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from boardlib import Board
from tests.cli.conftest import KANBAN, Kanban, clean_env
from tests.http.warm import WarmProcess, popen_serve, run_serve
from tests.worktrees.conftest import GIT_ENV, make_repo


@dataclass
class Served:
    url: str
    process: "subprocess.Popen[str] | WarmProcess"
    db: Path

    def stop(self, timeout: float = 30) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=timeout)


@contextmanager
def kanban_serve(
    tmp_path: Path, *args: str, db: Path | None = None, **env: str
) -> Iterator[Served]:
    """`kanban serve` on the board at `db` (a file or a Postgres URL; default a new file)."""
    db = db if db is not None else tmp_path / "board.db"
    Board(db).close()
    process = popen_serve(
        [str(KANBAN), "--db", str(db), "serve", "--port", "0", *args],
        env=clean_env(KANBAN_WORKTREES=str(tmp_path / "state" / "worktrees"), **env),
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line, (
            f"kanban serve did not start: {process.stderr.read() if process.stderr else ''}"
        )
        ready = json.loads(line)
        yield Served(url=ready["listening"], process=process, db=db)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


@pytest.mark.slow
def test_the_ready_line_names_the_url_and_the_board(tmp_path: Path, board_path: Path) -> None:
    with kanban_serve(tmp_path, db=board_path) as served:
        assert served.url.startswith("http://127.0.0.1:")
        assert httpx.get(f"{served.url}/healthz").json() == {"ok": True}
        assert served.stop() == 0


@pytest.mark.slow
@pytest.mark.parametrize("how", ["removed", "replaced"])
def test_a_board_file_removed_under_the_server_is_refused_never_lost(
    tmp_path: Path, how: str
) -> None:
    """With the board file removed under a running server, writes were answered 200 into the
    unlinked file (lost when the server stopped), or, on a server that had only read, a new
    connection made an empty file there and answered 500."""
    db = tmp_path / "board.db"
    with kanban_serve(tmp_path, db=db) as served:
        made = httpx.post(f"{served.url}/api/board", json={"title": "before"})
        assert made.status_code == 200, made.text
        db.unlink()  # as `rm` does
        if how == "replaced":  # another board now at the path: the server's file is not it
            Board(tmp_path / "other.db").close()
            (tmp_path / "other.db").replace(db)
        before = sorted(p.name for p in tmp_path.iterdir())
        for call in (
            lambda: httpx.post(f"{served.url}/api/board", json={"title": "after"}),
            lambda: httpx.get(f"{served.url}/api/board"),
        ):
            answer = call()
            assert answer.status_code == 503, answer.text
            assert answer.json()["reason"] == "database_unavailable"
            assert f"was {how}" in answer.json()["error"]
        assert sorted(p.name for p in tmp_path.iterdir()) == before  # no file made
        assert served.stop() == 0


@pytest.mark.slow
def test_access_log_writes_each_request_on_stderr_inert(tmp_path: Path, board_path: Path) -> None:
    """Found by hand: `--access-log` logged nothing (uvicorn gave its access logger our warning
    level), and uvicorn's access lines go to stdout, where the ready line is the one document."""
    with kanban_serve(tmp_path, "--access-log", db=board_path) as served:
        httpx.get(f"{served.url}/healthz")
        httpx.post(f"{served.url}/api/board/claim-next", json={"agent": "ada"})
        httpx.get(f"{served.url}/api/board/TASK-1%1b%5b2J%07")  # a path holding escapes
        assert served.stop() == 0
        out, err = served.process.communicate(timeout=10)
    assert out == ""  # after the ready line, nothing more on stdout
    lines = [line for line in err.splitlines() if '" ' in line]
    assert len(lines) == 3, err
    assert '"GET /healthz HTTP/1.1" 200' in lines[0]
    assert '"POST /api/board/claim-next HTTP/1.1" 204' in lines[1]
    assert "%1B%5B2J%07" in lines[2] and "\x1b" not in err and "\x07" not in err
    with kanban_serve(tmp_path, db=board_path) as quiet:  # without it, no line per request
        httpx.get(f"{quiet.url}/healthz")
        assert quiet.stop() == 0
        assert '"GET /healthz' not in quiet.process.communicate(timeout=10)[1]


@pytest.mark.slow  # 16 clients racing
def test_16_clients_race_for_200_tasks_each_won_exactly_once(
    tmp_path: Path, board_path: Path
) -> None:
    with kanban_serve(tmp_path, db=board_path) as served:
        with Board(served.db) as board:
            ids = [board.create_task(f"task {n}").id for n in range(200)]
        barrier = threading.Barrier(16)
        outcomes: list[list[tuple[str, int, Any]]] = [[] for _ in range(16)]

        def client(n: int) -> None:
            order = ids[:]
            random.Random(n).shuffle(order)
            with httpx.Client(base_url=served.url, timeout=60) as http:
                barrier.wait()
                for task_id in order:
                    answer = http.post(
                        f"/api/board/{task_id}/claim", json={"assigneeAgentId": f"agent-{n}"}
                    )
                    outcomes[n].append((task_id, answer.status_code, answer.json()))

        threads = [threading.Thread(target=client, args=(n,)) for n in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
        statuses = Counter(status for results in outcomes for _, status, _ in results)
        assert statuses == {200: 200, 409: 200 * 15}, statuses
        winners: dict[str, str] = {}
        for n, results in enumerate(outcomes):
            for task_id, status, body in results:
                if status == 200:
                    assert task_id not in winners, f"{task_id} won twice"
                    winners[task_id] = f"agent-{n}"
                else:
                    assert body == {
                        "ok": False,
                        "error": "conflict",
                        "reason": "conflict",
                        "message": body["message"],
                        "id": task_id,
                        "current": "in_progress",
                        "assignee": body["assignee"],
                    }
        assert sorted(winners) == sorted(ids)
        with Board(served.db, read_only=True) as board:
            for task_id, agent in winners.items():
                task = board.get_task(task_id)
                assert (task.status, task.assignee_agent_id, task.claim_epoch) == (
                    "in_progress",
                    agent,
                    1,
                )
            claimed = [e for e in board.events(limit=10_000) if e.kind == "task_claimed"]
            assert len(claimed) == 200
        assert served.stop() == 0


def write_tokens(path: Path) -> Path:
    path.write_text(
        "alice-secret-0123456789 agent:alice\n"
        "bob-secret-0123456789ab agent:bob\n"
        "dana-secret-0123456789a operator:dana\n"
    )
    os.chmod(path, 0o600)
    return path


@pytest.mark.slow
def test_a_per_agent_token_cannot_act_as_another_agent(tmp_path: Path) -> None:
    tokens = write_tokens(tmp_path / "tokens")
    with kanban_serve(tmp_path, "--tokens", str(tokens)) as served:
        alice = httpx.Client(
            base_url=served.url, headers={"Authorization": "Bearer alice-secret-0123456789"}
        )
        bob = httpx.Client(
            base_url=served.url, headers={"Authorization": "Bearer bob-secret-0123456789ab"}
        )
        dana = httpx.Client(
            base_url=served.url, headers={"Authorization": "Bearer dana-secret-0123456789a"}
        )
        assert httpx.get(f"{served.url}/api/board").status_code == 401
        task = dana.post("/api/board", json={"title": "work"}).json()["task"]
        as_bob = alice.post(f"/api/board/{task['id']}/claim", json={"assigneeAgentId": "bob"})
        assert as_bob.status_code == 403 and as_bob.json()["error"] == "forbidden"
        claimed = alice.post("/api/board/claim-next").json()["task"]
        assert claimed["assigneeAgentId"] == "alice"
        beat = bob.post(f"/api/board/{task['id']}/heartbeat", json={"agent": "alice"})
        assert beat.status_code == 403 and beat.json()["error"] == "forbidden"
        assert alice.post(f"/api/board/{task['id']}/complete").status_code == 200
        own = alice.post(f"/api/board/{task['id']}/approve")
        assert own.status_code == 403 and own.json()["error"] == "self_review"
        posing = alice.post(f"/api/board/{task['id']}/approve", json={"agent": "bob"})
        assert posing.status_code == 403 and posing.json()["error"] == "forbidden"
        with Board(served.db, read_only=True) as board:
            assert board.get_task(task["id"]).status == "in_review"
        assert bob.post(f"/api/board/{task['id']}/approve").status_code == 200
        with Board(served.db, read_only=True) as board:
            assert board.get_task(task["id"]).status == "done"
            actors = [(e.kind, e.actor) for e in board.events(task_id=task["id"])]
        assert actors[-1] == ("status_changed", "bob")
        assert ("task_created", "operator:dana") in actors
        for client in (alice, bob, dana):
            client.close()
        assert served.stop() == 0


@pytest.mark.slow
def test_a_non_loopback_host_without_a_token_refuses_to_start(tmp_path: Path) -> None:
    done = run_serve(
        [str(KANBAN), "--db", str(tmp_path / "b.db"), "serve", "--host", "0.0.0.0", "--port", "0"],
        env=clean_env(),
    )
    assert done.returncode == 2
    assert "refusing to serve on 0.0.0.0 without a token" in done.stderr
    assert "--token" in done.stderr and done.stdout == ""
    assert not (tmp_path / "b.db").exists()


@pytest.mark.slow
def test_a_non_loopback_host_with_a_token_starts(tmp_path: Path) -> None:
    with kanban_serve(tmp_path, "--host", "0.0.0.0", KANBAN_TOKEN="a-token-0123456789") as served:
        port = served.url.rsplit(":", 1)[1]
        local = f"http://127.0.0.1:{port}"
        assert httpx.get(f"{local}/api/board").status_code == 401
        with_token = httpx.get(
            f"{local}/api/board", headers={"Authorization": "Bearer a-token-0123456789"}
        )
        assert with_token.status_code == 200
        assert served.stop() == 0


@pytest.mark.slow
def test_a_taken_port_fails_fast_saying_what_to_change(tmp_path: Path) -> None:
    """A taken port, or an address of no interface here, is input to change (exit 2, typed),
    not an unexpected failure (exit 1), and the line says which option to change."""
    with kanban_serve(tmp_path) as served:
        port = served.url.rsplit(":", 1)[1]
        for args, field, where in (
            (("--port", port), "port", f"127.0.0.1:{port}"),
            (("--host", "192.0.2.1", "--token", "a-token-0123456789"), "host", "192.0.2.1:"),
        ):
            done = run_serve([str(KANBAN), "--db", str(served.db), "serve", *args], env=clean_env())
            assert done.returncode == 2 and done.stdout == "", done.stderr
            error = json.loads(done.stderr)
            assert (error["reason"], error["field"]) == ("invalid_input", field)
            assert f"cannot listen on {where}" in error["error"]
            assert f" --{field} " in error["error"]  # which option to change
        assert served.stop() == 0


@pytest.fixture
def git_env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return {key: GIT_ENV[key] for key in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")}


@pytest.mark.slow  # a server drained on SIGTERM
def test_sigterm_lets_in_flight_requests_finish_checkpoints_and_exits_0(
    tmp_path: Path, git_env: dict[str, str]
) -> None:
    repo = make_repo(tmp_path / "repo")
    with (
        kanban_serve(tmp_path, **git_env) as served,
        httpx.Client(base_url=served.url, timeout=60) as http,
    ):
        task = http.post("/api/board", json={"title": "slow gate"}).json()["task"]
        http.post(f"/api/board/{task['id']}/claim", json={"assigneeAgentId": "alice"})
        made = http.post(f"/api/board/{task['id']}/workspace", json={"repoPath": str(repo)})
        worktree = Path(made.json()["worktree"]["worktreePath"])
        handoff = {"handoffFrom": "alice", "runtime": "test", "commands": {"verify": "sleep 2"}}
        assert (
            http.post(f"/api/board/{task['id']}/workspace/handoff", json=handoff).status_code == 200
        )
        (worktree / "app.py").write_text("def answer():\n    return 43\n")
        # A follower holds a stream open; shutdown must not wait on it forever.
        follower = httpx.Client(base_url=served.url, timeout=60)
        stream = follower.stream(
            "GET", "/api/board/events", headers={"Accept": "text/event-stream"}
        )
        stream.__enter__()
        result: dict[str, Any] = {}

        def complete() -> None:
            answer = http.patch(f"/api/board/{task['id']}/workspace", json={"action": "complete"})
            result["status"], result["body"] = answer.status_code, answer.json()

        in_flight = threading.Thread(target=complete)
        in_flight.start()
        time.sleep(0.8)  # the gate is running `sleep 2`
        started = time.monotonic()
        served.process.send_signal(signal.SIGTERM)
        code = served.process.wait(timeout=60)
        in_flight.join(timeout=60)
        took = time.monotonic() - started
        stream.__exit__(None, None, None)
        follower.close()
    assert code == 0
    assert result["status"] == 200, result
    assert result["body"]["verified"] == "pass" and result["body"]["taskStatus"] == "done"
    assert took < 20
    wal = Path(f"{served.db}-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    with Board(served.db, read_only=True) as board:
        assert board.get_task(task["id"]).status == "done"


def test_serve_help_names_its_options_and_imports_no_web_stack(tmp_path: Path) -> None:
    from tests.cli.test_hygiene import imported_modules

    kanban = Kanban(tmp_path / "board.db")
    result = kanban.run("serve", "--help")
    assert result.code == 0
    for option in ("--host", "--port", "--token", "--tokens", "--repo-root", "--graceful"):
        assert option in result.out
    code, modules = imported_modules(kanban, "serve", "--help")
    assert code == 0 and not modules & {"fastapi", "uvicorn", "starlette", "sse_starlette"}
    assert "  serve " in kanban.run("--help").out


@pytest.mark.slow
def test_workers_share_the_port_and_the_board(tmp_path: Path, board_path: Path) -> None:
    """`--workers 2`: two server processes on one socket, each with its own connection to the
    board. Claims stay atomic across them, and SIGTERM stops both cleanly."""
    with kanban_serve(tmp_path, "--workers", "2", db=board_path) as served:
        workers = Path(f"/proc/{served.process.pid}/task/{served.process.pid}/children")
        pids = [int(pid) for pid in workers.read_text().split()]
        assert len(pids) == 2
        with Board(served.db) as board:
            ids = [board.create_task(f"task {n}").id for n in range(100)]
        barrier = threading.Barrier(8)
        won: list[str] = []
        statuses: Counter[int] = Counter()
        lock = threading.Lock()

        def client(n: int) -> None:
            with httpx.Client(base_url=served.url, timeout=60) as http:
                barrier.wait()
                while True:
                    answer = http.post("/api/board/claim-next", json={"agent": f"a{n}"})
                    with lock:
                        statuses[answer.status_code] += 1
                        if answer.status_code == 200:
                            won.append(answer.json()["task"]["id"])
                    if answer.status_code != 200:
                        return

        threads = [threading.Thread(target=client, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
        assert statuses == {200: 100, 204: 8}
        assert sorted(won) == sorted(ids)
        assert served.stop() == 0
        for pid in pids:
            assert (
                not Path(f"/proc/{pid}").exists()
                or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()
            )
