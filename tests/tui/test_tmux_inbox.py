"""The inbox end to end in a real terminal (tmux), at 80x24 and 160x48: with 60 todo cards and
one task in review, the header says "1 need you", the review column is on screen, and `i` then
Enter opens that task's drawer. COLUMNS/LINES are unset for the app (pytest exports them)."""

import re
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from boardlib import Board
from boardlib.records import Task
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


def todo_and_one_in_review(db: Path, todo: int) -> Task:
    """A board of `todo` todo cards and one task in review (judge me please)."""
    with Board(db) as board:
        for n in range(todo):
            board.create_task(f"todo card {n}")
        task = board.create_task("judge me please")
        board.claim(task.id, "alice")
        return board.complete(task.id, "alice")


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
def test_one_need_you_then_i_enter_opens_its_drawer(
    tmp_path: Path, terminal: Tmux, size: tuple[int, int]
) -> None:
    db = tmp_path / "board.db"
    task = todo_and_one_in_review(db, 60)
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


def test_a_new_item_posts_a_notification_of_fixed_words_only(
    tmp_path: Path, terminal: Tmux
) -> None:
    """`--notify osc` inside tmux: the new item's OSC 9 goes out in tmux's DCS passthrough, made
    of fixed words and the task id; not one byte of the hostile title or reason reaches it."""
    from tests.tui.test_tmux import TITLE

    db = tmp_path / "board.db"
    with Board(db) as board:
        board.create_task("calm")
    terminal.start([KANBAN, "tui", "--db", str(db), "--notify", "osc"], size=(80, 24))
    terminal.wait_for("0 need you")
    with Board(db) as board:
        task = board.create_task(TITLE)
        board.claim(task.id, "mallory")
        board.block(task.id, "mallory", TITLE)
    terminal.wait_for("1 need you")
    time.sleep(0.5)
    raw = terminal.recorded()
    sent = f"\x1bPtmux;\x1b\x1b]9;kanban: {task.id} is blocked\x1b\x1b\\\x1b\\".encode()
    assert raw.count(sent) == 1  # once, and only ours
    assert b"\x1b]52" not in raw and b"\x1b]8;" not in raw and b"\x1b[2J" not in raw
    assert b"ZXZpbA==\x07" not in raw  # the title's payload never as a live sequence
    assert raw.count(b"\x1bP") == 1 and raw.count(b"]9;") == 1  # no other passthrough or OSC 9


def test_a_drawer_closed_after_the_terminal_narrowed_gives_the_board_back_whole(
    tmp_path: Path, terminal: Tmux
) -> None:
    """Found in tmux (the pilot's resize does not show it): Enter at 160x48, the terminal
    narrowed to 80x24, Escape: the board stayed laid out for the room beside the drawer it had
    (one 16-cell todo column, the rest blank) until the terminal grew again."""
    db = tmp_path / "board.db"
    todo_and_one_in_review(db, 6)
    terminal.start([KANBAN, "tui", "--db", str(db)], size=(160, 48))
    terminal.wait_for("1 need you")
    terminal.keys("Enter")
    terminal.wait_for("1 Overview")
    terminal.tmux("resize-window", "-t", "main", "-x", "80", "-y", "24")
    time.sleep(1)
    terminal.keys("Escape")
    deadline = time.monotonic() + 20
    text = terminal.text()
    while time.monotonic() < deadline and "in review" not in text:
        time.sleep(0.1)
        text = terminal.text()
    assert "todo · 6" in text and "in review · 1" in text, text


def test_the_selected_card_stays_on_screen_when_the_terminal_shrinks(
    tmp_path: Path, terminal: Tmux
) -> None:
    """At 160x48 `G` on the last of 40 todo cards, then the terminal made 80x24: the column stayed
    scrolled where it was, the selected card below its edge (no selection bar on screen) and Enter
    opened a card nobody saw."""
    db = tmp_path / "board.db"
    todo_and_one_in_review(db, 40)
    terminal.start([KANBAN, "tui", "--db", str(db)], size=(160, 48))
    selected = re.compile(r"▌(TASK-\d+)")

    def selection(text: str) -> str | None:
        found = selected.search(text)
        return found.group(1) if found else None

    def until_selected(unlike: str | None) -> str:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and selection(terminal.text()) in (None, unlike):
            time.sleep(0.1)
        found = selection(terminal.text())
        assert found not in (None, unlike), terminal.text()
        return str(found)

    first = until_selected(None)  # the first todo card, the board's first view
    terminal.keys("G")
    last = until_selected(first)  # the last todo card, its selection bar on screen
    terminal.tmux("resize-window", "-t", "main", "-x", "80", "-y", "24")
    deadline = time.monotonic() + 20
    text = terminal.text()
    while time.monotonic() < deadline and not (
        len(text.splitlines()) <= 24 and selection(text) == last
    ):
        time.sleep(0.1)
        text = terminal.text()
    assert selection(text) == last, text  # the selection bar, beside the selected card


GATE_HOLDER = """
import sys, time
from boardlib import Board
with Board(sys.argv[1]) as board:
    board.complete(sys.argv[2], "alice", gate_ms=3_600_000)
print("judging", flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
def test_a_task_under_its_gate_says_verifying_until_the_gate_is_killed(
    tmp_path: Path, terminal: Tmux, size: tuple[int, int]
) -> None:
    """A real process judging a task (its gate's start written, then waiting): its card says
    "verifying since HH:MM" at both sizes and the header counts one need (the other review), not
    two; the judging process killed with -9, the card says "to review" again, two needs."""
    import os
    import signal
    import subprocess

    db = tmp_path / "board.db"
    todo_and_one_in_review(db, 3)
    with Board(db) as board:
        gated = board.create_task("judged by its gate")
        board.claim(gated.id, "alice")
    child_env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    holder = subprocess.Popen(
        [sys.executable, "-c", GATE_HOLDER, str(db), gated.id],
        env=child_env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "judging\n"
        terminal.start([KANBAN, "tui", "--db", str(db)], size=size)
        board_text = terminal.wait_for("verifying since ")
        assert "1 need you" in board_text.splitlines()[0], board_text
        assert board_text.count("to review from alice") == 1, board_text
        assert all(len(line.rstrip()) <= size[0] for line in board_text.splitlines())
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(20)
        deadline = time.monotonic() + 20
        text = terminal.text()
        while time.monotonic() < deadline and text.count("to review from alice") < 2:
            time.sleep(0.1)
            text = terminal.text()
        assert text.count("to review from alice") == 2 and "verifying" not in text, text
        assert "2 need you" in text.splitlines()[0], text
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
