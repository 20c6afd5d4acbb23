"""Toasts at 80x24 (five toasts piled over the board, and "f follows it" toasts showed while the
inbox, where `f` does nothing, was open). Every notification stays in the message log; only the
toasts on screen are fewer."""

from pathlib import Path

from textual.widgets import Button
from textual.widgets._toast import Toast

from tests.tui.conftest import Notes, demo_app, loaded, until, utc
from tests.tui.test_land_dialog_fits import land_dialog_on_a_long_title
from tui.app import ROWS_PER_TOAST, KanbanApp
from tui.components.drawer_screen import DrawerScreen
from tui.components.inbox_screen import InboxScreen

SMALL = (80, 24)


async def test_a_burst_of_toasts_shows_only_what_fits_at_80x24(tmp_path: Path) -> None:
    utc()
    app = demo_app(tmp_path)
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await loaded(pilot)
        app.clear_notifications()
        for number in range(5):
            app.notify(f"TASK-{number} needs review. i opens the inbox.", title="Needs you")
        app.notify("TASK-9 was refused landing", severity="error")
        await pilot.pause(0.2)
        shown = [toast._notification.message for toast in app.query(Toast)]
        assert len(shown) == SMALL[1] // ROWS_PER_TOAST, shown
        assert "TASK-9 was refused landing" in shown  # errors go last
        assert "TASK-4 needs review. i opens the inbox." in shown  # the newest stays
        assert len(app.said) >= 6  # the message log keeps every one


async def test_follow_hints_replace_each_other_and_skip_the_inbox(tmp_path: Path) -> None:
    utc()
    notes = Notes()
    app = demo_app(tmp_path)
    async with app.run_test(size=(160, 48), message_hook=notes, notifications=True) as pilot:
        await loaded(pilot)
        app.clear_notifications()
        app.selection_left("TASK-1", "done")
        app.selection_left("TASK-2", "done")
        await pilot.pause(0.2)
        follows = [
            toast._notification.message
            for toast in app.query(Toast)
            if "follows it" in toast._notification.message
        ]
        assert len(follows) == 1 and follows[0].startswith("TASK-2"), follows
        await pilot.press("i")
        await until(pilot, lambda: isinstance(app.screen, InboxScreen))
        before = len(notes.seen)
        app.selection_left("TASK-3", "done")
        await pilot.pause(0.2)
        assert not [n for n in notes.seen[before:] if "follows it" in n.notification.message]
        assert app.left_task == "TASK-3"  # `f` back on the board still follows it


async def test_toasts_over_the_land_dialog_leave_its_buttons_in_view_at_80x24(
    tmp_path: Path,
) -> None:
    """Found in tmux: `b` and `u` in the land dialog (each says why it does nothing) piled two
    toasts over its Approve and Back buttons."""
    utc()
    app = demo_app(tmp_path)
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await loaded(pilot)
        dialog = land_dialog_on_a_long_title("make test")
        await app.push_screen(dialog)
        app.notify("TASK-7 lands on main: the repository has no other branch.")
        app.notify("TASK-7 lands verified (`make test` verifies it): y approve and land.")
        await pilot.pause(0.3)
        toasts = [toast.region for toast in app.screen.query(Toast)]
        assert len(toasts) == 2, toasts
        for button in dialog.query(Button):
            assert all(not toast.overlaps(button.region) for toast in toasts), (
                button.id, button.region, toasts,
            )  # fmt: skip


def follow_toasts(app: KanbanApp) -> list[str]:
    return [
        toast._notification.message
        for toast in app.screen.query(Toast)
        if "follows it" in toast._notification.message
    ]


async def test_the_follow_note_goes_once_followed_and_stays_on_the_board(tmp_path: Path) -> None:
    """Found in tmux: after `f` the "f follows it" toast stayed its five seconds, and `enter`
    then brought it back over the drawer, where `f` does nothing."""
    utc()
    app = demo_app(tmp_path)
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await loaded(pilot)
        app.clear_notifications()
        app.selection_left("TASK-2", "done")
        await pilot.pause(0.2)
        assert follow_toasts(app)
        await pilot.press("f")
        await pilot.pause(0.2)
        assert not follow_toasts(app)
        app.selection_left("TASK-3", "done")
        await pilot.pause(0.2)
        assert follow_toasts(app)
        await pilot.press("enter")  # the drawer takes the screen at 80 columns
        await until(pilot, lambda: isinstance(app.screen, DrawerScreen))
        await pilot.pause(0.2)
        assert not follow_toasts(app)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.board_screen)
        await pilot.pause(0.2)
        assert not follow_toasts(app)
        assert app.left_task == "TASK-3"  # `f` still follows it


async def test_a_toast_shows_once_over_a_dialog(tmp_path: Path) -> None:
    """Found in tmux at 80x24: with the move menu open, a toast showed twice, at the top of the
    screen (where toasts go over a dialog) and at the foot of the board under it."""
    utc()
    app = demo_app(tmp_path)
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await loaded(pilot)
        app.clear_notifications()
        app.notify("TASK-9 needs review. i opens the inbox.", title="Needs you", timeout=30)
        await until(pilot, lambda: app.board_screen.query(Toast))
        await pilot.press("m")
        await until(pilot, lambda: app.screen is not app.board_screen)
        await until(pilot, lambda: app.screen.query(Toast))
        await pilot.pause(0.2)
        assert not app.board_screen.query(Toast)  # the dialog's, at the top, is the one
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.board_screen)
        await until(pilot, lambda: app.board_screen.query(Toast))  # back at the board's foot
