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

from boardlib import Board, ManualClock, Task
from tui.app import KanbanApp
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

    await until(pilot, shown)
    assert isinstance(app.screen, ConfirmDialog)
    return app.screen


async def answer(pilot: Pilot[Any], key: str) -> None:
    """Press `key` on the confirmation once it is shown."""
    await shown_question(pilot)
    await pilot.press(key)
