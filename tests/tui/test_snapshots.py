"""Snapshot tests (pytest-textual-snapshot) of the board at 80x24 and at 160x48 on the fixed demo
board. Update them with `pytest tests/tui/test_snapshots.py --snapshot-update` after a deliberate
change of look, and look at the report before accepting."""

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from boardlib import transitions as t
from tests.tui.conftest import (
    ReviewTemplate,
    demo_app,
    demo_board,
    drawn,
    make_app,
    settled,
    until,
    utc,
)
from tui.app import KanbanApp


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    utc()
    return demo_app(tmp_path)


async def settle(pilot: Pilot[Any]) -> None:
    await settled(pilot)


def test_board_at_80x24(app, snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(app, terminal_size=(80, 24), run_before=settle)


def test_board_at_160x48(app, snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(app, terminal_size=(160, 48), run_before=settle)


# -- landing: the preview before approving, the confirmation, the landed card ---------------------


FIXED_FOLDER = Path("/tmp/kanban-tui-snapshot-review")  # the Overview shows the worktree's path


@pytest.fixture(scope="module")
def review_template(tmp_path_factory: pytest.TempPathFactory) -> ReviewTemplate:
    """Built in the fixed folder the first time, kept in this process's own temp folder."""
    from boardlib import ManualClock
    from tui.review_board import START_MS, build_review_board

    return ReviewTemplate(
        FIXED_FOLDER,
        lambda at: build_review_board(at, ManualClock(START_MS)),
        kept=tmp_path_factory.mktemp("snapshot-review") / "kept",
    )


@pytest.fixture
def review_app(review_template: ReviewTemplate, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """The review board (real worktrees; fixed git dates, so main's tip is the same every run)
    with its drawer open on the task in review, in a fixed folder (the Overview shows the
    worktree's path), held under a lock so two runs on one machine do not share it."""
    import fcntl
    import shutil

    from boardlib import ManualClock
    from tui.review_board import START_MS

    utc()
    with open(f"{FIXED_FOLDER}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        board = review_template.restore()
        monkeypatch.chdir(FIXED_FOLDER)
        monkeypatch.setenv("KANBAN_WORKTREES", str(board.worktrees))
        yield make_app(board.db, ManualClock(START_MS + 300_000), open_task=board.ids["review"])
        monkeypatch.chdir("/")
        shutil.rmtree(FIXED_FOLDER, ignore_errors=True)


async def preview_shown(pilot: Pilot[Any]) -> None:
    """The drawer focused, its Landing section showing the clean preview the review board's task
    has: not just any preview. A read that failed for a passing reason (git failing, the task's
    lock held past the read's wait, both likelier under load) is on screen too until the next
    poll reads again, and a screenshot of it is not the frame this test keeps."""
    from boardlib.worktrees.landing import CLEAN
    from tui.components.landing_line import LandingLine

    await until(pilot, lambda: pilot.app.drawers(), timeout=30)  # type: ignore[attr-defined]
    drawer = pilot.app.drawers()[0]  # type: ignore[attr-defined]
    await until(pilot, lambda: drawer.data is not None and drawer.query(LandingLine), timeout=30)
    line = drawer.query_one(LandingLine)

    def clean() -> bool:
        shown = line.shown
        return shown is not None and shown.preview is not None and shown.preview.state == CLEAN

    def laid_out() -> bool:
        """The preview's last line is on screen: the compositor draws the layout as it is, and
        a frame taken between the line's new content and its new height showed the preview
        without its key hint, the rest of the Overview one line higher (seen once in CI)."""
        strips = pilot.app.screen._compositor.render_strips()
        text = "\n".join("".join(segment.text for segment in strip) for strip in strips)
        return "(verified on the merged tree first)" in text

    await settled(pilot, lambda: clean() and pilot.app.focused is drawer and laid_out())


@pytest.mark.slow  # builds a repository with worktrees
def test_landing_preview_in_the_overview_at_80x24(review_app, snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(review_app, terminal_size=(80, 24), run_before=preview_shown)


@pytest.mark.slow
def test_approve_and_land_confirmation_at_80x24(review_app, snap_compare) -> None:  # type: ignore[no-untyped-def]
    from boardlib.worktrees.landing import CLEAN
    from tui.components.land_dialog import LandDialog

    async def asked(pilot: Pilot[Any]) -> None:
        await preview_shown(pilot)
        await pilot.press("W")

        def shown() -> bool:
            """The question with its own preview read clean (not one failed for a passing
            reason, as the drawer's may), laid out with it (its body fitted after a refresh)."""
            dialog = pilot.app.screen
            if not isinstance(dialog, LandDialog) or dialog.shown is None:
                return False
            preview = dialog.shown.preview
            return preview is not None and preview.state == CLEAN and drawn(dialog)

        await settled(pilot, shown)

    assert snap_compare(review_app, terminal_size=(80, 24), run_before=asked)


@pytest.mark.slow
def test_landed_card_and_drawer_at_160x48(tmp_path, monkeypatch, snap_compare) -> None:  # type: ignore[no-untyped-def]
    """A done task whose landing the board recorded (the library's own record, no git: the commit
    is fixed): its card and its drawer say where it landed."""
    from boardlib import Board
    from boardlib.landings import LandQueue

    monkeypatch.chdir(tmp_path)
    utc()
    path, clock, ids = demo_board(tmp_path)
    with Board(path, clock=clock) as board:
        LandQueue(board).record_landed(
            ids["schema"], commit="4b825dc642cb6eb9a060e54bf8d69288fbee4904", into="main",
            strategy="squash", actor="operator:ada", approve=False,
        )  # fmt: skip
    app = make_app(path, clock, open_task=ids["schema"])

    async def unfolded(pilot: Pilot[Any]) -> None:
        """`--open`'s promise kept: the drawer read, drawn and focused (the footer shows its
        keys), and the task selected on the board, its folded column opened for it and in view,
        with its card loaded (the page comes from the reader thread) and its column in view:
        the board's sideways scroll to it once stopped short, before the new column widths
        were laid out, and left it behind the drawer. No `z`: pressed after the selection it
        raced the board's folding in CI now and then (the done column folded)."""
        app = pilot.app
        assert isinstance(app, KanbanApp)
        board = app.board_screen.board
        done = board.columns[t.DONE]

        def shown() -> bool:
            drawers = app.drawers()
            selected = board.selected_task
            return (
                bool(drawers) and drawers[0].data is not None and app.focused is drawers[0]
                and selected is not None and selected.id == ids["schema"]
                and not done.collapsed and ids["schema"] in done.ids
                and board.region.x <= done.region.x
                and 0 < done.region.right <= drawers[0].region.x
            )  # fmt: skip

        await settled(pilot, shown)

    assert snap_compare(app, terminal_size=(160, 48), run_before=unfolded)


@pytest.mark.slow
def test_drawer_resized_to_80x24_with_a_diff_search(review_app, snap_compare) -> None:  # type: ignore[no-untyped-def]
    """The drawer beside the board at 160x48, on its Diff tab with "total" searched and the
    second match current, then the terminal narrowed to 80x24: the drawer full screen keeps the
    tab, the search (the header's `match 2/N`, the matches highlighted) and the diff's place. A
    regression in what a resize carries over (tests/tui/test_drawer_resize.py) shows here as a
    picture."""
    from tui.components.drawer_screen import DrawerScreen

    async def resized(pilot: Pilot[Any]) -> None:
        await preview_shown(pilot)
        app = pilot.app
        assert isinstance(app, KanbanApp)
        beside = app.drawers()[0]
        await pilot.press("3")
        await until(pilot, lambda: beside.workspace is not None and len(beside.diff.rows) > 20)
        await pilot.press("slash", *"total", "enter")
        await until(pilot, lambda: beside.searches.get("diff") == "total")
        await pilot.press("n")
        await until(pilot, lambda: beside.diff.match_index == 1)
        await pilot.resize_terminal(80, 24)

        def narrowed() -> bool:
            """Laid out full screen, and nothing of what it carried asked for: what it lost
            must show in the picture, not as a wait that never ends."""
            if not isinstance(app.screen, DrawerScreen):
                return False
            drawers = [d for d in app.drawers() if d.screen is app.screen and d.is_mounted]
            return (
                len(drawers) == 1 and not drawers[0].beside and drawers[0].drawn.is_set()
                and app.focused is drawers[0] and drawn(app.screen)
            )  # fmt: skip

        await settled(pilot, narrowed)

    assert snap_compare(review_app, terminal_size=(160, 48), run_before=resized)


async def message_log_open(pilot: Pilot[Any]) -> None:
    """Three things said (a refusal among them), their toasts gone, then `M`."""
    await settle(pilot)
    app = pilot.app
    app.notify("TASK-14 → in progress (you) · f follows it", timeout=0.01)
    app.notify(
        "Approve: only for tasks in review (TASK-14 is todo).", severity="warning", timeout=0.01
    )
    app.notify(
        "task is held by agent-ada",
        title="cancel TASK-7: refused (conflict)",
        severity="error",
        timeout=0.01,
    )
    # Bounded waits only: the toasts gone (not a fixed pause a loaded worker can outrun), then
    # the log screen; the whole run is capped so a wedge fails the test instead of the worker.
    from textual.widgets._toast import Toast

    async def steps() -> None:
        await settled(pilot, lambda: not app.query(Toast))
        await pilot.press("M")
        await settled(
            pilot, lambda: type(app.screen).__name__ == "MessageLogScreen" and drawn(app.screen)
        )

    await asyncio.wait_for(steps(), timeout=90)


@pytest.mark.slow
@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
def test_message_log(app, snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(app, terminal_size=size, run_before=message_log_open)


async def settle_inbox(pilot: Pilot[Any]) -> None:
    await settled(pilot, lambda: pilot.app.inbox_items)  # type: ignore[attr-defined]
    await pilot.press("i")
    await settled(pilot, lambda: type(pilot.app.screen).__name__ == "InboxScreen")


def test_inbox_at_80x24(app, snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(app, terminal_size=(80, 24), run_before=settle_inbox)


def test_inbox_at_160x48(app, snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(app, terminal_size=(160, 48), run_before=settle_inbox)


def test_work_beside_empty_columns_at_80x24(tmp_path: Path, monkeypatch, snap_compare) -> None:  # type: ignore[no-untyped-def]
    """60 todo cards, one review, one blocked, nothing else: empty columns are strips and the
    window starts at todo, so review and blocked are on screen at 80x24."""
    from boardlib import Board, ManualClock
    from tui.screenshots import START_MS, sparse_board

    monkeypatch.chdir(tmp_path)
    utc()
    clock = ManualClock(START_MS)
    sparse_board(tmp_path / "board.db", clock)
    app = make_app(tmp_path / "board.db", clock)
    assert Board  # the board is built through the library, as the screenshots do
    assert snap_compare(app, terminal_size=(80, 24), run_before=settle)


@pytest.mark.slow  # a review board built, the drawer photographed seven times
def test_the_drawer_screenshots_show_only_the_fixed_scene_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`python -m tui.screenshots` built the drawer's board in a temp folder, whose random name
    (and the worktrees' hash of it) the drawer shows: every regeneration differed in that alone.
    Every path in the photographs is now under the one fixed scene folder."""
    import os
    import re

    from tui import screenshots

    utc()
    monkeypatch.setenv("KANBAN_SETTINGS", os.devnull)
    monkeypatch.delenv("KANBAN_WORKTREES", raising=False)  # the build sets it: put back after
    monkeypatch.chdir(tmp_path)
    saved = asyncio.run(screenshots._shoot_drawer(tmp_path))
    shown = {
        path: re.findall(r"/tmp/[^<&\s\"]+", file.read_text())
        for file in saved
        for path in [file.name]
    }
    assert any(shown.values()), "the drawer showed no path at all"
    fixed = str(screenshots.SCENE_FOLDER)
    assert {
        name: paths for name, paths in shown.items() if any(not p.startswith(fixed) for p in paths)
    } == {}
