"""A task under its running verification gate waits on the gate, not on a person: the inbox (every
surface's) leaves it out until the verdict, and a gate whose process was killed with -9 gives it
back at once. Real repositories, a real verify command, a real killed process."""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from boardlib import Board
from boardlib import attention as a
from boardlib import transitions as t
from boardlib.events import EventKind
from boardlib.processes import HOST_ID_VARIABLE, process_gone
from boardlib.worktrees import Worktrees
from tests.worktrees.conftest import make_env, set_verify

WAIT_S = 30.0


def waiting_verify(folder: Path) -> str:
    """A verify command that says it started, then waits for `go` (passing) or forever."""
    return f"touch {folder}/started; while [ ! -e {folder}/go ]; do sleep 0.05; done"


def until(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def inbox_of(path: Path, clock) -> list[tuple[str, str | None]]:
    """The inbox as another process reads it: its own board on the file."""
    with Board(path, clock=clock) as board:
        return [(item.kind, item.task_id) for item in board.inbox().items]


@pytest.fixture
def env(tmp_path, monkeypatch):
    e = make_env(tmp_path, monkeypatch, verify_timeout_s=60)
    yield e
    e.board.close()


def test_the_inbox_leaves_out_a_task_under_its_gate_and_lists_what_the_verdict_makes_it(
    env,
) -> None:
    task_id = env.task()
    path = Path(env.trees.provision(task_id, env.repo).worktree.worktree_path)
    signals = env.tmp / "signals"
    signals.mkdir()
    set_verify(path, waiting_verify(signals))
    (path / "app.py").write_text("def answer():\n    return 41\n")
    done: list[object] = []
    worker = threading.Thread(target=lambda: done.append(env.trees.complete(task_id, "alice")))
    worker.start()
    try:
        until(lambda: (signals / "started").exists(), "the verify command never started")
        board_path = env.tmp / "board.db"
        with Board(board_path, clock=env.clock) as other:
            assert other.get_task(task_id).status == t.IN_REVIEW
        assert inbox_of(board_path, env.clock) == []  # was [("review", task_id)]
    finally:
        (signals / "go").touch()
        worker.join(WAIT_S)
    assert done and env.board.get_task(task_id).status == t.DONE
    assert inbox_of(env.tmp / "board.db", env.clock) == [(a.UNLANDED, task_id)]


CHILD = """
import sys
from boardlib import Board
from boardlib.worktrees import Worktrees
with Board(sys.argv[1]) as board:
    Worktrees(board, verify_timeout_s=600).complete(sys.argv[2], "alice")
"""


def test_a_gate_killed_with_minus_9_gives_its_task_back_to_the_inbox(env) -> None:
    """The completing process killed mid-gate: its task stays in review, and a gate whose
    process is gone counts as ended (as a dead lander's turn), or it would wait unseen for ever.
    Completed again, the gate runs again, the task unlisted meanwhile."""
    board_path = env.tmp / "board.db"
    env.board.close()
    with Board(board_path) as board:  # the system's clock, as the child's: the lease holds
        task_id = board.create_task("Fix the answer").id
        board.claim(task_id, "alice")
        path = Path(Worktrees(board).provision(task_id, env.repo).worktree.worktree_path)
    signals = env.tmp / "signals"
    signals.mkdir()
    set_verify(path, waiting_verify(signals))
    (path / "app.py").write_text("def answer():\n    return 41\n")
    child_env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(board_path), task_id], env=child_env)
    try:
        until(
            lambda: (signals / "started").exists() or child.poll() is not None,
            "the verify command never started",
        )
        assert child.poll() is None, "the completing process ended early"
        # Its own clock: the gate's time bound is the system clock's, as the child wrote it.
        with Board(board_path) as board:
            assert board.get_task(task_id).status == t.IN_REVIEW
            assert [(i.kind, i.task_id) for i in board.inbox().items] == []
        os.kill(child.pid, signal.SIGKILL)
        child.wait(WAIT_S)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    with Board(board_path) as board:
        assert board.get_task(task_id).status == t.IN_REVIEW
        kinds = [event.kind for event in board.events(task_id=task_id)]
        assert kinds[-1] == EventKind.VERIFICATION_STARTED  # no verdict, no stop: just dead
        assert [(i.kind, i.task_id) for i in board.inbox().items] == [(a.REVIEW, task_id)]
        (signals / "started").unlink()
        trees = Worktrees(board, verify_timeout_s=60)
        result: list[object] = []
        worker = threading.Thread(target=lambda: result.append(trees.complete(task_id, "alice")))
        worker.start()
        try:
            until(lambda: (signals / "started").exists(), "the gate did not run again")
            assert [(i.kind, i.task_id) for i in board.inbox().items] == []
        finally:
            (signals / "go").touch()
            worker.join(WAIT_S)
        assert result and board.get_task(task_id).status == t.DONE
        assert [(i.kind, i.task_id) for i in board.inbox().items] == [(a.UNLANDED, task_id)]


