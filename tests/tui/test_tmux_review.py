"""Reviewing in depth in a real terminal (tmux), with a worktree path long enough to wrap: at
80x24, 120x40 and 160x48 `G` shows the diff's last line, `/BIGMARK 19999` finds its match and `>`
reveals the end of a 300-character line; at 160 `s` shows both sides. The operator's own tools
run with the app suspended (an `EDITOR`, `PAGER` and `SHELL` that record what they were given),
and the board is back and live afterwards. A comment written on `app.py:12` in the drawer and a
reject reach the agent through `kanban task workspace resume`, HTTP and MCP."""

import os
import re
import shutil
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from boardlib import Board, ManualClock
from tests.tui.test_tmux import Tmux
from tests.worktrees.conftest import GIT_ENV, make_repo
from tui.components.diff_view import MORE_LEFT
from tui.review_board import START_MS, ReviewBoard, build_review_board

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.slow,
]

PYTHON = sys.executable
KANBAN = str(Path(sys.executable).with_name("kanban"))
LONG = "a-folder-name-long-enough-to-wrap-the-drawer-header/" * 3


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReviewBoard]:
    folder = tmp_path_factory.mktemp("tmux-review") / LONG
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KANBAN_WORKTREES", str(folder / "worktrees"))
        yield build_review_board(folder, ManualClock(START_MS), big_diff=True)


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    session = Tmux(tmp_path)
    try:
        yield session
    finally:
        session.stop()


def app_command(board_db: Path, task_id: str, worktrees: Path, **env: str) -> list[str]:
    settings = {"KANBAN_WORKTREES": str(worktrees), "KANBAN_SETTINGS": "/dev/null", **env}
    return [
        "env", *(f"{key}={value}" for key, value in settings.items()),
        PYTHON, "-m", "tui", "--db", str(board_db), "--open", task_id, "--poll-ms", "100",
    ]  # fmt: skip


def until(tmux: Tmux, check, timeout: float = 20) -> str:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = tmux.text()
        if check(text):
            return text
        time.sleep(0.1)
    raise AssertionError(f"never seen:\n{tmux.text()}")


def last_row(text: str) -> str:
    rows = [row for row in text.splitlines() if row.strip()]
    return rows[-1] if rows else ""


def type_search(tmux: Tmux, query: str) -> None:
    tmux.keys("/")
    time.sleep(0.3)
    tmux.keys("-l", query)
    tmux.keys("Enter")


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (160, 48)])
def test_the_diff_end_search_and_long_lines_in_a_real_terminal(
    big: ReviewBoard, tmux: Tmux, size: tuple[int, int]
) -> None:
    tmux.start(app_command(big.db, big.ids["big"], big.worktrees), size=size)
    until(tmux, lambda text: "5 History" in text)
    tmux.keys("3")
    text = until(tmux, lambda text: "generated/module_00.py" in text)
    assert "…" in text  # the worktree path is shortened, not wrapped
    assert not any(LONG.split("/")[0] in row for row in text.splitlines())
    tmux.keys("G")
    text = until(tmux, lambda text: "long_line = [" in text)
    assert "wide.py" in text
    type_search(tmux, "BIGMARK 19999")
    # The header's count and the scrolled view can reach the terminal in separate frames.
    until(tmux, lambda text: "match 1/1" in text and "BIGMARK 19999" in text)
    tmux.keys("G")
    for _ in range(10):
        if "END_OF_LONG" in tmux.text():
            break
        tmux.keys(">")
        time.sleep(0.3)
    text = until(tmux, lambda text: "END_OF_LONG" in text)
    assert MORE_LEFT in next(row for row in text.splitlines() if "END_OF_LONG" in row)
    if size[0] >= 160:
        tmux.keys("s")
        text = until(tmux, lambda text: "side by side" in text)
        rows = [row for row in text.splitlines() if "│" in row and "value_39" in row]
        assert rows, text  # added lines on the new side, the old side blank, one divider
    tmux.keys("q")


