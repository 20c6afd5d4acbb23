"""The landing queue under real concurrency: ten tasks with non-conflicting changes, landed by four
lander processes started together, on both backends. All land; the history is linear; every tree
the branch received passed verification; no bookkeeping file ever reached it."""

import itertools
import threading
import time
from pathlib import Path

import pytest

from boardlib import Board, BoardError
from boardlib.worktrees import SOR_FILES, Worktrees
from boardlib.worktrees.landing import AHEAD_SLOTS
from tests.worktrees.conftest import LandEnv, git, landers_go, start_lander

pytestmark = pytest.mark.slow  # racing lander processes

TASKS = 10
LANDERS = 4


def start_landers(land: LandEnv, board_path: object, shares: list[list[str]], **extra: str):
    procs = [
        start_lander(board_path, share, "--actor", f"reviewer-{index}", *options(extra))
        for index, share in enumerate(shares)
    ]
    return landers_go(procs, timeout_s=600)


def options(extra: dict[str, str]) -> list[str]:
    return [part for key, value in extra.items() for part in (f"--{key.replace('_', '-')}", value)]


@pytest.mark.parametrize("strategy", ["squash", "rebase"])
def test_ten_tasks_land_through_four_concurrent_landers(
    land: LandEnv, board_path: object, tmp_path: Path, strategy: str
) -> None:
    log = tmp_path / "verified-trees"
    # Verification of a landing records the tree it judged, and fails on any bookkeeping file.
    verify = (
        'if [ -n "$KANBAN_LANDING" ]; then test ! -e TASK.md && test ! -e init.sh && '
        f'git rev-parse "HEAD^{{tree}}" >> {log}; fi'
    )
    ids = [
        land.task_with({f"pkg/task{index}.txt": f"task {index}\n"}, verify=verify)[0]
        for index in range(TASKS)
    ]
    start = land.main()
    shares = [ids[index::LANDERS] for index in range(LANDERS)]
    outputs = start_landers(land, board_path, shares, strategy=strategy)
    assert sorted(doc["task"] for doc in outputs) == sorted(ids)
    assert [doc for doc in outputs if "error" in doc] == []
    assert max(doc["waitedMs"] for doc in outputs) > 0  # they did meet in the queue
    # Linear: every commit since the start has one parent, and there are exactly ten.
    history = git(land.repo, "rev-list", "--parents", f"{start}..main").splitlines()
    assert len(history) == TASKS and all(len(line.split()) == 2 for line in history)
    verified = set(log.read_text().split())
    for line in history:
        commit = line.split()[0]
        assert git(land.repo, "rev-parse", f"{commit}^{{tree}}") in verified
        names = git(land.repo, "ls-tree", "-r", "--name-only", commit).splitlines()
        assert not set(SOR_FILES) & set(names)
    assert sorted(git(land.repo, "ls-tree", "--name-only", "main:pkg").split()) == sorted(
        f"task{index}.txt" for index in range(TASKS)
    )
    landed = {land.board.get_task(task_id).landed_commit for task_id in ids}
    assert landed == {line.split()[0] for line in history}
    assert land.board.store.read(lambda tx: tx.land_queue_all()) == []
    assert git(land.repo, "status", "--porcelain") == ""  # the user's checkout came along
    assert git(land.repo, "for-each-ref", "refs/kanban") == ""


def test_landings_waiting_in_the_queue_verify_side_by_side(
    land: LandEnv, board_path: object, tmp_path: Path
) -> None:
    """A landing waiting behind another builds and verifies on the commit that one would land,
    so a queue of slow verify commands is not served one verify after another; and still every
    commit the branch received was verified on exactly its tree."""
    log = tmp_path / "verifications"
    verify = (
        'if [ -n "$KANBAN_LANDING" ]; then began=$(date +%s.%N); sleep 1; '
        f'echo "$began $(date +%s.%N) $(git rev-parse "HEAD^{{tree}}")" >> {log}; fi'
    )
    ids = [
        land.task_with({f"pkg/ahead{index}.txt": f"task {index}\n"}, verify=verify)[0]
        for index in range(LANDERS)
    ]
    start = land.main()
    outputs = start_landers(land, board_path, [[task_id] for task_id in ids])
    assert [doc for doc in outputs if "error" in doc] == []
    history = git(land.repo, "rev-list", f"{start}..main").splitlines()
    assert len(history) == LANDERS
    runs = {}
    for line in log.read_text().splitlines():
        began, ended, tree = line.split()
        runs.setdefault(tree, []).append((float(began), float(ended)))
    landed = []
    for commit in history:
        tree = git(land.repo, "rev-parse", f"{commit}^{{tree}}")
        assert tree in runs, f"{commit} reached main unverified"
        landed.append(min(runs[tree], key=lambda run: run[1]))
    landed.sort()
    overlapping = sum(1 for before, after in itertools.pairwise(landed) if after[0] < before[1])
    assert overlapping > 0, landed  # one after another, each waiting for the last to land


def test_landings_verifying_ahead_leave_scratch_checkouts_for_other_turns(
    land: LandEnv, board_path: Path, tmp_path: Path
) -> None:
    """Two branches with four landings each, all verifying (the turns, and the waiting ones ahead),
    took all eight scratch checkouts of the repository, and the turn of a landing onto a third
    branch was refused `busy`, as if the repository were overloaded with turns. Guesses now take
    only their own share of the checkouts."""
    started, release = tmp_path / "started", tmp_path / "release"
    started.mkdir()
    held = (
        'if [ -n "$KANBAN_LANDING" ]; then touch '
        f'{started}/$(basename "$KANBAN_WORKTREE"); while [ ! -e {release} ]; do sleep 0.02; '
        "done; fi"
    )
    for branch in ("b1", "b2"):
        git(land.repo, "branch", branch)
    queued = [
        land.task_with({f"{branch}{index}.txt": "x\n"}, verify=held, base_ref=branch)[0]
        for branch in ("main", "b1")
        for index in range(4)
    ]
    alone, _ = land.task_with({"alone.txt": "x\n"}, base_ref="b2")
    answers: dict[str, str] = {}

    def lands(task_id: str) -> None:
        with Board(board_path) as board:
            try:
                answers[task_id] = Worktrees(board).land(task_id, actor="bob").commit or ""
            except BoardError as error:
                answers[task_id] = error.reason.value

    threads = [threading.Thread(target=lands, args=(task_id,)) for task_id in queued]
    for thread in threads:
        thread.start()
    try:
        deadline = time.monotonic() + 60  # two turns and the guesses behind them are verifying
        while len(list(started.iterdir())) < 2 + AHEAD_SLOTS:
            assert time.monotonic() < deadline, sorted(started.iterdir())
            time.sleep(0.02)
        time.sleep(0.5)  # any guess that may take a checkout has taken it
        result = land.trees.land(alone, actor="bob")  # a turn with no guess of its own to wait on
        assert land.board.get_task(alone).landed_commit == result.commit
    finally:
        release.touch()
        for thread in threads:
            thread.join(timeout=120)
    assert all(len(answers[task_id]) == 40 for task_id in queued), answers
