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


def _descendants(pid: int, depth: int | None = None) -> set[int]:
    """The live processes under `pid` (from /proc; `depth` 1: its children only)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found: set[int] = set()
    level, todo = 0, [pid]
    while todo and (depth is None or level < depth):
        todo = [child for parent in todo for child in children.get(parent, [])]
        found.update(todo)
        level += 1
    return found


@pytest.mark.slow  # the demo team works for seconds, in a real tmux server
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads processes from /proc")
def test_a_killed_tmux_server_ends_the_demo_and_its_agents_at_once(tmp_path: Path) -> None:
    """`tmux kill-server` under `kanban demo` hung it for good. The SIGHUP reached the agents too,
    one died asleep on the stop event, and a multiprocessing Event's `set()` waits for its sleepers
    to wake: the demo's stop, and the app's backstop behind it, waited forever, the folder left
    behind."""
    import os
    import shlex
    import shutil
    import time

    from tests.tui.test_tmux import Tmux

    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    folder = tmp_path / "demo"
    tmux = Tmux(tmp_path)
    try:
        # Typed at a shell, as an operator does: the shell, the session's leader, takes the
        # hang-up and ends, and the kernel hangs up the demo's process group, agents and all.
        demo_line = f"{shlex.quote(str(KANBAN))} demo --dir {shlex.quote(str(folder))} --speed 2"
        tmux.start(["sh", "-c", f"{demo_line}; echo ended"], size=(80, 24))
        tmux.wait_for("DEMO", timeout=90)
        shell = int(tmux.tmux("display-message", "-p", "-t", "main", "#{pane_pid}"))
        (demo,) = _descendants(shell, depth=1)
        agents = _descendants(demo)
        assert agents  # the team is up
        time.sleep(1)  # the agents asleep between steps
        tmux.stop()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and Path(f"/proc/{demo}").exists():
            time.sleep(0.1)
        left = {pid for pid in agents | {demo} if Path(f"/proc/{pid}").exists()}
        for pid in left:
            os.kill(pid, 9)
        assert not left, "the demo or its agents kept running after the tmux server was killed"
        assert not folder.exists()
    finally:
        tmux.stop()