def test_side_by_side_shows_both_sides_at_160(tmp_path: Path, tmux: Tmux) -> None:
    folder = tmp_path / LONG
    os.environ.setdefault("GIT_CONFIG_NOSYSTEM", "1")
    board = _review_board(folder)
    tmux.start(app_command(board.db, board.ids["review"], board.worktrees), size=(160, 48))
    until(tmux, lambda text: "5 History" in text)
    tmux.keys("3")
    until(tmux, lambda text: "shop/cart.py" in text)
    tmux.keys("s")
    text = until(tmux, lambda text: "side by side" in text)
    [row] = [row for row in text.splitlines() if "def total(items):" in row]
    assert "def total(items, percent=0):" in row and row.index("│") < row.index("percent=0")


def _review_board(folder: Path) -> ReviewBoard:
    saved = os.environ.get("KANBAN_WORKTREES")
    try:
        return build_review_board(folder, ManualClock(START_MS))
    finally:
        if saved is None:
            os.environ.pop("KANBAN_WORKTREES", None)
        else:
            os.environ["KANBAN_WORKTREES"] = saved


def recorder(path: Path, out: Path, body: str) -> Path:
    """A stand-in program whose output appears at `out` whole (written, then renamed)."""
    path.write_text(f"#!/bin/sh\n{body} > {out}.part && mv {out}.part {out}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_editor_pager_and_shell_run_suspended_and_the_board_comes_back_live(
    tmp_path: Path, tmux: Tmux
) -> None:
    board = _review_board(tmp_path / "b")
    task_id = board.ids["review"]
    worktree = Path(os.path.realpath(next(board.worktrees.glob(f"*/{task_id}"))))
    editor = recorder(tmp_path / "editor.sh", tmp_path / "editor.args", 'printf "%s\\n" "$@"')
    pager = recorder(tmp_path / "pager.sh", tmp_path / "pager.out", 'cat "$1"')
    shell = recorder(tmp_path / "shell.sh", tmp_path / "shell.cwd", "pwd")
    env = {"EDITOR": str(editor), "PAGER": str(pager), "SHELL": str(shell), "VISUAL": ""}
    tmux.start(app_command(board.db, task_id, board.worktrees, **env), size=(120, 40))
    until(tmux, lambda text: "5 History" in text)
    tmux.keys("3")
    until(tmux, lambda text: "shop/cart.py" in text)
    type_search(tmux, "percent=0):")
    until(tmux, lambda text: "match 1/1" in text)
    tmux.keys("o")
    deadline = time.monotonic() + 20
    while not (tmp_path / "editor.args").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    args = (tmp_path / "editor.args").read_text().splitlines()
    cart = (worktree / "shop" / "cart.py").read_text().splitlines()
    line = cart.index("def total(items, percent=0):") + 1  # its number in the new file
    assert args == [f"+{line}", str(worktree / "shop" / "cart.py")]
    until(tmux, lambda text: "match 1/1" in text)  # the drawer is back where it was
    tmux.keys("O")
    until(tmux, lambda text: (tmp_path / "pager.out").exists() or False)
    written = (tmp_path / "pager.out").read_bytes()
    assert b"\x1b[32m+" in written and b"def total(items, percent=0):" in written
    assert re.sub(rb"\x1b\[[0-9;]*m", b"", written).count(b"\x1b") == 0
    until(tmux, lambda text: "match 1/1" in text)
    tmux.keys("!")
    until(tmux, lambda text: (tmp_path / "shell.cwd").exists() or False)
    assert (tmp_path / "shell.cwd").read_text().strip() == str(worktree)
    until(tmux, lambda text: "match 1/1" in text)
    # Live afterwards: an agent's comment shows up in History without a key pressed.
    tmux.keys("5")
    with Board(board.db) as agent:
        agent.add_comment(task_id, "back from the editor and still live", author_agent_id="ada")
    until(tmux, lambda text: "back from the editor and still live" in text)


