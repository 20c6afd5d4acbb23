"""`kanban demo --no-tui`: the README's first command minus the screen, via the console script."""

import subprocess
from pathlib import Path

from boardlib import Board
from tests.cli_support import KANBAN, clean_env


def test_demo_runs_headless_for_a_bounded_time_and_keeps_its_board(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    done = subprocess.run(
        [str(KANBAN), "demo", "--no-tui", "--dir", str(folder), "--keep", "--speed", "20",
         "--duration", "6", "--seed", "3", "--tasks", "12", "--agents", "3"],
        env=clean_env(), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert str(folder / "board.db") in done.stdout  # it says where the board is
    with Board(folder / "board.db", read_only=True) as board:
        counts = board.status_counts()
        assert sum(counts.values()) == 12
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
