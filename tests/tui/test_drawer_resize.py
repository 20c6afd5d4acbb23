"""An open drawer crossing `DRAWER_BESIDE_MIN_COLUMNS` (80x24 to 160x48 and back) switches
layout in one step: every frame drawn after the resize shows the drawer with the task it already
had, never the board alone nor a drawer saying "loading…" (found driving the TUI in tmux). And
the drawer there is as the operator left it: tab, searches, a search line being typed, the
diff's place, side by side once the width has room for it again."""

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

import tui.app
from tests.tui.conftest import OPERATOR
from tests.tui.test_drawer import opened, review, screen_text, until
from tui.app import KanbanApp
from tui.components.drawer_screen import DrawerScreen
from tui.components.search_bar import SearchBar
from tui.components.text_pane import TextPane

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


def where_it_stands(drawer: Any) -> dict[str, Any]:
    """What the operator was doing in the drawer: the tab, each tab's search, the diff's search
    and current match, its cursor, the line at its top, its sideways offset; History's search."""
    view = drawer.diff
    history = drawer.query_one("#history-pane", TextPane)
    return {
        "tab": drawer.active_tab,
        "searches": dict(drawer.searches),
        "diff search": (view.search_text, len(view.matches), view.match_index),
        "cursor": view.cursor,
        "top": view.top_row,
        "pan": view.pan_x,
        "history search": (history.search_text, history.match_index),
    }


async def searched(pilot: Any, drawer: Any, query: str) -> None:
    await pilot.press("slash", *query, "enter")
    await until(pilot, lambda: drawer.searches.get(drawer.active_tab) == query)


async def moved(pilot: Any, app: KanbanApp, size: tuple[int, int], beside: bool) -> Any:
    await pilot.resize_terminal(*size)

    def there() -> bool:
        drawers = [d for d in app.drawers() if d.screen is app.screen and d.is_mounted]
        return len(drawers) == 1 and drawers[0].beside == beside and drawers[0].drawn.is_set()

    await until(pilot, there)
    await pilot.pause(0.3)
    [drawer] = [d for d in app.drawers() if d.screen is app.screen]
    return drawer


@pytest.mark.slow  # 3-6 s each: a review board resized both ways
@pytest.mark.parametrize(
    ("first", "second", "beside"), [((80, 24), (160, 48), False), ((160, 48), (80, 24), True)]
)
async def test_a_resize_keeps_the_drawers_tab_searches_and_place_in_the_diff(
    review: Any, first: tuple[int, int], second: tuple[int, int], beside: bool
) -> None:
    """Each way, the drawer in its other layout was on the right tab but had lost the searches
    (no match in the header, none highlighted) and was back at the diff's first line."""
    app, task_id = frames_app(review)
    async with app.run_test(size=first) as pilot:
        drawer = await opened(pilot, app, task_id)
        assert drawer.beside == beside
        await pilot.press("5")  # History's own search
        await until(pilot, lambda: drawer.active_tab == "history")
        await searched(pilot, drawer, "claimed")
        await pilot.press("3")
        await until(pilot, lambda: drawer.workspace is not None and len(drawer.diff.rows) > 20)
        await searched(pilot, drawer, "total")
        await pilot.press("n")  # the second match
        await pilot.press("ctrl+d")  # a page down
        await pilot.press("greater_than_sign")  # the text panned sideways
        kept = where_it_stands(drawer)
        assert kept["diff search"][2] == 1 and kept["top"] > 0 and kept["pan"] > 0, kept
        assert kept["history search"] == ("claimed", 0), kept
        state = str(drawer.query_one("#drawer-state", Static).render())
        assert f"match 2/{kept['diff search'][1]}" in state, state

        other = await moved(pilot, app, second, not beside)
        assert other is not drawer
        there = where_it_stands(other)
        # the line at the top as far as the view allows: the cursor's line stays in view
        view = other.diff
        assert there.pop("top") == min(kept["top"], view.max_scroll_y) or beside
        assert view.top_row <= view.cursor < view.top_row + view.size.height
        assert there == {k: v for k, v in kept.items() if k != "top"}
        assert state in str(other.query_one("#drawer-state", Static).render())

        again = await moved(pilot, app, first, beside)
        assert where_it_stands(again) == kept


@pytest.mark.slow  # ~4 s: 160 -> 80 -> 160
async def test_side_by_side_is_kept_for_when_the_terminal_is_wide_again(review: Any) -> None:
    """At 160x48 with the diff side by side, 80x24 cannot show it (it needs 160 columns): the
    drawer there shows it one column wide, and back at 160x48 it is side by side again (it was
    lost, the operator's `s` forgotten at the first resize)."""
    app, task_id = frames_app(review)
    async with app.run_test(size=(160, 48)) as pilot:
        drawer = await opened(pilot, app, task_id)
        await pilot.press("3")
        await until(pilot, lambda: drawer.workspace is not None and len(drawer.diff.rows) > 20)
        await pilot.press("s")
        await until(pilot, lambda: drawer.diff.side_by_side and drawer.has_class("-wide"))
        await searched(pilot, drawer, "total")
        line = drawer.diff.cursor_row()
        narrow = await moved(pilot, app, (80, 24), False)
        assert not narrow.diff.side_by_side and narrow.active_tab == "diff"
        assert narrow.diff.search_text == "total" and narrow.diff.matches
        wide = await moved(pilot, app, (160, 48), True)
        assert wide.diff.side_by_side and wide.has_class("-wide")
        assert wide.active_tab == "diff" and wide.searches == {"diff": "total"}
        assert wide.diff.cursor_row() == line
        assert "side by side" in str(wide.query_one("#drawer-state", Static).render())
        assert wide.region.width == 160


@pytest.mark.slow  # 3-6 s each: a review board resized both ways
@pytest.mark.parametrize(
    ("first", "second", "beside"), [((80, 24), (160, 48), False), ((160, 48), (80, 24), True)]
)
async def test_a_search_being_typed_is_still_being_typed_after_a_resize(
    review: Any, first: tuple[int, int], second: tuple[int, int], beside: bool
) -> None:
    """The search line half typed was gone, and the keys typed next went to the drawer."""
    app, task_id = frames_app(review)
    async with app.run_test(size=first) as pilot:
        drawer = await opened(pilot, app, task_id)
        await pilot.press("3")
        await until(pilot, lambda: drawer.workspace is not None and len(drawer.diff.rows) > 20)
        await pilot.press("slash", *"tot")
        other = await moved(pilot, app, second, not beside)
        bar = other.query_one(SearchBar)
        await until(pilot, lambda: bar.has_focus)
        assert bar.display and bar.value == "tot" and bar.cursor_position == 3
        await pilot.press(*"al", "enter")
        await until(pilot, lambda: other.searches == {"diff": "total"})
        assert other.diff.matches and other.has_focus
