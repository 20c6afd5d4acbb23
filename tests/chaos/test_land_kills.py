"""Guarantee: a landing killed with SIGKILL at any step is never half-landed, and the next call
recovers it.

A lander process approves and lands a task in review and is killed the moment it reaches each
step of `boardlib.worktrees.LAND_STEPS` (the hook point `on_step`), and then at random moments
inside its git and verify commands. Right after the kill the branch holds nothing the board does
not know of: main is where it was, or it holds the commit the board's recorded intent (or the task
itself) names. Then the next `land` call settles it: the task is done and landed exactly once,
its commit on main, the user's checkout of main clean and at main, no queue row and no fence left.
"""

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from boardlib import BoardError, Reason
from boardlib.clock import local_time, span
from boardlib.events import EventKind, read
from boardlib.narration import narrate
from boardlib.payloads import TaskLanded
from boardlib.processes import stat_fields
from boardlib.worktrees import LAND_STEPS
from boardlib.worktrees.landing import AHEAD_STEPS, legacy_fence_ref
from tests.worktrees.conftest import LandEnv, git, make_land_env

pytestmark = pytest.mark.slow  # a lander process killed at every step

ROOT = Path(__file__).resolve().parents[2]
ANSWER = "def answer():\n    return 43\n"


@pytest.fixture
def land(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, board_path: Path):
    made = make_land_env(tmp_path, monkeypatch, board_path)
    yield made
    made.board.close()


