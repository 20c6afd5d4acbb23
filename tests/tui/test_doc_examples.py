"""The README's operator quick start, run as written in a real terminal (tmux): with HOME in a
temp folder, `kanban tui` opens the board at `~/team/board.db`, shows the agents' task, and `q`
quits."""

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from boardlib import Board
from tests.cli.conftest import BIN
from tests.doc_examples import example
from tests.tui.test_tmux import Tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@pytest.fixture
def tmux(tmp_path: Path):  # type: ignore[no-untyped-def]
    session = Tmux(tmp_path)
    try:
        yield session
    finally:
        session.stop()


@pytest.mark.slow
def test_the_operator_quick_start_opens_the_board_and_q_quits(tmp_path: Path, tmux: Tmux) -> None:
    home = tmp_path / "home"
    (home / "team").mkdir(parents=True)
    with Board(home / "team" / "board.db") as board:
        board.create_task("parse the plan", role="worker")
    script = example("README.md#operator-quick-start")
    tmux.start(["env", f"HOME={home}", f"PATH={BIN}:{os.environ['PATH']}", "bash", "-c", script])
    screen = tmux.wait_for("parse the plan", timeout=60)
    assert "team/board.db" in screen.splitlines()[0]  # the header names the board it opened
    tmux.keys("q")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        alive = subprocess.run(
            ["tmux", "-L", tmux.socket, "has-session", "-t", "main"], capture_output=True
        )
        if alive.returncode != 0:  # the app quit, the shell ended, the pane closed
            break
        time.sleep(0.2)
    assert alive.returncode != 0, tmux.text()
