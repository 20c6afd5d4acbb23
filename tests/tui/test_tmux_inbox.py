"""The inbox end to end in a real terminal (tmux), at 80x24 and 160x48: with 60 todo cards and
one task in review, the header says "1 need you", the review column is on screen, and `i` then
Enter opens that task's drawer. COLUMNS/LINES are unset for the app (pytest exports them)."""

import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from boardlib import Board
from tests.tui.test_tmux import Tmux

KANBAN = str(Path(sys.executable).with_name("kanban"))

pytestmark = [
    pytest.mark.slow,  # the app in real tmux terminals
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Tmux]:
    session = Tmux(tmp_path)
    try:
        yield session
    finally:
        session.stop()


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
def test_one_need_you_then_i_enter_opens_its_drawer(
    tmp_path: Path, terminal: Tmux, size: tuple[int, int]
) -> None:
    db = tmp_path / "board.db"
    with Board(db) as board:
        for n in range(60):
            board.create_task(f"todo card {n}")
        task = board.create_task("judge me please")
        board.claim(task.id, "alice")
        board.complete(task.id, "alice")
    terminal.start([KANBAN, "tui", "--db", str(db)], size=size)
    board_text = terminal.wait_for("1 need you")
    header = board_text.splitlines()[0]
    assert "1 need you" in header and "live" in header
    assert len(header.rstrip()) <= size[0]
    assert "in review" in board_text and task.id in board_text  # the column is on screen
    terminal.keys("i")
    inbox = terminal.wait_for("oldest first")
    assert task.id in inbox and "waiting for review from alice" in inbox
    terminal.keys("Enter")
    deadline = time.monotonic() + 20
    drawer = terminal.text()
    while time.monotonic() < deadline and not (
        "1 Overview" in drawer and "judge me please" in drawer and "oldest first" not in drawer
    ):
        time.sleep(0.1)
        drawer = terminal.text()
    assert "1 Overview" in drawer and "judge me please" in drawer, drawer
    assert "oldest first" not in drawer  # the drawer, not the inbox, is what is shown
    if size[0] < 140:  # full screen over the inbox: Escape comes back to it
        terminal.keys("Escape")
        assert task.id in terminal.wait_for("oldest first")