def lander(board_path: object, task_id: str, *extra: str) -> subprocess.Popen[str]:
    args = [sys.executable, "-m", "tests.worktrees.land_procs", str(board_path), task_id,
            "--actor", "bob", *extra]  # fmt: skip
    return subprocess.Popen(
        args, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip


def nothing_unknown_on_main(land: LandEnv, task_id: str, tip: str) -> None:
    """Right after a kill: main is at `tip`, or at a commit the board knows of (the recorded
    landing, or the intent of the task's queue row)."""
    main = land.main()
    if main == tip:
        return
    task = land.board.get_task(task_id)
    entry = land.trees.lander().queue.entry_of_task(task_id)
    known = {task.landed_commit, entry.new_commit if entry else None} - {None}
    assert main in known, (main, known)
    assert git(land.repo, "rev-parse", f"{main}^") == tip


def recovered(land: LandEnv, task_id: str, tip: str) -> str:
    """The next call settles the killed landing, and the board and repository agree. How:
    `landed` afresh, `recovered` (the dead landing had reached main), or `already` recorded."""
    try:
        how = "recovered" if land.trees.land(task_id, actor="bob").recovered else "landed"
    except BoardError as error:  # recorded before the kill: landing twice is a no-op
        assert error.reason == Reason.NOT_LANDABLE and error.details["why"] == "already_landed"
        how = "already"
    task = land.board.get_task(task_id)
    assert task.status == "done" and task.landed_commit == land.main()
    assert git(land.repo, "rev-parse", f"{task.landed_commit}^") == tip  # landed once
    marks = git(land.repo, "log", "--format=%H", f"--grep=Kanban-Task: {task_id}", "main")
    assert marks.split() == [task.landed_commit]
    assert git(land.repo, "status", "--porcelain") == ""  # the checkout of main came along
    assert (land.repo / "app.py").read_text() == ANSWER
    assert land.trees.lander().queue.all_entries() == []
    assert git(land.repo, "for-each-ref", "refs/kanban/landing", "refs/kanban/behind") == ""
    landed = [e for e in land.board.events(task_id=task_id) if e.kind == EventKind.TASK_LANDED]
    assert len(landed) == 1
    return how


SETTLED = {"updated": "recovered", "brought_along": "recovered", "recorded": "already",
           "archived": "already"}  # fmt: skip


@pytest.mark.parametrize("step", LAND_STEPS)
def test_a_lander_killed_at_each_step_is_recovered_by_the_next_call(
    land: LandEnv, board_path: object, step: str
) -> None:
    task_id, _ = land.task_with({"app.py": ANSWER}, finish="review")
    tip = land.main()
    proc = lander(board_path, task_id, "--crash-at", step)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL, (out, err)
    assert json.loads(out.splitlines()[-1])["crashing"] == step
    nothing_unknown_on_main(land, task_id, tip)
    assert recovered(land, task_id, tip) == SETTLED.get(step, "landed")


def test_a_landing_recovered_after_a_crash_says_so_by_whom_and_when_it_started(
    land: LandEnv, board_path: object
) -> None:
    """A landing whose lander died after moving the branch was recorded by the next call in the dead
    lander's name, with "recovered" the only trace: not whose call completed it, nor when the
    landing that crashed had started."""
    task_id, _ = land.task_with({"app.py": ANSWER}, finish="review")
    proc = lander(board_path, task_id, "--crash-at", "updated")  # lands as bob
    proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL
    dead = land.trees.lander().queue.entry_of_task(task_id)
    assert dead is not None
    result = land.trees.land(task_id, actor="operator:carol")
    assert result.recovered and land.board.get_task(task_id).landed_by == "bob"
    [event] = [e for e in land.board.events(task_id=task_id) if e.kind == EventKind.TASK_LANDED]
    assert event.actor == "bob"
    data: TaskLanded = read(event.data)
    assert (data.get("recovered_by"), data.get("started_at")) == ("operator:carol", dead.created_at)
    started = span(event.created_at - dead.created_at)
    assert narrate(event) == (
        f"bob approved and landed {task_id} on main as {result.commit[:7]} (completed by "
        f"recovery by operator:carol: the landing, started {started} before, crashed after "
        "moving the branch)"
    )
    [audit] = [a for a in land.board.audit(task_id) if a.action == "land"]
    assert audit.detail == (
        f"landed {result.commit} on main (squash); completed by recovery by operator:carol: the "
        f"landing bob started at {local_time(dead.created_at)} crashed after moving the branch"
    )


@pytest.mark.parametrize("step", AHEAD_STEPS)
def test_a_lander_killed_while_verifying_ahead_leaves_nothing_behind(
    land: LandEnv, board_path: object, step: str
) -> None:
    """A lander waiting behind another builds and verifies on the commit that one would land
    (`docs/landing.md`, verifying ahead). Killed there, it has written nothing but its row: the
    landing ahead lands as if it were not there, and the next call of the killed one lands it."""
    release = land.tmp / "release-the-first"  # its verify waits for it (at most a minute)
    slow = (
        f'if [ -n "$KANBAN_LANDING" ]; then for _ in $(seq 600); do [ -e {release} ] && break; '
        "sleep 0.1; done; fi"
    )
    first, _ = land.task_with({"first.txt": "first\n"}, verify=slow)
    second, _ = land.task_with({"app.py": ANSWER}, finish="review")
    tip = land.main()
    ahead = lander(board_path, first)
    deadline = time.monotonic() + 60
    while not any(entry.built_commit for entry in land.trees.lander().queue.all_entries()):
        assert time.monotonic() < deadline and ahead.poll() is None, "the first never built"
        time.sleep(0.02)
    proc = lander(board_path, second, "--crash-at", step)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL, (out, err)
    assert json.loads(out.splitlines()[-1])["crashing"] == step
    release.touch()
    out, err = ahead.communicate(timeout=120)
    assert "error" not in json.loads(out.splitlines()[-1]), (out, err)
    landed_first = land.board.get_task(first).landed_commit
    assert land.main() == landed_first and git(land.repo, "rev-parse", f"{landed_first}^") == tip
    assert recovered(land, second, landed_first) == "landed"


@pytest.mark.sqlite_only
def test_a_killed_lander_left_a_zombie_is_settled_by_the_next_call(
    land: LandEnv, board_path: object
) -> None:
    """A lander killed under `timeout -s KILL` stays a zombie until its parent reaps it (never,
    under a container's pid 1 that does not reap), and its start time still read as alive, so every
    retry was `conflict` until the queue's lease ran out. The lander here is killed and not reaped
    while the next call runs."""
    task_id, _ = land.task_with({"app.py": ANSWER}, finish="review")
    tip = land.main()
    proc = lander(board_path, task_id, "--crash-at", "intent")
    assert proc.stdout is not None
    while "crashing" not in proc.stdout.readline():
        pass
    deadline = time.monotonic() + 30
    while stat_fields(proc.pid)[:1] != ["Z"]:
        assert time.monotonic() < deadline, "the lander never died"
        time.sleep(0.01)
    try:
        assert recovered(land, task_id, tip) == "landed"
    finally:
        proc.communicate(timeout=60)


@pytest.mark.sqlite_only
def test_landers_killed_at_random_moments_never_half_land(
    land: LandEnv, board_path: object
) -> None:
    rng = random.Random(23)
    for round_ in range(6):
        change = {f"file{round_}.txt": f"{round_}\n"}
        task_id, _ = land.task_with(change, finish="review", verify="sleep 0.2")
        tip = land.main()
        proc = lander(board_path, task_id)
        time.sleep(rng.uniform(0.3, 2.5))
        proc.kill()
        proc.communicate(timeout=60)
        nothing_unknown_on_main(land, task_id, tip)
        try:
            land.trees.land(task_id, actor="bob")
        except BoardError as error:
            assert error.reason == Reason.NOT_LANDABLE, error.to_dict()
        task = land.board.get_task(task_id)
        assert task.status == "done" and task.landed_commit == land.main()
        assert git(land.repo, "rev-parse", f"{task.landed_commit}^") == tip
        assert git(land.repo, "status", "--porcelain") == ""
        assert land.trees.lander().queue.all_entries() == []


def test_a_fence_a_lander_killed_before_the_upgrade_left_is_cleared(
    land: LandEnv, board_path: object
) -> None:
    """A lander of a version whose fence was one per branch (`legacy_fence_ref`, before each
    board fenced its own) killed holding its turn: the next call recovers its row, lands, and
    leaves no fence behind (it stayed for good)."""
    task_id, _ = land.task_with({"app.py": ANSWER}, finish="review")
    tip = land.main()
    proc = lander(board_path, task_id, "--crash-at", "verified")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL, (out, err)
    (fence,) = git(land.repo, "for-each-ref", "--format=%(refname)", "refs/kanban/landing").split()
    value = git(land.repo, "rev-parse", fence)
    git(land.repo, "update-ref", "-d", fence)  # where that version kept it
    git(land.repo, "update-ref", legacy_fence_ref("main"), value)
    assert recovered(land, task_id, tip) == "landed"  # no fence of any kind left
