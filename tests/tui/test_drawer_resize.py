"""An open drawer crossing `DRAWER_BESIDE_MIN_COLUMNS` (80x24 to 160x48 and back) switches
layout in one step: every frame drawn after the resize shows the drawer with the task it already
had, never the board alone nor a drawer saying "loading…" (found driving the TUI in tmux)."""

from pathlib import Path
from typing import Any

import tui.app
from tests.tui.conftest import OPERATOR
from tests.tui.test_drawer import opened, review, screen_text, until
from tui.app import KanbanApp
from tui.components.drawer_screen import DrawerScreen

__all__ = ["review"]  # the fixture


class FramesApp(KanbanApp):
    """The app, keeping the text of every frame it sends to the terminal."""

    CSS_PATH = str(Path(tui.app.__file__).with_name("app.tcss"))
    frames: list[str]

    def _display(self, screen: Any, renderable: Any) -> None:
        super()._display(screen, renderable)
        if renderable is not None and self.screen_stack:
            self.frames.append(screen_text(self))


def frames_app(review: Any) -> tuple[FramesApp, str]:
    board, clock = review
    app = FramesApp(
        board.db, poll_ms=30, clock=clock, operator=OPERATOR, user_keymap={},
        open_task=board.ids["review"],
    )  # fmt: skip
    app.frames = []
    return app, board.ids["review"]


async def test_widening_moves_the_drawer_beside_the_board_with_its_content(review: Any) -> None:
    app, task_id = frames_app(review)
    async with app.run_test(size=(80, 24)) as pilot:
        before = await opened(pilot, app, task_id)
        assert not before.beside and before.data is not None
        app.frames.clear()
        await pilot.resize_terminal(160, 48)
        await until(pilot, lambda: app.screen is app.board_screen and app.drawer_task_id())
        drawer = app.board_screen.drawer
        assert drawer is not None and drawer.beside
        await pilot.pause(0.3)
        assert app.frames
        for frame in app.frames:
            assert "loading…" not in frame, frame
            assert task_id in frame, frame  # never the board alone
        # every frame of the board has its columns laid out for the room beside the drawer
        boards = [frame.splitlines()[1] for frame in app.frames if frame.startswith(" kanban")]
        assert boards and set(boards) == {boards[-1]}, "\n".join(b[:100] for b in boards)
        assert drawer.data is before.data  # what the full-screen drawer had, not read again


async def test_narrowing_moves_the_drawer_full_screen_with_its_content(review: Any) -> None:
    app, task_id = frames_app(review)
    async with app.run_test(size=(160, 48)) as pilot:
        before = await opened(pilot, app, task_id)
        assert before.beside and before.data is not None
        app.frames.clear()
        await pilot.resize_terminal(80, 24)
        await until(pilot, lambda: isinstance(app.screen, DrawerScreen))
        assert isinstance(app.screen, DrawerScreen)
        drawer = app.screen.drawer
        await pilot.pause(0.3)
        narrow = [frame for frame in app.frames if len(frame.splitlines()[0]) == 80]
        assert narrow
        for frame in narrow:
            assert "loading…" not in frame, frame
            assert not frame.startswith(" kanban"), frame  # the drawer covers the board at once
        assert drawer.data is before.data
