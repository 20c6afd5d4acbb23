"""Shared fixtures: a real board file in a temp folder with a clock the test drives."""

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from boardlib import Board, BoardConfig, ManualClock, Task
from boardlib import transitions as t

if TYPE_CHECKING:
    from tests.worktree_helpers import Env


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(start_ms=1_800_000_000_000)


@pytest.fixture
def board_path(tmp_path: Path) -> Path:
    return tmp_path / "board.db"


@pytest.fixture
def board(board_path: Path, clock: ManualClock) -> Iterator[Board]:
    with Board(board_path, clock=clock, config=BoardConfig()) as opened:
        yield opened


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator["Env"]:
    """A board, a real temporary git repository and `Worktrees` rooted in a temp folder (the
    worktree and gate tests; test_worktrees_complete overrides it with a verify timeout)."""
    from tests.worktree_helpers import make_env

    made = make_env(tmp_path, monkeypatch)
    yield made
    made.board.close()


def task_in(board: Board, status: str, *, title: str = "task", builder: str = "builder") -> Task:
    """A fresh task driven to `status` through the board's own verbs."""
    initial = t.BACKLOG if status == t.BACKLOG else t.TODO
    task = board.create_task(title, status=initial)
    if status in (t.BACKLOG, t.TODO):
        return task
    if status == t.CANCELLED:
        return board.cancel(task.id)
    board.claim(task.id, builder)
    if status == t.IN_PROGRESS:
        return board.get_task(task.id)
    if status == t.BLOCKED:
        return board.block(task.id, builder, "waiting on a human")
    board.complete(task.id, builder)
    if status == t.IN_REVIEW:
        return board.get_task(task.id)
    assert status == t.DONE
    return board.approve(task.id, "reviewer")


def row(board: Board, task_id: str) -> Task:
    """The task as stored right now (for "refused and changed nothing" checks)."""
    return board.get_task(task_id)


def pytest_addoption(parser: pytest.Parser) -> None:
    """The chaos suite's soak (tests/chaos/test_soak.py): bounded in CI, longer on request."""
    group = parser.getgroup("chaos", "the chaos suite's kill -9 soak")
    group.addoption("--soak-seconds", type=float, help="soak time before the drain (CI: 45)")
    group.addoption("--soak-workers", type=int, default=12, help="workers in the soak")
    group.addoption("--soak-surfaces", help="surfaces the workers cycle over (lib,cli[,http])")
    group.addoption("--soak-db", help="the soak's board: a file, a URL, or 'postgres' (a temp one)")
    group.addoption("--soak-report", help="write the soak's JSON report to this file")