APP = "".join(f"line_{n} = {n}\n" for n in range(1, 21))


def test_a_comment_on_app_py_12_and_a_reject_reach_the_agent(tmp_path: Path, tmux: Tmux) -> None:
    import json
    import subprocess

    repo = make_repo(tmp_path / "repo")
    worktrees = tmp_path / "state" / "worktrees"
    db = tmp_path / "board.db"
    env = {**GIT_ENV, "KANBAN_WORKTREES": str(worktrees)}
    env.pop("COLUMNS", None)
    env.pop("LINES", None)
    os.environ["KANBAN_WORKTREES"] = str(worktrees)
    try:
        from boardlib.worktrees import Worktrees

        with Board(db) as board:
            task = board.create_task("Number the lines")
            board.claim(task.id, "ada")
            made = Worktrees(board).provision(task.id, repo, actor="ada")
            (Path(made.worktree.worktree_path) / "app.py").write_text(APP)
            board.complete(task.id, "ada")
    finally:
        os.environ.pop("KANBAN_WORKTREES", None)
    tmux.start(
        app_command(db, task.id, worktrees, GIT_CONFIG_GLOBAL="/dev/null", KANBAN_OPERATOR="ana"),
        size=(120, 40),
    )
    until(tmux, lambda text: "5 History" in text)
    tmux.keys("3")
    until(tmux, lambda text: "app.py" in text)
    type_search(tmux, "line_12 = 12")
    until(tmux, lambda text: "match 1/1" in text)
    tmux.keys("c")
    until(tmux, lambda text: "Comment on app.py:12" in text)
    time.sleep(0.5)
    tmux.keys("-l", "twelve should read zwölf")
    tmux.keys("C-s")
    until(tmux, lambda text: "┃ operator:ana on app.py:12" in text)
    tmux.keys("R")
    until(tmux, lambda text: "Reject TASK" in text)
    time.sleep(0.5)
    tmux.keys("-l", "see the line comment")
    tmux.keys("C-s")
    until(tmux, lambda text: "rejected" in text.lower())
    resumed = subprocess.run(
        [KANBAN, "--db", str(db), "task", "workspace", "resume", task.id],
        capture_output=True, text=True, env={**env, "KANBAN_AGENT": "ada"}, check=True,
    )  # fmt: skip
    review = json.loads(resumed.stdout)["review"]
    assert [(e["path"], e["line"], e["body"]) for e in review] == [
        ("app.py", 12, "twelve should read zwölf")
    ]
    assert review[0]["lineText"] == "line_12 = 12" and review[0]["author"] == "operator:ana"
    with Board(db, read_only=True) as reader:
        assert reader.get_task(task.id).status == "todo"
    worktree = next(worktrees.glob(f"*/{task.id}"))
    assert "## `app.py:12`" in (worktree / "REVIEW.md").read_text()
    # The same from a real `kanban serve` on a loopback port (the detail and the cold-resume
    # route) and over MCP (get_task with detail).
    import httpx

    from tests.http.test_serve import kanban_serve

    with kanban_serve(tmp_path, db=db) as served:
        for route in (f"/api/board/{task.id}", f"/api/board/{task.id}/workspace"):
            body = httpx.get(f"{served.url}{route}", timeout=30).json()
            assert [(e["path"], e["line"], e["body"]) for e in body["review"]] == [
                ("app.py", 12, "twelve should read zwölf")
            ], route
        assert served.stop() == 0
    import anyio

    from tests.mcp.conftest import mcp_session, ok

    async def through_mcp() -> list[dict]:  # type: ignore[type-arg]
        async with mcp_session(db, "ada") as client:
            view = await ok(client, "get_task", task_id=task.id, detail=True)
        return view["review"]  # type: ignore[no-any-return]

    entries = anyio.run(through_mcp)
    assert [(e["path"], e["line"], e["body"]) for e in entries] == [
        ("app.py", 12, "twelve should read zwölf")
    ]
