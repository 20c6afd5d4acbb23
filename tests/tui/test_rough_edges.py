"""Rough edges an operator found in a day of review and landing in tmux (80x24 and 160x48):
each test here failed before its fix."""

from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Button, Static
from textual.widgets._toast import Toast

from boardlib import Board, ManualClock
from boardlib import attention as a
from boardlib.records import EXECUTION_SUCCEEDED
from boardlib.worktrees import Worktrees
from boardlib.worktrees.landing import CLEAN, LandingPreview
from tests.tui.conftest import OPERATOR, Notes, demo_app, loaded, make_app, text_of, until
from tests.tui.test_drawer import app_on, on_tab, opened, screen_text
from tests.tui.test_inbox import on_row
from tests.tui.test_land_dialog_fits import _body_of_done
from tests.tui.test_trust import palette_results
from tui.components.confirm import ConfirmDialog
from tui.components.drawer_screen import DrawerScreen
from tui.components.prompt import PromptDialog
from tui.review_board import START_MS as REVIEW_START_MS
from tui.review_board import ReviewBoard
from tui.screenshots import START_MS


async def test_the_palette_finds_a_theme_by_its_name(tmp_path: Path) -> None:
    """ "light" found nothing: the themes were only behind the palette's "Theme" entry."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        shown = await palette_results(pilot, "light")
        assert "Theme: textual-light" in shown, shown
        chosen = shown.index("Theme: textual-light")
        for _ in range(chosen):
            await pilot.press("down")
        await pilot.press("enter")
        await until(pilot, lambda: app.theme == "textual-light")


async def test_the_inbox_why_keeps_a_share_of_80_columns(tmp_path: Path) -> None:
    """At 80x24 a spent budget's row (its kind and action the longest) gave the title 24 cells
    and the why 5: the title now gets at most half of what the two share."""
    clock = ManualClock(START_MS)
    path = tmp_path / "board.db"
    with Board(path, clock=clock) as board:
        task = board.create_task("Reconcile the cart totals with the ledger", budget_usd=2)
        board.claim(task.id, "ada")
        run = board.open_execution(task.id, "script", agent="ada").id
        board.close_execution(run, EXECUTION_SUCCEEDED, agent="ada", cost_usd=2.5)
    app = make_app(path, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: [i.kind for i in app.inbox_items] == [a.BUDGET_EXCEEDED])
        await pilot.press("i")
        await on_row(pilot, task.id)
        await pilot.pause(0.2)
        why = app.inbox_items[0].why
        row = next(line for line in screen_text(app).splitlines() if task.id in line)
        shown = row.split(a.RAISE_BUDGET, 1)[1].split("…")
        assert len(shown) == 3, row  # the title and the why, each cut
        assert len(shown[1].strip()) >= 12 and why.startswith(shown[1].strip()), row


async def test_the_land_question_fits_80x24_with_a_failed_gate_and_hangs_its_lines() -> None:
    """With the warning of a failing verdict (overridden) and a two-line title, "As operator...
    deleted." was below the body's last line at 80x24, and the preview's second line began at
    the dialog's edge: the body drops its blank lines when it would not fit whole, and a marked
    line's wrapped lines stand under its words."""
    failing = '{"status": "fail", "attempts": []}'
    summary = "lands cleanly: 3 files changed, src/shop/cart.py, src/shop/discount.py, tests/x.py"
    clean = LandingPreview("TASK-7", CLEAN, summary, into="main", base_tip="2d55f48aa")
    title = "Reconcile the cart's discount rounding with the ledger's totals when a coupon applies"
    async with App[None]().run_test(size=(80, 24)) as pilot:
        dialog = _body_of_done(clean, failing, title)
        await pilot.app.push_screen(dialog)
        await pilot.pause()
        await pilot.pause()
        lines = [line.strip("█ ") for line in screen_text(pilot.app).splitlines()]
        assert "branch deleted." in lines, "\n".join(lines)
        said = screen_text(pilot.app).splitlines()
        wrapped = next(line for line in said if "src/shop/discount.py" in line)
        assert wrapped.split("█", 1)[1].startswith("     src/"), "\n".join(said)  # under "lands"
        for button in dialog.query(Button):
            inside = dialog.query_one("#dialog").content_region
            assert button.region.intersection(inside) == button.region, button.id


