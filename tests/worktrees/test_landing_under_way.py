"""A landing under way is seen outside its own lander: its task leaves the inbox (every surface's)
and is counted as landing, and its view says by whom and since when, until the landing ends. A
lander killed with -9 hides nothing. Real repositories, a real landing held in its verify
command on the merged tree, a real killed lander process; both backends."""

import signal
import threading
import time
from pathlib import Path

import pytest

from boardlib import attention as a
from tests.worktrees.conftest import LandEnv, go, start_lander
from tests.worktrees.test_land import ANSWER

WAIT_S = 60.0


def held_on_landing(started: Path, release: Path) -> str:
    """Passes at the gate; on the merged tree, says it started and waits for `release`."""
    return (
        f'if [ -n "$KANBAN_LANDING" ]; then touch {started}; '
        f"while [ ! -e {release} ]; do sleep 0.02; done; fi"
    )


def until(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def listed(land: LandEnv) -> list[tuple[str, str | None]]:
    return [(item.kind, item.task_id) for item in land.board.inbox().items]


@pytest.mark.parametrize("finish", ["gate", "review"])
def test_a_task_being_landed_leaves_the_inbox_and_says_who_lands_it(
    land: LandEnv, tmp_path: Path, finish: str
) -> None:
    """While a TUI land verified the merged tree, `kanban inbox` still offered "unlanded, land"
    (or the review's approve), so a second operator started a second landing. Done work
    (`gate`) and approve-and-land (`review`) alike; the other task stays listed."""
    started, release = tmp_path / "started", tmp_path / "release"
    task_id, _ = land.task_with(
        {"app.py": ANSWER}, verify=held_on_landing(started, release), finish=finish
    )
    other, _ = land.task_with({"two.py": "TWO = 2\n"})
    kind = a.UNLANDED if finish == "gate" else a.REVIEW
    assert sorted(listed(land)) == sorted([(kind, task_id), (a.UNLANDED, other)])
    landed: list[object] = []

    def lands() -> None:
        landed.append(land.trees.lander().land(task_id, actor="bob"))

    lander = threading.Thread(target=lands)
    lander.start()
    try:
        until(started.exists, "the landing never reached its verify command")
        inbox = land.board.inbox()
        assert [(i.kind, i.task_id) for i in inbox.items] == [(a.UNLANDED, other)]
        entry = land.trees.lander().queue.entry_of_task(task_id)
        assert entry is not None
        [run] = inbox.landing
        assert (run.task_id, run.lander, run.since, run.entry) == (
            task_id, "bob", entry.created_at, entry.id,
        )  # fmt: skip
        view = land.board.view(task_id)
        assert view.landing is not None and view.landing.to_json() == run.to_json()
        assert land.board.view(other).landing is None
    finally:
        release.touch()
        lander.join(WAIT_S)
    assert landed, "the landing did not end"
    assert listed(land) == [(a.UNLANDED, other)]
    assert land.board.inbox().landing == [] and land.board.view(task_id).landing is None


def test_a_lander_killed_with_minus_9_hides_nothing(land: LandEnv, board_path: object) -> None:
    """Its queue row stays until the next lander of the branch settles it; its process is gone,
    so the row is dead at once (`QueueEntry.dead`): the task is listed to land again, as it was,
    and nothing says it is being landed."""
    task_id, _ = land.task_with({"app.py": ANSWER})
    proc = start_lander(board_path, [task_id], "--crash-at", "verified")
    go(proc)
    out, err = proc.communicate(timeout=WAIT_S * 2)
    assert proc.returncode == -signal.SIGKILL, (out, err)
    entry = land.trees.lander().queue.entry_of_task(task_id)
    assert entry is not None and entry.lander == "bob"  # the dead landing's row, still there
    assert listed(land) == [(a.UNLANDED, task_id)]
    assert land.board.inbox().landing == []
    assert land.board.view(task_id).landing is None
