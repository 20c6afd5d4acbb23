"""The footer under a dialog says the dialog's keys. In tmux at 80x24 every question (the land
question, a confirmation, the inbox's) kept the footer of the screen behind it (`a Approve R
Reject W Land`, the inbox's `a Do it`), keys that do nothing there. Each kind of dialog's footer
shows only its own keys, and each key it shows acts when pressed (the dialog answers, closes,
changes or moves its focus: no "is waiting" for a key the footer named)."""

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.screen import ModalScreen
from textual.widgets import Static
from textual.widgets._footer import FooterKey

from boardlib import Board
from tests.tui.conftest import demo_app, loaded, settled, shown_question, until
from tests.tui.test_drawer import app_on, opened, screen_text
from tui.app import KanbanApp
from tui.components.confirm import ConfirmDialog
from tui.components.dependency_picker import DependencyPicker
from tui.components.footer import HintFooter
from tui.components.help_screen import HelpScreen
from tui.components.inbox_screen import InboxScreen
from tui.components.info_dialog import InfoDialog
from tui.components.land_dialog import LandDialog
from tui.components.message_log import MessageLogScreen
from tui.components.move_menu import MoveMenu
from tui.components.prompt import PromptDialog
from tui.components.task_form import TaskForm
from tui.review_board import ReviewBoard

Opener = Callable[[Any, KanbanApp], Awaitable[None]]


def footer_line(app: KanbanApp) -> str:
    """The terminal's last line, its hints one space apart."""
    return " ".join(screen_text(app).splitlines()[-1].split())


def footer_keys(app: KanbanApp) -> list[str]:
    """The keys the dialog's own footer shows (the screen on top's), as the key is pressed."""
    hints = app.screen.query_one(HintFooter).query(FooterKey)
    return [hint.key for hint in hints if hint.visible and not hint.has_class("-command-palette")]


def state(app: KanbanApp) -> tuple[object, ...]:
    """What a key acting on a dialog changes: the screens, the focus, or the dialog's text."""
    said = tuple(str(shown.content) for shown in app.screen.query(Static))
    return tuple(app.screen_stack), app.focused, said, getattr(app.screen, "strategy", None)


def press_opens(*keys: str) -> Opener:
    async def opener(pilot: Any, app: KanbanApp) -> None:
        await pilot.press(*keys)

    return opener


async def info(pilot: Any, app: KanbanApp) -> None:
    app.push_screen(InfoDialog("Cancelled 2 tasks", "TASK-4 and TASK-5 are cancelled."))


DIALOGS = [
    # (opened by, the dialog, its footer as the last line shows it)
    (press_opens("x"), ConfirmDialog, "y Cancel task n Back"),
    (press_opens("b"), PromptDialog, "^s Save esc Back"),
    (press_opens("m"), MoveMenu, "⏎ Choose esc Back"),
    (press_opens("D"), DependencyPicker, "esc Back"),  # its ↓ is the query line's (Input)
    (press_opens("n"), TaskForm, "^s Save esc Back"),
    (press_opens("question_mark"), HelpScreen, "esc Close"),
    (press_opens("M"), MessageLogScreen, "esc Close"),
    (info, InfoDialog, "esc Close"),
]


async def on_top(pilot: Any, app: KanbanApp, kind: type[ModalScreen[Any]]) -> ModalScreen[Any]:
    if kind is ConfirmDialog:
        return await shown_question(pilot)
    await until(pilot, lambda: isinstance(app.screen, kind))
    await pilot.pause(0.1)
    assert isinstance(app.screen, kind)
    return app.screen


async def gone(pilot: Any, app: KanbanApp, dialog: ModalScreen[Any]) -> None:
    """The dialog off the screen stack, whatever its key left (an error line, the focus moved)."""
    if dialog in app.screen_stack:
        dialog.dismiss(None)
    await until(pilot, lambda: not isinstance(app.screen, ModalScreen))
    await pilot.pause(0.1)


@pytest.mark.parametrize(
    ("opener", "kind", "footer"), DIALOGS, ids=lambda d: getattr(d, "__name__", None)
)
async def test_a_dialog_s_footer_says_its_own_keys_and_each_acts(
    tmp_path: Path, opener: Opener, kind: type[ModalScreen[Any]], footer: str
) -> None:
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        assert "Quit" in footer_line(app)  # the board's own footer, before any dialog
        await opener(pilot, app)
        dialog = await on_top(pilot, app, kind)
        await until(pilot, lambda: footer_line(app) == footer)
        keys = footer_keys(app)
        assert keys, footer
        for key in reversed(keys):  # the answer that writes (y) last
            await gone(pilot, app, dialog)
            await opener(pilot, app)
            dialog = await on_top(pilot, app, kind)
            before = state(app)
            await pilot.press(key)
            await until(pilot, lambda: state(app) != before)  # noqa: B023
            assert "is waiting" not in screen_text(app), key


async def test_the_inbox_s_question_has_the_question_s_footer(tmp_path: Path) -> None:
    """From the inbox, `a` asks (an override here): the footer says the question's answers, not
    the inbox's `a Do it`; `n` backs out and the inbox's own footer is back."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot, lambda: app.inbox_items)
        await pilot.press("i")
        await until(pilot, lambda: isinstance(app.screen, InboxScreen))
        await settled(pilot)
        assert "a Do it" in footer_line(app)
        await pilot.press("a")
        question = await shown_question(pilot)
        verb = question.confirm_label
        await until(pilot, lambda: footer_line(app) == f"y {verb} n Back")
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, InboxScreen))
        await until(pilot, lambda: "a Do it" in footer_line(app))


async def asked_to_land(pilot: Any, app: KanbanApp, task_id: str) -> LandDialog:
    await opened(pilot, app, task_id)
    await pilot.press("W")
    dialog = await shown_question(pilot)
    assert isinstance(dialog, LandDialog)
    await until(pilot, lambda: dialog.shown is not None and dialog.shown.preview is not None)
    return dialog


async def test_the_land_question_s_footer_says_the_keys_that_act_on_that_landing(
    review_board: ReviewBoard,
) -> None:
    """The tmux finding: under the land question the footer said the drawer's `a Approve R
    Reject W Land`. In review it says `y Approve and land n Back s Strategy`: no `b` (the shop
    has no other branch), `u` (it has a verify command) or `x` (not done work). Done, it says
    `x Won't land`, and `x` asks why. `s` moves the strategy on; `n` backs out."""
    from boardlib import ManualClock
    from tui.review_board import START_MS

    board, clock = review_board, ManualClock(START_MS + 3_600_000)
    task_id = board.ids["review"]
    app = app_on(board, clock, "review")
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = await asked_to_land(pilot, app, task_id)
        await until(pilot, lambda: footer_line(app) == "y Approve and land n Back s Strategy")
        await pilot.press("s")
        await until(pilot, lambda: dialog.strategy != "squash")
        await pilot.press("n")
        await until(pilot, lambda: not isinstance(app.screen, ModalScreen))
        await until(pilot, lambda: footer_line(app).startswith("a Approve R Reject W Land"))
    with Board(board.db, clock=clock) as writer:
        writer.approve(task_id, "agent-linus")
    app = app_on(board, clock, "review")
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await asked_to_land(pilot, app, task_id)
        await until(pilot, lambda: footer_line(app) == "y Land n Back s Strategy x Won't land")
        await pilot.press("x")
        await until(pilot, lambda: isinstance(app.screen, PromptDialog))
        await until(pilot, lambda: footer_line(app) == "^s Save esc Back")
