"""The operator's findings proved in a real terminal (tmux), at 80x24 and 160x48: a task the gate
parked in blocked is overridden to done in one step from its card; marking three review tasks
with space and approving approves exactly those three; and a question is not answered by keys
typed before it was on screen."""

import shutil
import time
from pathlib import Path

import pytest

from boardlib import Board
from boardlib import transitions as t
from boardlib.actors import GATE
from tests.tui.test_tmux import KANBAN, Tmux

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]
SIZES = [(80, 24), (160, 48)]
RED_DEBT = (
    '{"status": "completed_with_debt", "attempts": [], "debtNotes": [{"criterion": '
    '"deterministic verification", "severity": "high", "justification": "no verify command"}], '
    '"updatedAt": 1}'
)


@pytest.fixture
def tmux(tmp_path: Path):  # type: ignore[no-untyped-def]
    session = Tmux(tmp_path)
    try:
        yield session
    finally:
        session.stop()


def status_of(db: Path, task_id: str) -> str:
    with Board(db, read_only=True) as board:
        return board.get_task(task_id).status


def until(tmux: Tmux, check, timeout: float = 20) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"condition not met in time; the screen:\n{tmux.text()}")


def start_filtered(tmux: Tmux, db: Path, size: tuple[int, int], words: str, shown: str) -> None:
    tmux.start([KANBAN, "tui", "--db", str(db)], size=size)
    tmux.wait_for("live")
    time.sleep(0.5)  # "live" is painted before the board screen takes keys
    tmux.keys("/")
    tmux.wait_for("enter keep")  # the filter line is open and focused
    tmux.keys("-l", words)
    tmux.wait_for("shown")  # the header counts what the filter shows
    tmux.keys("Enter")
    tmux.wait_for(shown)
    time.sleep(0.5)


@pytest.mark.parametrize("size", SIZES)
def test_a_debt_blocked_task_is_overridden_in_one_step(
    tmp_path: Path, tmux: Tmux, size: tuple[int, int]
) -> None:
    db = tmp_path / "board.db"
    with Board(db) as board:
        board.create_task("some other work")
        task = board.create_task("parked by the gate")
        board.claim(task.id, "agent-ada")
        board.complete(task.id, "agent-ada")
        board.record_verification(task.id, RED_DEBT)
        board.move(
            task.id, t.BLOCKED, actor=GATE, reason="no verify command; or an operator overrides"
        )
    start_filtered(tmux, db, size, "parked", "blocked")
    tmux.keys("d")
    tmux.answer("human override", "y")
    until(tmux, lambda: status_of(db, task.id) == t.DONE)
    with Board(db, read_only=True) as board:
        done = board.get_task(task.id)
        [entry] = [a for a in board.audit(task.id) if a.action == "human_override"]
    assert (entry.from_status, entry.to_status) == (t.BLOCKED, t.DONE)
    assert done.assignee_agent_id is None


@pytest.mark.parametrize("size", SIZES)
def test_space_marking_three_review_tasks_approves_exactly_those(
    tmp_path: Path, tmux: Tmux, size: tuple[int, int]
) -> None:
    db = tmp_path / "board.db"
    with Board(db) as board:
        board.create_task("not for review")
        ids = []
        for number in range(4):
            task = board.create_task(f"batch item {number}")
            board.claim(task.id, "agent-bee")
            board.complete(task.id, "agent-bee")
            ids.append(task.id)
    start_filtered(tmux, db, size, "batch", "batch item")
    tmux.keys("Space")
    tmux.wait_for("1 marked")
    tmux.keys("j", "Space")
    tmux.wait_for("2 marked")
    tmux.keys("j", "Space")
    tmux.wait_for("3 marked")
    tmux.keys("a")
    tmux.answer("3 marked task(s)?", "y")
    until(tmux, lambda: sum(status_of(db, i) == t.DONE for i in ids) == 3)
    tmux.wait_for("3 approved")
    time.sleep(0.5)
    statuses = [status_of(db, i) for i in ids]
    assert statuses.count(t.DONE) == 3 and statuses.count(t.IN_REVIEW) == 1


@pytest.mark.parametrize("size", SIZES)
def test_keys_typed_before_a_question_shows_do_not_answer_it(
    tmp_path: Path, tmux: Tmux, size: tuple[int, int]
) -> None:
    """`x` `y` in one burst cancelled the task before this: the question was never seen."""
    db = tmp_path / "board.db"
    with Board(db) as board:
        board.create_task("other work")
        task = board.create_task("keep me")
    start_filtered(tmux, db, size, "keep", "keep me")
    tmux.keys("x", "y")  # one write to the terminal: the y arrives before the dialog paints
    tmux.wait_for("ignored")
    assert status_of(db, task.id) == t.TODO
    tmux.answer("Cancel", "y")  # the question is still asked
    until(tmux, lambda: status_of(db, task.id) == t.CANCELLED)
