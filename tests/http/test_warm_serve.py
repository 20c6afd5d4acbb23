"""The warm `kanban serve` (`tests/http/warm.py`) answers as a fresh one does: the same exit code,
stdout and stderr for a refusal, a usage error and help, and a server that is a process of its
own (its own pid and session, signalled directly) exiting 0 on SIGTERM. The HTTP and chaos
tests that start servers lean on this."""

import json
import os
import signal
from pathlib import Path

import httpx
import pytest

from boardlib import Board
from tests.cli.conftest import KANBAN, clean_env
from tests.http.warm import WarmProcess, popen_serve, run_serve

pytestmark = pytest.mark.slow  # servers, fresh and warm


@pytest.mark.parametrize(
    "args",
    [
        ["--db", "missing.db", "serve", "--port", "0"],  # a refusal: exit 2, one JSON line
        ["--db", "board.db", "serve", "--host", "0.0.0.0", "--port", "0"],  # no token: exit 2
        ["--db", "board.db", "serve", "--port", "nope"],  # a usage error
        ["serve", "--help"],
    ],
)
def test_a_warm_start_answers_as_a_fresh_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    Board(tmp_path / "board.db").close()
    answers = []
    monkeypatch.delenv("KANBAN_TEST_FRESH_PROCESSES", raising=False)
    for fresh in (False, True):
        if fresh:
            monkeypatch.setenv("KANBAN_TEST_FRESH_PROCESSES", "1")
        done = run_serve([str(KANBAN), *args], env=clean_env(), cwd=tmp_path)
        answers.append((done.returncode, done.stdout, done.stderr))
    warm, fresh_answer = answers
    assert warm == fresh_answer
    assert warm[0] == (0 if "--help" in args else 2), warm


def test_a_warm_server_is_a_process_of_its_own_and_stops_on_sigterm(tmp_path: Path) -> None:
    db = tmp_path / "board.db"
    Board(db).close()
    server = popen_serve([str(KANBAN), "--db", str(db), "serve", "--port", "0"], env=clean_env())
    try:
        assert isinstance(server, WarmProcess)
        assert server.stdout is not None
        ready = json.loads(server.stdout.readline())
        assert ready["db"] == str(db) and ready["listening"].startswith("http://127.0.0.1:")
        assert httpx.get(f"{ready['listening']}/healthz").json() == {"ok": True}
        assert server.pid != os.getpid() and os.getpgid(server.pid) == server.pid
        assert server.poll() is None
        os.killpg(server.pid, signal.SIGTERM)  # its group, as the chaos tests stop theirs
        assert server.wait(timeout=30) == 0
    finally:
        server.kill()
    assert server.poll() == 0
    out, _ = server.communicate(timeout=10)
    assert out == ""  # after the ready line, nothing more on stdout
