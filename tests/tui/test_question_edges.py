"""A question's edges, found driving it in tmux: a batch question's wrapped titles, the toasts it
raises itself (they outlived it), and a board toast seen over a question's first frames."""

from pathlib import Path

import pytest
from textual.widgets import Static
from textual.widgets._toast import Toast

from boardlib import Board, ManualClock
from tests.tui.conftest import loaded, make_app, shown_question, until
from tests.tui.test_operator import mark
from tui.app import KanbanApp
from tui.components.confirm import ConfirmDialog

START = 1_760_000_000_000
SMALL = (80, 24)
LONG = "Reconcile the cart's discount rounding with the ledger's totals before the quarter closes"


def board_of(path: Path, *titles: str) -> list[str]:
    with Board(path, clock=ManualClock(START)) as board:
        return [board.create_task(title).id for title in titles]


def body_lines(dialog: ConfirmDialog) -> list[str]:
    body = dialog.query_one("#dialog-body", Static)
    return [line.text.rstrip() for line in body.render_lines(body.content_region.reset_offset)]


def toast_words(app: KanbanApp) -> list[str]:
    return [toast._notification.message for toast in app.screen.query(Toast)]


async def test_a_batch_question_hangs_a_wrapped_title_under_its_first_character(
    tmp_path: Path,
) -> None:
    """The batch question "Cancel 3 marked task(s)?" at 80x24: a title longer than the dialog
    went on at its left margin, under the ids, as if it were the next task; it wraps under its
    own first word."""
    path = tmp_path / "board.db"
    ids = board_of(path, LONG, "Short one", f"{LONG}, again")
    app = make_app(path, ManualClock(START))
    async with app.run_test(size=SMALL) as pilot:
        await loaded(pilot)
        await mark(pilot, app, *ids)
        await pilot.press("x")
        dialog = await shown_question(pilot)
        await pilot.pause(0.1)
        lines = body_lines(dialog)
        firsts = [line for line in lines if line.lstrip().startswith("TASK-")]
        assert len(firsts) == 3, lines
        column = firsts[0].index("Reconcile")  # where every title begins
        assert firsts[1].index("Short one") == column, lines
        after = lines[lines.index(firsts[0]) + 1]
        assert not after.lstrip().startswith("TASK-"), lines  # it wrapped
        assert len(after) - len(after.lstrip()) == column, lines  # under "Reconcile"
        assert " ".join(" ".join(lines).split()).count(LONG) == 2  # every word still said
        await pilot.press("n")
        await until(pilot, lambda: app.screen is app.board_screen)


async def test_a_question_s_own_toast_goes_with_it_the_board_s_stay(tmp_path: Path) -> None:
    """`end` on a question that fits says "... is all on screen"; that toast stayed on the board
    after `n`, beside the board's own, about a question no longer there. It goes with the
    question; a board toast raised while the question was open stays."""
    path = tmp_path / "board.db"
    (task_id,) = board_of(path, "Bump the price")
    app = make_app(path, ManualClock(START))
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await loaded(pilot)
        await pilot.press("x")
        await shown_question(pilot)
        await pilot.press("end")
        await until(pilot, lambda: any("is all on screen" in said for said in toast_words(app)))
        app.notify("a board note", timeout=30)  # the board's, while the question is open
        await until(pilot, lambda: "a board note" in toast_words(app))
        await pilot.press("n")
        await until(pilot, lambda: app.screen is app.board_screen)
        await until(pilot, lambda: "a board note" in toast_words(app))
        await pilot.pause(0.2)
        assert toast_words(app) == ["a board note"], toast_words(app)
        said = [said.message for said in app.said.newest_first()]
        assert any("is all on screen" in words for words in said)  # the log keeps it
        with Board(path) as board:
            assert board.get_task(task_id).status == "todo"


async def test_a_board_toast_is_gone_before_the_question_is_first_painted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 160x48 a board toast stayed at the foot of the board, under the question, for ~0.3 s
    after the question was on screen: it was removed when the question mounted, and the board
    under it was drawn as it was laid out before. It goes when the question is pushed."""
    path = tmp_path / "board.db"
    board_of(path, "Bump the price")
    app = make_app(path, ManualClock(START))
    under: list[int] = []  # the toasts on the screens under the question at its first paint
    painted = ConfirmDialog._painted

    def first_paint(dialog: ConfirmDialog) -> None:
        if dialog.shown_at is None:
            under.append(sum(len(below.query(Toast)) for below in app.screen_stack[:-1]))
        painted(dialog)

    monkeypatch.setattr(ConfirmDialog, "_painted", first_paint)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await loaded(pilot)
        app.notify("a board note", timeout=30)
        await until(pilot, lambda: app.board_screen.query(Toast))
        await pilot.press("x")
        await shown_question(pilot)
        assert under == [0], under
        await pilot.press("n")
        await until(pilot, lambda: app.screen is app.board_screen)
