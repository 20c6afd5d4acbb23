"""`kanban demo --no-tui`: the README's first command minus the screen, via the console script."""

import subprocess
from pathlib import Path

import pytest

from boardlib import Board
from tests.cli.conftest import KANBAN, clean_env


@pytest.mark.slow  # the demo team works for seconds
def test_demo_runs_headless_for_a_bounded_time_and_keeps_its_board(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    done = subprocess.run(
        [str(KANBAN), "demo", "--no-tui", "--dir", str(folder), "--keep", "--speed", "20",
         "--duration", "10", "--seed", "3", "--tasks", "120", "--agents", "3"],
        env=clean_env(), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert str(folder / "board.db") in done.stdout  # it says where the board is
    # The bound ended it, not the plan: 120 tasks are more than 3 agents finish in 10 s (35 of
    # 40 alone on 2 cores). 10 s, not 6: under CI's load a 6 s run once ended with nothing done.
    assert "kanban demo: duration after" in done.stdout, done.stdout[-2000:]
    with Board(folder / "board.db", read_only=True) as board:
        counts = board.status_counts()
        assert sum(counts.values()) == 120
        assert counts["done"] >= 1, counts
        claims = [event for event in board.events(limit=10_000) if event.kind == "task_claimed"]
        assert len({event.actor for event in claims}) >= 2  # a team, not one agent


def test_demo_refuses_bad_options_before_creating_anything(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    done = subprocess.run(
        [str(KANBAN), "demo", "--no-tui", "--dir", str(folder), "--agents", "0"],
        env=clean_env(), capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and "--agents" in done.stderr
    assert not folder.exists()


@pytest.mark.slow  # the demo team works for seconds
def test_a_dropped_terminal_still_cleans_up_the_demo(tmp_path: Path) -> None:
    """`kanban demo` over SSH, and the session drops: the agents stop and the demo's folder goes,
    even though the app cannot unwind normally on a terminal that is gone."""
    import os
    import pty
    import select
    import signal
    import time

    folder = tmp_path / "demo"
    pid, master = pty.fork()
    if pid == 0:  # the child: the demo in a terminal of its own
        env = clean_env(TERM="xterm-256color")
        os.execve(str(KANBAN), [str(KANBAN), "demo", "--dir", str(folder), "--speed", "5"], env)
    try:
        deadline, seen = time.monotonic() + 30, b""
        while b"live" not in seen and time.monotonic() < deadline:
            if select.select([master], [], [], 0.2)[0]:
                try:
                    seen += os.read(master, 65536)
                except OSError:
                    break
        assert b"live" in seen and folder.exists()
        os.close(master)  # the SSH session drops
        deadline, ended = time.monotonic() + 15, False
        while time.monotonic() < deadline and not ended:
            ended = os.waitpid(pid, os.WNOHANG)[0] != 0
            time.sleep(0.1)
        assert ended, "the demo kept running after its terminal went away"
        assert not folder.exists()
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
