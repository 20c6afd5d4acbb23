"""End to end in a real terminal (tmux): a task title built to attack the operator's terminal
(an OSC 52 clipboard write, a clear-screen, an OSC 8 hyperlink, a carriage return, a Textual
action in markup) is dispatched with the real CLI, then drawn by the real app and by
`kanban --format table task list`. Everything the programs write to the terminal is recorded
(`tmux pipe-pane`): no escape sequence from the title reaches it, the clipboard stays untouched
(tmux honours OSC 52 here: `set-clipboard on`), the header is not wiped, nothing is drawn over
column 0, and the app is still running with nothing changed."""

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from boardlib import Board

KANBAN = str(Path(sys.executable).with_name("kanban"))
TITLE = (
    "clip\x1b]52;c;ZXZpbA==\x07END wipe\x1b[2J "
    "\x1b]8;;https://evil.example/\x1b\\link abc\rOVERWRITE [@click=app.quit]Q[/]"
)
TEXTUAL_OSC = re.compile(rb"\x1b\]22;[a-z-]*\x07")  # Textual's own pointer-shape request

pytestmark = [
    pytest.mark.slow,  # the app in real tmux terminals, timed toasts
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


class Tmux:
    """A private tmux server (its own socket) running one program in a recorded pane."""

    def __init__(self, folder: Path) -> None:
        self.socket = f"tui-test-{os.getpid()}-{time.monotonic_ns()}"
        self.folder = folder
        self.raw = folder / f"{self.socket}.raw"

    def tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args],
            check=True,
            capture_output=True,
            text=True,
            cwd=self.folder,
        ).stdout

    def start(self, command: list[str], size: tuple[int, int] = (160, 48)) -> None:
        line = " ".join(_quote(part) for part in command)
        # Wait for the recorder before the program writes its first byte.
        self.tmux(
            "new-session", "-d", "-s", "main", "-x", str(size[0]), "-y", str(size[1]),
            f"sleep 0.5; exec env -u COLUMNS -u LINES TERM=xterm-256color {line}",
        )  # fmt: skip
        self.tmux("set-option", "-g", "set-clipboard", "on")
        self.tmux("pipe-pane", "-o", "-t", "main", f"cat >> {_quote(str(self.raw))}")

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-e", "-t", "main")

    def text(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "main")

    def wait_for(self, needle: str, timeout: float = 20) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.text()
            if needle in text:
                return text
            time.sleep(0.1)
        raise AssertionError(f"{needle!r} never appeared:\n{self.text()}")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "main", *keys)

    def answer(self, question: str, *keys: str, timeout: float = 20) -> str:
        """Wait for a dialog's question, then for the dialog to take answers, then press keys.
        A ConfirmDialog drops keys that arrive within READ_S of its first paint (typed ahead),
        so a key sent the moment the question shows up is ignored."""
        from tui.components.confirm import READ_S

        text = self.wait_for(question, timeout)
        time.sleep(READ_S * 3)
        self.keys(*keys)
        return text

    def clipboard(self) -> str:
        try:
            return self.tmux("show-buffer")
        except subprocess.CalledProcessError:
            return ""  # no buffer at all

    def recorded(self) -> bytes:
        return self.raw.read_bytes() if self.raw.exists() else b""

    def stop(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    session = Tmux(tmp_path)
    try:
        yield session
    finally:
        session.stop()


def assert_nothing_live_from_the_title(raw: bytes) -> None:
    assert raw, "nothing was recorded"
    assert b"\x1b]52" not in raw  # no clipboard write
    assert b"\x1b]8;" not in raw  # no hyperlink
    assert b"\x1b[2J" not in raw  # no clear-screen
    rest = TEXTUAL_OSC.sub(b"", raw)
    assert b"\x07" not in rest  # no other OSC terminator or bell
    assert re.search(rb"\r(?!\n)", raw) is None  # no bare carriage return
    assert b"\xe2\x90\x9b]52;c;ZXZpbA==\xe2\x90\x87" in raw  # drawn as pictures: ␛]52;c;ZXZpbA==␇


def dispatch(db: Path) -> str:
    env = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES")}
    made = subprocess.run(
        [KANBAN, "--db", str(db), "task", "dispatch", "--title", TITLE, "--priority", "5"],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    subprocess.run(
        [KANBAN, "--db", str(db), "task", "dispatch", "--title", "a neighbour"],
        check=True,
        capture_output=True,
        env=env,
    )
    return str(__import__("json").loads(made.stdout)["id"])


def test_the_app_in_a_real_terminal_draws_the_title_inert(tmp_path: Path, tmux: Tmux) -> None:
    db = tmp_path / "board.db"
    task_id = dispatch(db)
    with Board(db, read_only=True) as board:
        before = board.all_tasks()
    tmux.start([KANBAN, "tui", "--db", str(db)])
    board_text = tmux.wait_for("a neighbour")
    header = board_text.splitlines()[0]
    assert header.lstrip().startswith("kanban") and "live" in header  # not wiped
    assert not any(line.startswith("OVERWRITE") for line in board_text.splitlines())
    tmux.keys("Enter")  # the drawer shows the whole title
    drawer = tmux.wait_for("[@click=app.quit]Q[/]")
    assert "␛]52;c;ZXZpbA==␇END wipe␛[2J" in drawer
    assert "␍OVERWRITE" in drawer
    tmux.keys("Escape")
    tmux.wait_for("a neighbour")
    time.sleep(0.5)
    assert "kanban" in tmux.text()  # still running: the markup ran no action
    assert "evil" not in tmux.clipboard() and "ZXZpbA" not in tmux.clipboard()
    assert_nothing_live_from_the_title(tmux.recorded())
    with Board(db, read_only=True) as board:
        assert board.all_tasks() == before
    assert task_id in board_text


def test_the_cli_table_in_a_real_terminal_draws_the_title_inert(tmp_path: Path, tmux: Tmux) -> None:
    db = tmp_path / "board.db"
    dispatch(db)
    listing = f"{KANBAN} --db {db} --format table task list; echo LISTED; sleep 30"
    tmux.start(["sh", "-c", listing])
    text = tmux.wait_for("LISTED")
    assert "␛]52;c;ZXZpbA==␇" in text.replace("\n", "").replace(" ", "").replace("│", "") or (
        "␛]52" in text
    )
    assert not any(line.startswith("OVERWRITE") for line in text.splitlines())
    assert "evil" not in tmux.clipboard()
    raw = tmux.recorded()
    assert b"\x1b[" in raw, "rich drew no colour: the table did not see a terminal"
    assert_nothing_live_from_the_title(raw)


ANNOUNCING_APP = """
import sys
from pathlib import Path

import tui.app
from tui.launch import run_tui

tui.app.ANNOUNCED_TOAST_S = {announced_s}  # the demo's 15 s: how long is not what is tested

def announce(counts):
    return "demo finished: 1 cancelled; q quits" if counts.get("cancelled") else None

run_tui(Path(sys.argv[1]), poll_ms=100, announce=announce)
"""
ANNOUNCED_S = 4


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
def test_toasts_leave_the_screen_when_they_time_out(
    tmp_path: Path, tmux: Tmux, size: tuple[int, int]
) -> None:
    """Over a still board, a toast's place is repainted when it goes. The selected task leaves
    its column (a 5 s "follows it" toast), then the board finishes, as the demo's does (its 15 s
    announcement), and goes still: both had stayed drawn for minutes, the announcement over the
    drawer's diff at 80x24. The announcement is cut to 4 s here."""
    db = tmp_path / "board.db"
    with Board(db) as board:
        task = board.create_task("one quiet task")
    program = tmp_path / "announcing_app.py"
    program.write_text(ANNOUNCING_APP.format(announced_s=ANNOUNCED_S))
    tmux.start([sys.executable, str(program), str(db)], size=size)
    tmux.wait_for("one quiet task")
    with Board(db) as board:
        board.claim(task.id, "ada")
    tmux.wait_for("follows it")
    time.sleep(1)
    with Board(db) as board:
        board.move(task.id, "cancelled")
    tmux.wait_for("q quits")
    gone_by = time.monotonic() + ANNOUNCED_S + 3

    def under_the_header() -> str:
        return "\n".join(tmux.text().splitlines()[1:])

    def toasts_shown() -> bool:
        shown = under_the_header()
        return "follows it" in shown or "q quits" in shown

    while toasts_shown() and time.monotonic() < gone_by:
        time.sleep(0.5)
    assert not toasts_shown(), under_the_header()
    assert "demo finished: 1 cancelled" in tmux.text().splitlines()[0]  # the header keeps it


def test_approve_and_land_in_a_real_terminal_at_80x24(
    tmp_path: Path, tmux: Tmux, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The operator's whole landing in a real terminal: the drawer's Overview says the task
    lands cleanly before they decide, `W` asks, `y` lands it (verified) onto main of a real
    repository, and afterwards the drawer and the card show the landed commit."""
    from boardlib import ManualClock
    from tui.review_board import START_MS, build_review_board

    worktrees = tmp_path / "worktrees"
    monkeypatch.setenv("KANBAN_WORKTREES", str(worktrees))
    review = build_review_board(tmp_path, ManualClock(START_MS))
    task_id = review.ids["review"]
    main_before = subprocess.run(
        ["git", "rev-parse", "main"], cwd=review.repo, check=True, capture_output=True, text=True
    ).stdout.strip()
    tmux.start(
        ["env", f"KANBAN_WORKTREES={worktrees}", "KANBAN_OPERATOR=operator:ada",
         KANBAN, "tui", "--db", str(review.db), "--open", task_id],
        size=(80, 24),
    )  # fmt: skip
    before = tmux.wait_for(f"lands cleanly onto main@{main_before[:7]}")
    assert "W: approve and land" in before
    tmux.keys("W")
    tmux.wait_for(f"Approve and land {task_id}?")
    with Board(review.db, read_only=True) as board:
        assert board.get_task(task_id).landed_commit is None  # nothing before the yes
    tmux.answer(f"Approve and land {task_id}?", "y")  # once the dialog takes answers
    tmux.wait_for("approved and landed", timeout=60)  # the toast
    with Board(review.db, read_only=True) as board:
        landed = board.get_task(task_id)
    assert landed.status == "done" and landed.landed_commit is not None
    short = landed.landed_commit[:7]
    tmux.wait_for(f"landed as {short} on main by operator:ada")  # the drawer's Landing
    log = subprocess.run(
        ["git", "log", "-1", "--format=%H %s", "main"],
        cwd=review.repo, check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    assert log == f"{landed.landed_commit} Add a percentage discount to the cart ({task_id})"
    tmux.keys("Escape")  # back to the board: unfold done, jump to the task (the palette)
    tmux.wait_for("Palette")
    tmux.keys("z")
    time.sleep(0.3)
    tmux.keys("C-p")
    tmux.wait_for("Search for commands")
    tmux.keys(task_id)
    time.sleep(0.5)
    tmux.keys("Enter")
    card = tmux.wait_for(f"⤓{short}")
    assert task_id in card


def test_the_keymap_file_is_read_once_at_start(tmp_path: Path, tmux: Tmux) -> None:
    """`kanban tui` read the keymap file twice, once to refuse a bad one before taking the terminal
    and again in the app. The file here is a named pipe that gives its keys once: a second read
    would wait for a writer forever and the board would never show. Read once, the board shows with
    the remapped key in its footer."""
    import threading

    db = tmp_path / "board.db"
    with Board(db) as board:
        board.create_task("one card")
    keymap = tmp_path / "keymap.fifo"
    os.mkfifo(keymap)

    def give_once() -> None:
        with keymap.open("w") as pipe:  # waits for the first reader
            pipe.write('"board.inbox" = "I"\n')

    writer = threading.Thread(target=give_once, daemon=True)
    writer.start()
    tmux.start(["env", f"KANBAN_KEYMAP={keymap}", KANBAN, "tui", "--db", str(db)])
    board_text = tmux.wait_for("I Needs you")
    assert "one card" in board_text
    writer.join(timeout=5)
    assert not writer.is_alive()