async def test_a_landed_task_says_its_branch_and_worktree_went_and_why_o_pages_nothing(
    review_board: ReviewBoard,
) -> None:
    """After a landing the Overview still listed the deleted branch and the archived worktree's
    path as if they were there, and `O` opened the pager on the Diff tab's one note: the fields
    say they were removed (landed as the commit), and `O` says why there is nothing to page."""
    board = review_board
    task_id = board.ids["gated"]  # done, passed its gate, not landed
    with Board(board.db) as opened_board:
        commit = Worktrees(opened_board).land(task_id, actor=OPERATOR).commit or ""
    short = commit[:7]
    notes = Notes()
    app = app_on(board, ManualClock(REVIEW_START_MS + 3_600_000), "gated")
    async with app.run_test(size=(160, 48), message_hook=notes) as pilot:
        drawer = await opened(pilot, app, task_id)
        head = drawer.query_one("#overview-head", Static)
        await until(pilot, lambda: f"removed: landed as {short} on main" in text_of(head.content))
        said = text_of(head.content)
        assert said.count(f"(removed: landed as {short} on main)") == 2, said  # branch, worktree
        await on_tab(pilot, drawer, "3", "diff")
        await until(
            pilot, lambda: f"no diff to show: the work landed as {short}" in screen_text(app)
        )
        await pilot.press("O")
        await until(pilot, lambda: any(f"landed as {short}" in n for n in notes.seen_text()))
        [told] = [n for n in notes.seen_text() if f"landed as {short}" in n]
        assert f"no diff of {task_id} to page through" in told, told
        assert app.screen is drawer.screen  # no pager ran: the drawer is where it was


async def test_a_question_opens_over_no_toast_left_from_before_it(tmp_path: Path) -> None:
    """A refused landing's error toast covered the reject question (`R`) for seconds at 80x24:
    a question opens with the toasts from before it gone (the message log keeps them), and a
    toast it raises itself still shows."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await loaded(pilot)
        app.jump_to("TASK-4")  # in review
        await pilot.pause()
        refused = "cannot land TASK-9: verification_failed: make test failed on the merged tree"
        app.notify(refused, severity="error", timeout=30)
        await until(pilot, lambda: list(app.query(Toast)))
        await pilot.press("R")
        await until(pilot, lambda: isinstance(app.screen, PromptDialog))
        await pilot.pause(0.3)
        assert not list(app.screen.query(Toast)), [t.region for t in app.screen.query(Toast)]
        assert any(said.message == refused for said in app.said.newest_first())  # kept
        app.notify("a toast the question raised")
        await until(pilot, lambda: list(app.screen.query(Toast)))


@pytest.mark.slow  # ~2 CPU-s: the app resized under a dialog
async def test_narrowing_under_a_question_lets_the_drawer_cover_the_board(
    review_board: ReviewBoard,
) -> None:
    """160 to 80 columns with a question open over the drawer beside the board left the drawer
    squeezed beside the board under the question until it closed: the drawer covers the board
    at once (as the full-screen one would), and moves full screen with its data once the question
    closes; widened again under a question, it is beside the board again."""
    board = review_board
    task_id = board.ids["review"]
    app = app_on(board, ManualClock(REVIEW_START_MS + 3_600_000), "review")
    async with app.run_test(size=(160, 48)) as pilot:
        before = await opened(pilot, app, task_id)
        assert before.beside

        def under() -> str:  # what the board screen under the question shows
            strips = app.board_screen._compositor.render_strips()
            return "\n".join("".join(segment.text for segment in strip) for strip in strips)

        await app.push_screen(ConfirmDialog("Reject TASK-2?", "a question over the drawer"))
        await pilot.pause()
        await pilot.resize_terminal(80, 24)
        await until(pilot, lambda: under().startswith(f"  {task_id}  in review"))
        assert before.region == app.board_screen.region.intersection(before.region)
        assert not any(line.startswith(" kanban") for line in under().splitlines()), under()
        await pilot.resize_terminal(160, 48)
        await until(pilot, lambda: under().startswith(" kanban"))  # beside the board again
        await pilot.resize_terminal(80, 24)
        await until(pilot, lambda: under().startswith(f"  {task_id}  in review"))
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, DrawerScreen))
        assert isinstance(app.screen, DrawerScreen) and app.screen.drawer.data is before.data
