"""What opening the task drawer and reading its diff cost, where a cut can come undone: what a
closed drawer leaves alive, what the diff's first screen waits for, what a cursor move redraws.
Speed itself is the benchmarks' (`benchmarks/tui.py --drawer`), never asserted here."""

import gc
import threading
from collections.abc import Sequence
from typing import Any

import pytest
from rich.segment import Segment
from textual._styles_cache import StylesCache
from textual.widget import Widget
from textual.widgets._footer import FooterKey

from boardlib import ManualClock
from tests.tui.conftest import quiet, until
from tests.tui.test_drawer import app_on, screen_text, shows
from tui import registry
from tui.components import diff_view
from tui.components import drawer as drawer_module
from tui.components.diff_view import DiffView
from tui.components.drawer import TaskDrawer
from tui.components.footer import HintFooter
from tui.components.search_bar import SearchBar
from tui.review_board import START_MS, ReviewBoard


@pytest.fixture
def review(review_board: ReviewBoard) -> tuple[ReviewBoard, ManualClock]:
    return review_board, ManualClock(START_MS + 3_600_000)


def held_after_removal() -> dict[str, int]:
    """What is still alive of widgets no longer in the app: key hints, search lines and drawers,
    and style caches of widgets gone (each holds every line its widget rendered)."""
    gc.collect()
    objects = gc.get_objects()
    widgets = [o for o in objects if isinstance(o, Widget)]
    caches = {id(w._styles_cache) for w in widgets}
    gone = [w for w in widgets if not w.is_attached]
    return {
        "key hints": sum(isinstance(w, FooterKey) for w in gone),
        "search lines": sum(isinstance(w, SearchBar) for w in gone),
        "drawers": sum(isinstance(w, TaskDrawer) for w in gone),
        "style caches": sum(isinstance(o, StylesCache) and id(o) not in caches for o in objects),
    }


@pytest.mark.slow  # 3-3.7 CPU-s: three drawer opens, each followed by a walk of every object
async def test_a_closed_drawer_leaves_none_of_its_widgets_alive(review) -> None:  # type: ignore[no-untyped-def]
    """Textual kept the footer's removed key hints (bound to `compact`), every removed search
    line (the screen's selection signal) and the last 1,024 widgets' rendered lines (an
    `lru_cache` on a method): some 30,000 objects per drawer opened, walked by every later
    garbage collection. A drawer just closed may be held a moment (its search line with it)."""
    board, clock = review
    app = app_on(board, clock, "review")
    async with app.run_test(size=(200, 50)) as pilot:
        await shows(pilot, app, "5 History")
        counts = []
        for _ in range(3):  # each leak grew by hundreds of objects an open: two opens show it
            await pilot.press("escape")
            await until(pilot, lambda: not app.query(TaskDrawer))
            await pilot.press("enter")
            await until(pilot, lambda: bool(app.query(TaskDrawer)))
            await shows(pilot, app, "5 History")
            await pilot.pause(0.2)
            counts.append(held_after_removal())
    first, held = counts[0], counts[-1]  # what a test before this one left is no concern here
    assert held["key hints"] <= first["key hints"], counts
    assert held["style caches"] <= first["style caches"], counts
    assert held["search lines"] <= held["drawers"], counts


def marked(view: DiffView, text: str) -> bool | None:
    """Whether the diff line showing `text` has a bold part (a keyword); None when no line on
    screen shows it."""
    for y in range(view.scrollable_content_region.height):
        segments: Sequence[Segment] = list(view.render_line(y))
        if text in "".join(segment.text for segment in segments):
            return any(s.style is not None and s.style.bold for s in segments if "def" in s.text)
    return None


async def test_the_diffs_first_screen_does_not_wait_for_its_lexers(
    review: tuple[ReviewBoard, ManualClock], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file type's first lexer look-up (Pygments' file patterns, 0.1 s of CPU) ran before the
    diff was handed to the screen: the first screen of a 23-line diff came after a 20,000-line
    one's. The lines show unmarked, then marked once the look-up is done."""
    board, clock = review
    monkeypatch.setattr(diff_view, "_LEXERS", {})  # as in a process that has looked none up
    release = threading.Event()
    real = diff_view.warm_lexers

    def slow_warm(paths: Sequence[str]) -> bool:
        release.wait(30)
        return real(paths)

    monkeypatch.setattr(drawer_module, "warm_lexers", slow_warm)
    app = app_on(board, clock, "review")
    async with app.run_test(size=(200, 50)) as pilot:
        await shows(pilot, app, "5 History")
        await pilot.press("3")
        try:
            await shows(pilot, app, "def discount")
            view = app.query_one(DiffView)
            assert marked(view, "def discount") is False  # drawn before the look-up ended
        finally:
            release.set()
        await until(pilot, lambda: marked(view, "def discount") is True)


async def test_a_cursor_move_within_the_view_redraws_only_the_two_lines(review) -> None:  # type: ignore[no-untyped-def]
    board, clock = review
    app = app_on(board, clock, "review")
    async with app.run_test(size=(200, 50)) as pilot:
        await shows(pilot, app, "5 History")
        await pilot.press("3")
        await shows(pilot, app, "def discount")
        await until(pilot, lambda: quiet(app))  # the worktree's read and its redraws are done
        view = app.query_one(DiffView)
        drawn: list[int] = []
        render_line = view.render_line

        def counted(y: int) -> Any:
            drawn.append(y)
            return render_line(y)

        view.render_line = counted  # type: ignore[method-assign]
        await pilot.press("j")
        await pilot.pause(0.3)
        assert view.cursor == 1
        assert sorted(set(drawn)) == [0, 1]  # not the whole screen
        assert "def discount" in screen_text(app)


async def test_opening_the_drawer_recomposes_the_footer_once(review) -> None:  # type: ignore[no-untyped-def]
    """Each `refresh_bindings` (the drawer's mount, its tab, its data, the focus) recomposed the
    footer, unmounting and mounting every key hint: five times an open, four of them for the
    hints already shown. The footer shows the drawer's keys, from one recompose."""
    board, clock = review
    app = app_on(board, clock, "review")
    async with app.run_test(size=(200, 50)) as pilot:
        await shows(pilot, app, "5 History")
        await pilot.press("escape")
        await until(pilot, lambda: not app.query(TaskDrawer))
        await until(pilot, lambda: quiet(app))
        footer = app.screen.query_one(HintFooter)
        recomposed: list[int] = []
        recompose = footer.recompose

        async def counted() -> None:
            recomposed.append(1)
            await recompose()

        footer.recompose = counted  # type: ignore[method-assign]
        await pilot.press("enter")
        await shows(pilot, app, "5 History")
        await until(pilot, lambda: quiet(app))
        await pilot.pause(0.3)
        close = registry.BY_ID["drawer.close"].name
        assert close in {key.action for key in footer.query(FooterKey)}  # the drawer's keys
        assert len(recomposed) == 1
