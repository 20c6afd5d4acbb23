"""The per-worktree lock across real processes, and racing operations on one task's worktree."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from boardlib import BoardError, Reason
from boardlib.worktrees import WorktreeLock
from tests.worktrees.conftest import git, make_env

ROOT = Path(__file__).resolve().parents[2]

HOLDER = r"""
import os, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from boardlib.worktrees import WorktreeLock
lock_path, log_path = Path(sys.argv[2]), sys.argv[3]
start_at, rounds, use_lock = float(sys.argv[4]), int(sys.argv[5]), sys.argv[6] == "1"
while time.time() < start_at:
    time.sleep(0.001)
for _ in range(rounds):
    lock = WorktreeLock(lock_path, purpose="test", timeout_s=30) if use_lock else None
    if lock: lock.acquire()
    with open(log_path, "a") as log:
        log.write(f"enter {os.getpid()}\n"); log.flush()
        time.sleep(0.01)
        log.write(f"exit {os.getpid()}\n"); log.flush()
    if lock: lock.release()
"""


def run_holders(tmp_path: Path, use_lock: bool, processes: int = 4, rounds: int = 8) -> list[str]:
    log = tmp_path / f"log-{use_lock}"
    start_at = time.time() + 1.5  # a common start line, so the processes really overlap
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                HOLDER,
                str(ROOT),
                str(tmp_path / "x.lock"),
                str(log),
                str(start_at),
                str(rounds),
                "1" if use_lock else "0",
            ]
        )
        for _ in range(processes)
    ]
    for proc in procs:
        assert proc.wait(timeout=60) == 0
    return log.read_text().splitlines()


def interleaved(lines: list[str]) -> bool:
    for enter, leave in zip(lines[::2], lines[1::2], strict=True):
        if not (enter.startswith("enter") and leave == enter.replace("enter", "exit")):
            return True
    return False


@pytest.mark.slow  # processes queueing on the lock
def test_the_lock_serialises_processes(tmp_path):
    lines = run_holders(tmp_path, use_lock=True)
    assert len(lines) == 4 * 8 * 2
    assert not interleaved(lines)
    # The same workload without the lock does interleave: the check above can fail.
    assert interleaved(run_holders(tmp_path, use_lock=False))


def test_a_waiter_gives_up_with_the_holders_name_and_threads_are_excluded_too(tmp_path):
    path = tmp_path / "x.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; sys.path.insert(0, sys.argv[1])\n"
         "from pathlib import Path\nfrom boardlib.worktrees import WorktreeLock\n"
         "with WorktreeLock(Path(sys.argv[2]), purpose='pause TASK-7'):\n"
         "    print('held', flush=True); time.sleep(60)\n",
         str(ROOT), str(path)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(BoardError) as busy:
            WorktreeLock(path, purpose="complete TASK-7", timeout_s=0.2, subject="TASK-7").acquire()
        assert busy.value.reason == Reason.BUSY
        assert busy.value.details["holder"]["pid"] == holder.pid
        assert "pause TASK-7" in busy.value.message
        holder.send_signal(signal.SIGKILL)  # a crashed holder never leaves it locked
        holder.wait()
        with WorktreeLock(path, purpose="after", timeout_s=5):
            pass
    finally:
        holder.kill()
        holder.wait()
    # Within one process, a second open of the file is excluded as well (flock, not fcntl).
    with WorktreeLock(path, purpose="first"), pytest.raises(BoardError):
        WorktreeLock(path, purpose="second", timeout_s=0.1).acquire()
    # Shared holders coexist; an exclusive one waits for them.
    with (
        WorktreeLock(path, purpose="r1", shared=True),
        WorktreeLock(path, purpose="r2", shared=True),
        pytest.raises(BoardError),
    ):
        WorktreeLock(path, purpose="w", timeout_s=0.1).acquire()


RACER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from boardlib import Board
from boardlib.worktrees import Worktrees
board_path, task_id, repo, start_at = sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
with Board(board_path) as board:
    trees = Worktrees(board)
    while time.time() < start_at:
        time.sleep(0.001)
    made = trees.provision(task_id, repo)
    print(json.dumps(made.to_json()))
"""


def race(env, task_ids: list[str]) -> list[dict]:
    start_at = time.time() + 1.0
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                RACER,
                str(ROOT),
                str(env.board.path),
                task_id,
                str(env.repo),
                str(start_at),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=os.environ.copy(),
        )
        for task_id in task_ids
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results.append(json.loads(out))
    return results


def test_racing_provisions_of_one_task_make_one_checkout(tmp_path, monkeypatch):
    env = make_env(tmp_path, monkeypatch)
    task_id = env.task()
    results = race(env, [task_id] * 4)
    assert len({r["workspaceId"] for r in results}) == 1
    assert len({r["worktree"]["worktreePath"] for r in results}) == 1
    assert sum(not r["reused"] for r in results) == 1  # one created it, three reused it
    assert len(env.board.workspaces(task_id)) == 1
    listed = git(env.repo, "worktree", "list", "--porcelain")
    assert listed.count("worktree ") == 2  # the repository itself and the one checkout
    env.board.close()


@pytest.mark.slow
def test_racing_provisions_of_different_tasks_on_one_repository_all_succeed(tmp_path, monkeypatch):
    env = make_env(tmp_path, monkeypatch)
    task_ids = [env.task() for _ in range(4)]
    results = race(env, task_ids)
    assert sorted(r["worktree"]["taskId"] for r in results) == sorted(task_ids)
    assert git(env.repo, "worktree", "list", "--porcelain").count("worktree ") == 5
    assert len(git(env.repo, "branch", "--list", "kanban/*").splitlines()) == 4
    env.board.close()
