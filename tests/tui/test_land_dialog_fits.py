"""The land dialog at 80x24 with a ~250-character title (the title pushed the buttons off the
screen, so the question could only be answered by key)."""

from textual.app import App
from textual.widgets import Button, Static

from boardlib import transitions as t
from boardlib.records import Task
from boardlib.worktrees.landing import CLEAN, LandingPreview
from boardlib.worktrees.results import LandingChoices
from tui.components.land_dialog import LandDialog
from tui.landing_data import Choices, Preview

LONG_TITLE = ("Reconcile the cart's discount rounding with the ledger's totals " * 5)[:250]
SMALL = (80, 24)


def land_dialog_on_a_long_title(verify_command: str | None) -> LandDialog:
    """A land dialog as tall as 80x24 allows: a long title, a clean preview, two branches."""
    task = Task(id="TASK-7", title=LONG_TITLE, status=t.IN_REVIEW, created_at=0, updated_at=0)
    preview = LandingPreview(task.id, CLEAN, "lands cleanly", into="main", base_tip="2d55f48aa")
    choices = Choices(task.id, LandingChoices(task.id, "main", ["main", "release"], verify_command))
    return LandDialog(task, Preview(task.id, preview, "s"), choices, operator="operator:o")


def _lines(widget: Static) -> str:
    return "\n".join(line.text for line in widget.render_lines(widget.content_region.reset_offset))


async def test_the_buttons_stay_on_an_80x24_screen_with_a_long_title() -> None:
    for verify_command in ("make test", None):  # none: a warning line more, and `u`'s button
        async with App[None]().run_test(size=SMALL) as pilot:
            dialog = land_dialog_on_a_long_title(verify_command)
            await pilot.app.push_screen(dialog)
            await pilot.pause()
            inside = dialog.query_one("#dialog").content_region
            for button in dialog.query(Button):
                shown = button.region.intersection(inside)
                assert shown == button.region, (verify_command, button.id, button.region)


async def test_a_long_title_is_clipped_and_the_preview_stays_in_view() -> None:
    async with App[None]().run_test(size=SMALL) as pilot:
        dialog = land_dialog_on_a_long_title("make test")
        await pilot.app.push_screen(dialog)
        await pilot.pause()
        shown = _lines(dialog.query_one("#dialog-body", Static))
        assert "✓ lands cleanly" in shown
        assert "…" in shown and LONG_TITLE not in shown.replace("\n", " ")
