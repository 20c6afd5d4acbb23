"""Shared pieces of the TUI tests: a deterministic board, the app on it, and waiting helpers."""

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import textual.constants
from textual.message import Message
from textual.notifications import Notify
from textual.pilot import Pilot
from textual.widgets._toast import Toast
from textual.worker import WorkerState

from boardlib import Board, ManualClock, Task
from tui.app import KanbanApp
from tui.cards import CARD_HEIGHT
from tui.components.confirm import ConfirmDialog
from tui.screenshots import START_MS, build_demo_board

OPERATOR = "operator:test"


def pytest_configure(config: "Any") -> None:
    # The suite-wide registration belongs in pyproject.toml; until it lands there, this one keeps
    # `-m "not slow"` and --strict-markers working for the TUI wing (as the HTTP wing's does).
    config.addinivalue_line("markers", "slow: a long test (real terminals, long app sessions)")


@pytest.fixture(autouse=True)
def truecolor(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every app in these tests renders for a truecolor terminal (a test may ask for another):
    the app lifts text to its contrast floor in the terminal's colour system, and the shell's
    TERM must not change what a snapshot shows."""
    monkeypatch.setattr(textual.constants, "COLOR_SYSTEM", "truecolor")


def utc() -> None:
    os.environ["TZ"] = "UTC"
    time.tzset()


def demo_board(folder: Path) -> tuple[Path, ManualClock, dict[str, str]]:
    clock = ManualClock(START_MS)
    path = folder / "board.db"
    ids = build_demo_board(path, clock)
    return path, clock, ids


def fresh(path: Path, task_id: str) -> Task:
    """The task as the file holds it now (not as the app shows it)."""
    with Board(path, read_only=True) as board:
        return board.get_task(task_id)


def make_app(path: Path, clock: ManualClock, **options: Any) -> KanbanApp:
    return KanbanApp(
        path, poll_ms=options.pop("poll_ms", 30), clock=clock, operator=OPERATOR,
        user_keymap={}, **options,
    )  # fmt: skip


class Notes:
    """Collects the notifications the app raises (a `run_test` message hook)."""

    def __init__(self) -> None:
        self.seen: list[Notify] = []

    def __call__(self, message: Message) -> None:
        if isinstance(message, Notify):
            self.seen.append(message)

    def errors(self) -> list[str]:
        return self.of("error")

    def warnings(self) -> list[str]:
        return self.of("warning")

    def infos(self) -> list[str]:
        return self.of("information")

    def seen_text(self) -> list[str]:
        return [f"{n.notification.title}: {n.notification.message}" for n in self.seen]

    def of(self, severity: str) -> list[str]:
        return [
            f"{n.notification.title}: {n.notification.message}"
            for n in self.seen
            if n.notification.severity == severity
        ]


async def until(pilot: Pilot[Any], check: Callable[[], object], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        await pilot.pause(0.02)
    raise AssertionError(f"condition not met within {timeout} s")


def cards_loaded(app: KanbanApp) -> bool:
    """Every card row the board shows is loaded: no page of a column is still on its way (a row
    not loaded yet is drawn as a blank card)."""
    for column in app.board_screen.board.columns.values():
        if column.collapsed or column.strip or not column.rows:
            continue
        top = column.scroll_offset.y // CARD_HEIGHT
        bottom = min(column.rows, (column.scroll_offset.y + column.size.height) // CARD_HEIGHT + 1)
        if any(column.id_at(row) is None for row in range(top, bottom)):
            return False
    return True


def quiet(app: KanbanApp) -> bool:
    """Nothing the frame may still change with: no toast on screen and no worker pending or
    running (a drawer read's worker runs until its result is drawn: `call_from_thread` waits)."""
    busy = (WorkerState.PENDING, WorkerState.RUNNING)
    return not app.query(Toast) and not any(worker.state in busy for worker in app.workers)


async def settled(pilot: Pilot[Any], check: Callable[[], object] = lambda: True) -> None:
    """The frame a screenshot takes is final: the board loaded with every shown card, `check`
    holds, nothing is under way; twice, an idle pause apart (a timer may start a read)."""
    app = pilot.app
    assert isinstance(app, KanbanApp)

    def steady() -> bool:
        return app.loaded and cards_loaded(app) and bool(check()) and quiet(app)

    for _ in range(2):
        await until(pilot, steady, timeout=30)
        await pilot.pause()


async def loaded(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, KanbanApp)
    await until(pilot, lambda: app.loaded)
    await pilot.pause(0.05)


async def shown_question(pilot: Pilot[Any]) -> ConfirmDialog:
    """The confirmation on screen, once it was painted: keys typed before a question is on
    screen are not answers (the app drops them), so a test answers as a person does."""
    app = pilot.app

    def shown() -> bool:
        screen = app.screen
        if not isinstance(screen, ConfirmDialog) or screen.answerable_at is None:
            return False
        return time.monotonic() >= screen.answerable_at

    await until(pilot, shown, timeout=30)  # a bound: a preview (git) may come first
    assert isinstance(app.screen, ConfirmDialog)
    return app.screen


async def answer(pilot: Pilot[Any], key: str) -> None:
    """Press `key` on the confirmation once it is shown."""
    await shown_question(pilot)
    await pilot.press(key)
