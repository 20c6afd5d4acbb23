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
from typing import Any

import pytest

from boardlib import Board, BoardConfig
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


def worked_on_behind_a_waiting_gate(env: Any) -> tuple[Path, str, Path]:
    """A task alice holds in its worktree, edited, whose verify command waits for `signals/go`
    (on the board file, with the system's clock, as a child process's: the lease holds): the
    board's path, the task and the signals' folder."""
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
    return board_path, task_id, signals


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
    board_path, task_id, signals = worked_on_behind_a_waiting_gate(env)
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
    board_path, task_id, signals = worked_on_behind_a_waiting_gate(env)
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


READER = """
import sys, time
from pathlib import Path
from boardlib import Board
from boardlib import attention as a
from boardlib import transitions as t
from boardlib.events import EventKind
stop, task_id = Path(sys.argv[2]), sys.argv[3]
seen, reads = [], 0
with Board(sys.argv[1]) as board:
    print("reading", flush=True)
    def look(tx):  # one snapshot: the task, its newest move or gate event, the inbox rule's
        task, entry = tx.task(task_id), tx.gate_entry(task_id)
        kinds = [i.kind for i in a.collect(tx, board.now(), board.config) if i.task_id == task_id]
        time.sleep(0.03)  # a busy writer's turn: the gate's next write queues behind it
        return task["status"], entry["kind"] if entry is not None else None, kinds
    while not stop.exists():
        status, newest, kinds = board.store.write(look)
        reads += 1
        if status == t.IN_REVIEW and newest == EventKind.VERIFICATION_RECORDED:
            seen.append(("verdict in, still in review", newest))
        if a.REVIEW in kinds:
            seen.append(("needs review", status))
print(reads, len(seen), seen[:3], flush=True)
"""


ROUNDS = 8  # gate runs: seven fail (back to the builder), the last passes (done)


def test_no_reader_sees_a_gate_verdict_without_its_move(env) -> None:
    """The gate recorded its verdict, then moved the task in a second write: a reader between
    saw a task in review with a verdict and no gate judging it ("needs review" rang). A reader
    process polls the board as fast as it can while eight gates judge the task (seven fail: back
    to the builder; the last passes: done), reading in a write turn of its own that it holds a
    moment (a busy board: the gate's next write queues behind it, holding the old window open
    for it); no snapshot of its holds the verdict without the move, nor the
    task in the inbox as waiting for review."""
    board_path = env.tmp / "board.db"
    env.board.close()
    stop = env.tmp / "stop-reading"
    child_env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    config = BoardConfig(verification_attempt_budget=ROUNDS)
    with Board(board_path, config=config) as board:  # the system's clock, as the reader's
        task_id = board.create_task("Fix the answer").id
        board.claim(task_id, "alice")
        trees = Worktrees(board, verify_timeout_s=60)
        path = Path(trees.provision(task_id, env.repo).worktree.worktree_path)
        reader = subprocess.Popen(
            [sys.executable, "-c", READER, str(board_path), str(stop), task_id],
            env=child_env, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            assert reader.stdout is not None and reader.stdout.readline() == "reading\n"
            set_verify(path, f"test -e {env.tmp}/pass")
            for round in range(1, ROUNDS + 1):
                if round == ROUNDS:
                    (env.tmp / "pass").touch()
                (path / "app.py").write_text(f"def answer():\n    return {100 + round}\n")
                trees.complete(task_id, "alice")
            assert board.get_task(task_id).status == t.DONE, board.get_task(task_id).blocked_reason
        finally:
            stop.touch()
            try:
                out, _ = reader.communicate(timeout=WAIT_S)
            finally:
                if reader.poll() is None:
                    reader.kill()
                    reader.wait()
    reads, seen = out.split()[:2]
    assert int(reads) > ROUNDS, out  # it did read while the gates ran
    assert int(seen) == 0, out


def test_each_gate_verdict_and_its_move_are_one_transaction(land, backend) -> None:
    """Read back from the store itself: on Postgres each row's `xmin` names the transaction that
    wrote it, and every gate run's `verification_recorded` shares it with the move that follows
    (back to the builder, then done); the old gate wrote them in two. SQLite keeps no such mark:
    there the two events are neighbours in the log, at the same time."""
    task_id, path = land.task_with({"app.py": "x = 1\n"}, verify=f"test -e {land.tmp}/pass",
                                   finish="none")  # fmt: skip
    land.trees.complete(task_id, "alice")  # fails: back to alice
    (path / "app.py").write_text("x = 2\n")
    (land.tmp / "pass").touch()
    land.trees.complete(task_id, "alice")  # passes: done
    assert land.board.get_task(task_id).status == t.DONE
    events = land.board.events(task_id=task_id)
    pairs = [
        (verdict, events[i + 1])
        for i, verdict in enumerate(events)
        if verdict.kind == EventKind.VERIFICATION_RECORDED
    ]
    assert [(v.data["status"], m.kind, m.data["to"]) for v, m in pairs] == [
        ("fail", EventKind.STATUS_CHANGED, t.IN_PROGRESS),
        ("pass", EventKind.STATUS_CHANGED, t.DONE),
    ]
    assert all(m.seq == v.seq + 1 and m.created_at == v.created_at for v, m in pairs)
    if backend != "postgres":
        return
    import psycopg

    with psycopg.connect(str(land.board.path)) as conn:
        xmin = dict(conn.execute("SELECT seq, xmin::text FROM events WHERE task_id = %s",
                                 (task_id,)).fetchall())  # fmt: skip
    assert [xmin[v.seq] == xmin[m.seq] for v, m in pairs] == [True, True]