BEATING_CHILD = """
import sys
from boardlib import Board
from boardlib.worktrees import Worktrees
with Board(sys.argv[1]) as board:
    Worktrees(board, verify_timeout_s=600).complete(sys.argv[2], "alice")
"""
BEAT_S = 0.2  # the child's beat (KANBAN_GATE_BEAT_S): three missed, 0.6 s


def test_a_gate_killed_on_another_machine_gives_its_task_back_in_three_beats(
    env, monkeypatch
) -> None:
    """Another machine cannot see a gate's process go: a gate killed with -9 there held its task
    out of the inbox until its bound (the verify timeout and a minute: 11 minutes by default).
    The gate beats; three beats missed, it is dead wherever read. Machine B, whose gate runs, is
    played with KANBAN_HOST_ID; this process reads as machine A."""
    monkeypatch.setenv(HOST_ID_VARIABLE, "machine-a")
    board_path = env.tmp / "board.db"
    env.board.close()
    with Board(board_path) as board:
        task_id = board.create_task("Fix the answer").id
        board.claim(task_id, "alice")
        path = Path(Worktrees(board).provision(task_id, env.repo).worktree.worktree_path)
    signals = env.tmp / "signals"
    signals.mkdir()
    set_verify(path, waiting_verify(signals))
    (path / "app.py").write_text("def answer():\n    return 41\n")
    child_env = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        HOST_ID_VARIABLE: "machine-b",
        "KANBAN_GATE_BEAT_S": str(BEAT_S),
    }
    child = subprocess.Popen(
        [sys.executable, "-c", BEATING_CHILD, str(board_path), task_id], env=child_env
    )
    try:
        until(
            lambda: (signals / "started").exists() or child.poll() is not None,
            "the verify command never started",
        )
        assert child.poll() is None, "the completing process ended early"
        with Board(board_path) as board:
            time.sleep(5 * BEAT_S)  # past three beats from its start: its beats keep it alive
            found = board.inbox()
            assert found.items == []
            assert [gate.task_id for gate in found.verifying] == [task_id]
            assert board.get_task(task_id).last_heartbeat_at is not None  # it beat
        os.kill(child.pid, signal.SIGKILL)
        child.wait(WAIT_S)
        killed = time.monotonic()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    with Board(board_path) as board:
        [started] = [e for e in board.events(task_id=task_id) if e.kind == "verification_started"]
        assert not process_gone(started.data["holder"])  # machine B's: not seen to go from here
        assert started.data["until"] - started.created_at > 600_000  # the bound: 11 minutes
        until(lambda: board.inbox().items != [], "the killed gate still hides its task")
        back_s = time.monotonic() - killed
        assert [(i.kind, i.task_id) for i in board.inbox().items] == [(a.REVIEW, task_id)]
        assert board.inbox().verifying == []
        assert back_s < 3 * BEAT_S + 5.0, back_s  # three beats and a read, not 11 minutes
