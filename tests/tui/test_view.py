"""The view stays where the operator put it (issue 10): new work at the top of a column is seen,
arrivals above a scrolled column are counted, the cursor stays in its column when its task leaves
(with a note and a key to follow), the board scrolls sideways by whole columns and says what is
off screen, folded columns are reachable and fold only on request, the first paint is final, the
counts agree, and a filter brings its first match into view."""

import fcntl
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import time
from pathlib import Path
from typing import Any

import pytest

from boardlib import Board, ManualClock, PlanItem
from boardlib import transitions as t
from tests.tui.conftest import Notes, loaded, make_app, settled, until, utc
from tui.app import KanbanApp
from tui.cards import CARD_HEIGHT
from tui.components.board_view import BoardView
from tui.components.header_bar import HeaderBar


@pytest.fixture
def long_todo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, ManualClock]:
    """64 todo tasks (the issue's column), a few elsewhere."""
    monkeypatch.chdir(tmp_path)
    utc()
    clock = ManualClock(1_767_261_600_000)
    path = tmp_path / "board.db"
    with Board(path, clock=clock) as board:
        board.create_plan([PlanItem(str(i), f"Todo task {i}", priority=i % 5) for i in range(64)])
        for i in range(3):
            task = board.create_task(f"Review me {i}")
            board.claim(task.id, "agent-ada")
            board.complete(task.id, "agent-ada")
    return path, clock


def board_view(app: KanbanApp) -> BoardView:
    return app.board_screen.board


def header(app: KanbanApp) -> Any:
    return app.board_screen.query_one(HeaderBar).facts


def dispatch(path: Path, clock: ManualClock, title: str, priority: int) -> str:
    with Board(path, clock=clock) as agent:
        return agent.create_task(title, priority=priority).id


@pytest.mark.slow
async def test_a_column_at_its_top_shows_new_top_work(long_todo) -> None:  # type: ignore[no-untyped-def]
    path, clock = long_todo
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        todo = board_view(app).columns[t.TODO]
        selected = app.selected_task().id  # type: ignore[union-attr]
        assert todo.scroll_offset.y == 0 and todo.cursor == 0
        urgent = dispatch(path, clock, "Urgent: production is down", 99)
        await until(pilot, lambda: urgent in app.state.tasks)
        await pilot.pause(0.1)
        assert todo.scroll_offset.y == 0  # still at the top: the urgent card is in view
        assert app.state.columns[t.TODO][0] == urgent
        assert app.selected_task().id == selected  # type: ignore[union-attr]
        assert "new" not in str(todo.border_title)


async def test_a_scrolled_column_counts_what_arrived_above(long_todo) -> None:  # type: ignore[no-untyped-def]
    path, clock = long_todo
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        todo = board_view(app).columns[t.TODO]
        await pilot.press("G")
        await pilot.pause(0.1)
        scrolled = todo.scroll_offset.y
        selected = app.selected_task().id  # type: ignore[union-attr]
        on_screen = todo.cursor * CARD_HEIGHT - scrolled
        assert scrolled > 0
        for n in range(2):
            dispatch(path, clock, f"Urgent {n}", 99)
        await until(pilot, lambda: len(todo.new_above) == 2)
        assert "↑2 new" in str(todo.border_title)
        # What the operator looks at did not move.
        assert app.selected_task().id == selected  # type: ignore[union-attr]
        assert todo.cursor * CARD_HEIGHT - todo.scroll_offset.y == on_screen
        await pilot.press("g")  # back to the top: seen
        await pilot.pause(0.1)
        assert not todo.new_above and "new" not in str(todo.border_title)


async def test_the_cursor_stays_when_its_task_leaves(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, ids = demo
    notes = Notes()
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48), message_hook=notes) as pilot:
        await loaded(pilot)
        target = ids["flaky"]  # the top of todo
        app.jump_to(target)
        below = app.state.columns[t.TODO][1]
        x_before = board_view(app).scroll_offset.x
        with Board(path, clock=clock) as agent:
            agent.claim(target, "agent-zed")
        await until(pilot, lambda: app.state.tasks[target].status == t.IN_PROGRESS)
        await pilot.pause(0.1)
        assert board_view(app).active_status == t.TODO
        assert app.selected_task().id == below  # type: ignore[union-attr]
        assert board_view(app).scroll_offset.x == x_before
        said = [note for note in notes.infos() if target in note]
        assert said and "in progress" in said[-1] and "agent-zed" in said[-1]
        assert "f follows" in said[-1]
        await pilot.press("f")
        assert app.selected_task().id == target  # type: ignore[union-attr]


@pytest.mark.slow  # a long scripted session of the app (over 10 s under load)
async def test_sideways_scrolling_shows_whole_columns_and_counts_the_rest(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, _ids = demo
    app = make_app(path, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        view = board_view(app)
        for key in ["l"] * 6 + ["h"] * 6 + ["z"] + ["l"] * 6:
            await pilot.press(key)
            await pilot.pause(0.05)
            left, right = view.region.x, view.region.right
            shown = hidden_left = hidden_right = 0
            for column in view.columns.values():
                region = column.region
                if region.width == 0 or region.right <= left or region.x >= right:
                    if column.virtual_region.x < view.scroll_offset.x:
                        hidden_left += 1
                    else:
                        hidden_right += 1
                    continue
                assert left <= region.x and region.right <= right, (key, column.status)
                shown += 1
            assert shown >= 3
            facts = header(app)
            hidden = (len(facts.hidden_left), len(facts.hidden_right))
            assert hidden == (hidden_left, hidden_right), key
            assert view.active.region.width != 0


@pytest.mark.slow
async def test_l_reaches_folded_columns_and_folding_is_asked(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, ids = demo
    app = make_app(path, clock)
    async with app.run_test(size=(120, 32)) as pilot:
        await loaded(pilot)
        view = board_view(app)
        assert view.columns[t.DONE].collapsed and view.columns[t.CANCELLED].collapsed
        for _ in range(6):
            await pilot.press("l")
        assert view.active_status == t.CANCELLED
        assert view.columns[t.CANCELLED].collapsed  # reached, still folded
        assert app.selected_task() is None  # a folded column's cards are not on screen
        assert app.screen.check_action("cancel", ()) is None
        await pilot.press("z")
        assert not view.columns[t.CANCELLED].collapsed
        assert app.selected_task().status == t.CANCELLED  # type: ignore[union-attr]
        await pilot.press("z")
        # An agent finishing work does not unfold done either.
        with Board(path, clock=clock) as agent:
            agent.approve(ids["cli"], "agent-grace")
        await until(pilot, lambda: app.state.tasks[ids["cli"]].status == t.DONE)
        await pilot.pause(0.1)
        assert view.columns[t.DONE].collapsed


def column_edges(row: str) -> list[int]:
    return [i for i, char in enumerate(row) if char == "╮"]


@pytest.mark.slow
@pytest.mark.parametrize("size", [(80, 24), (160, 48), (200, 50)])
def test_the_first_paint_is_the_final_layout(demo, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    """In a real pseudo-terminal: every time the columns' title row is written during start-up,
    the columns have the same widths (before, the first frame used the stylesheet's widths and
    was laid out again a moment later)."""
    path, _clock, _ids = demo
    width, height = size
    pid, fd = pty.fork()
    if pid == 0:  # the child: the app, at this size
        fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", height, width, 0, 0))
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        env["TERM"] = "xterm-256color"
        os.execve(sys.executable, [sys.executable, "-m", "tui", "--db", str(path)], env)
    output = b""
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and b"TASK-" not in output:
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                output += os.read(fd, 1 << 16)
        settle = time.monotonic() + 1.0  # the start-up frames that follow
        while time.monotonic() < settle:
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                output += os.read(fd, 1 << 16)
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)
    text = output.decode("utf-8", "replace")
    rows = [
        re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", match.group(1))
        for match in re.finditer(r"\x1b\[2;1H(.*?)(?=\x1b\[\d+;\d+H|$)", text, re.S)
    ]
    full = [row for row in rows if row.count("╮") >= 3]  # whole title rows, not single cards
    assert full, text[-2000:]
    assert {tuple(column_edges(row)) for row in full} == {tuple(column_edges(full[-1]))}


@pytest.mark.slow
async def test_counts_agree_with_dropped_tasks_shown(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, _ids = demo
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        await pilot.press("full_stop")
        await pilot.pause(0.1)
        facts = header(app)
        assert facts.shown == facts.total == sum(app.state.counts.values())
        for status, column in board_view(app).columns.items():
            assert str(app.state.counts[status]) in str(column.border_title)
        await pilot.press("slash", *"parse", "enter")
        facts = header(app)
        assert facts.shown < facts.total


async def test_columns_changed_behind_the_drawer_are_laid_out_when_it_closes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 80x24, with the drawer open over the board, a claim and two new tasks made the board
    scroll sideways; closed, the view stayed at the left edge, the last column running off screen,
    while the header named backlog as off screen to the left."""
    monkeypatch.chdir(tmp_path)
    utc()
    clock = ManualClock(1_767_261_600_000)
    path = tmp_path / "board.db"
    with Board(path, clock=clock) as board:
        one = board.create_task("one")
    app = make_app(path, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        view = board_view(app)
        await pilot.press("enter")
        await until(pilot, lambda: app.board_screen is not app.screen)
        with Board(path, clock=clock) as agent:
            agent.claim(one.id, "bob")
            agent.create_task("two")
            agent.create_task("three")
        await until(pilot, lambda: app.state.counts[t.TODO] == 2)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.board_screen)
        await until(pilot, lambda: int(view.scroll_offset.x) > 0)
        hidden = header(app).hidden_left
        starts = [sum(view._widths[:i]) for i in range(len(view._widths))]
        shown_from = int(view.scroll_offset.x)
        statuses = zip(view.columns, starts, strict=True)
        assert hidden == tuple(status for status, x in statuses if x < shown_from)
        assert view.region.right <= 80


async def test_a_strip_counts_the_matches_while_a_filter_narrows(long_todo) -> None:  # type: ignore[no-untyped-def]
    """With a filter on, the narrow strips still counted every task of their status ("1" over an
    in-progress strip none of whose tasks matched)."""
    path, clock = long_todo
    app = make_app(path, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        review = board_view(app).columns[t.IN_REVIEW]
        assert not review.strip and app.state.counts[t.IN_REVIEW] == 3
        await pilot.press("slash", *"todo task 7", "enter")  # no task in review matches
        await until(pilot, lambda: review.strip)
        assert review.render_line(0).text.strip() == "0"


@pytest.mark.slow  # a long scripted session of the app (over 10 s under load)
async def test_a_filter_brings_its_first_match_into_view(long_todo) -> None:  # type: ignore[no-untyped-def]
    path, clock = long_todo
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        view = board_view(app)
        todo = view.columns[t.TODO]
        await pilot.press("G")
        await pilot.pause(0.1)
        assert todo.scroll_offset.y > 0
        await pilot.press("slash", *"task 1", "enter")  # Todo task 1, 10..19
        await pilot.pause(0.1)
        assert todo.scroll_offset.y == 0
        assert app.selected_task().id == app.state.columns[t.TODO][0]  # type: ignore[union-attr]
        await pilot.press("escape")
        await pilot.press("slash", *"review me", "enter")  # nothing in todo matches
        await pilot.pause(0.1)
        assert view.active_status == t.IN_REVIEW
        assert app.selected_task().title.startswith("Review me")  # type: ignore[union-attr]


async def test_moving_off_an_empty_strip_leaves_no_room_a_column_would_fill(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 80x24, h onto backlog's empty strip at the far left, then l: the view kept the strip and
    stopped short, 20 cells blank, blocked (which needs you) off screen. Among the edges that show
    the active column, the one showing most is taken."""
    monkeypatch.chdir(tmp_path)
    utc()
    clock = ManualClock(1_767_261_600_000)
    path = tmp_path / "board.db"
    with Board(path, clock=clock) as board:
        board.create_plan([PlanItem(str(i), f"Todo task {i}") for i in range(37)])
        running = board.create_task("running")
        board.claim(running.id, "agent-ada")
        stuck = board.create_task("stuck")
        board.claim(stuck.id, "agent-bob")
        board.block(stuck.id, "agent-bob", "needs a key")
    app = make_app(path, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        view = board_view(app)
        await until(pilot, lambda: t.BLOCKED not in header(app).hidden_right)  # the first view
        await pilot.press("h")
        await until(pilot, lambda: view.active_status == t.BACKLOG)
        assert t.BLOCKED in header(app).hidden_right  # no room for it beside the strip
        for status in (t.TODO, t.IN_PROGRESS):
            await pilot.press("l")
            await until(pilot, lambda status=status: view.active_status == status)  # type: ignore[misc]
            await until(pilot, lambda: t.BLOCKED not in header(app).hidden_right)
            await until(pilot, lambda: view.region.width == 80)  # no blank room at the right


def rightmost_shown(view: BoardView) -> int:
    """Where the rightmost column wholly on screen ends (0 when none is)."""
    left, right = view.region.x, view.region.right
    return max(
        (
            c.region.right
            for c in view.columns.values()
            if c.region.width and left <= c.region.x and c.region.right <= right
        ),
        default=0,
    )


@pytest.mark.parametrize(
    ("size", "running", "keys"),
    [
        ((80, 24), 4, ()),  # the demo's start: todo and in progress open, three strips
        ((80, 24), 4, ("l", "l", "l")),  # the window moved right, onto the strips
        ((80, 24), 0, ("slash", *"no such task", "enter")),  # every column a strip or folded
        ((160, 48), 4, ()),
        ((160, 48), 0, ("slash", *"no such task", "enter")),
    ],
)
async def test_the_columns_fill_the_width(  # type: ignore[no-untyped-def]
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size, running, keys
) -> None:
    """At 80x24, the columns on screen ended 15 cells short of the right edge, the next column
    (done, folded) not fitting in what was left, and the view as wide as the whole columns it
    showed."""
    monkeypatch.chdir(tmp_path)
    utc()
    clock = ManualClock(1_767_261_600_000)
    path = tmp_path / "board.db"
    with Board(path, clock=clock) as board:
        board.create_plan([PlanItem(str(i), f"Todo task {i}") for i in range(32)])
        for i in range(running):
            task = board.create_task(f"running {i}")
            board.claim(task.id, f"agent-{i}")
    app = make_app(path, clock)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot)
        view = board_view(app)
        await pilot.press(*keys)
        await pilot.pause(0.1)
        await until(pilot, lambda: rightmost_shown(view) == size[0])


async def test_a_column_not_looked_at_keeps_its_cursor_on_its_newest_card(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 80x24, the cursor was on TASK-1, the first task done, at the far end of 36, the view
    scrolled down to it. Done's first card had been selected when it arrived and the selection
    stayed on it as every later one arrived above. A column the operator is not in, at its top with
    the cursor on its first card, keeps the cursor there."""
    monkeypatch.chdir(tmp_path)
    utc()
    clock = ManualClock(1_767_261_600_000)
    path = tmp_path / "board.db"

    def finish(board: Board, title: str) -> str:
        task = board.create_task(title)
        board.claim(task.id, "agent-ada")
        board.complete(task.id, "agent-ada")
        board.approve(task.id, "agent-bob")
        clock.advance(seconds=1)
        return task.id

    with Board(path, clock=clock) as board:
        board.create_task("still to do")
        first = finish(board, "first done")
    app = make_app(path, clock)
    async with app.run_test(size=(200, 50)) as pilot:  # wide enough: done is not folded
        await loaded(pilot)
        view = board_view(app)
        done = view.columns[t.DONE]
        assert view.active_status == t.TODO and done.selected_id == first
        with Board(path, clock=clock) as agent:
            last = [finish(agent, f"done {i}") for i in range(12)][-1]
        await until(pilot, lambda: app.state.counts[t.DONE] == 13)
        await pilot.pause(0.1)
        for _ in range(4):
            await pilot.press("l")
        await until(pilot, lambda: view.active_status == t.DONE)
        assert app.selected_task().id == last  # type: ignore[union-attr]
        assert done.scroll_offset.y == 0


async def test_a_folded_column_says_a_count_its_title_cannot_hold(tmp_path: Path) -> None:
    """In tmux on a 100,000-task board: the folded cancelled column, 17 cells wide, read
    `cancelled …`: its 15,000 (and any count of two digits) went unseen. The count goes in the
    column's body then; a title that holds it (`done 4`) stays as it was."""
    from tests.tui.test_drawer import screen_text

    clock, path = ManualClock(1_800_000_000_000), tmp_path / "board.db"
    with Board(path, clock=clock) as board:
        for n in range(12):
            board.cancel(board.create_task(f"dropped idea {n}").id)
        for n in range(4):
            task = board.create_task(f"shipped {n}")
            board.claim(task.id, "ada")
            board.move(task.id, t.DONE)
        board.create_task("still to do")
    app = make_app(path, clock)
    async with app.run_test(size=(120, 30)) as pilot:
        await loaded(pilot)
        view = app.board_screen.board
        assert view.columns[t.CANCELLED].collapsed and view.columns[t.DONE].collapsed
        await until(pilot, lambda: "12" in screen_text(app))
        lines = screen_text(app).splitlines()
        assert "─ cancelled ─" in lines[1] and "─ done 4 ─" in lines[1], lines[1]
        assert "…" not in lines[1], lines[1]
        body = [line[view.columns[t.CANCELLED].region.x :] for line in lines[2:5]]
        assert [line.strip(" │") for line in body] == ["12", "folded", "z opens"], body
        with Board(path, clock=clock) as board:  # one more: the body says it
            board.cancel(board.create_task("one more").id)
        await until(pilot, lambda: "13" in screen_text(app))


async def test_a_folded_column_counts_a_filters_matches(tmp_path: Path) -> None:
    """In tmux on a 100,000-task board, `/task 4242` said `31/100000 shown` in the header while
    the screen showed two cards: the 29 matches in the folded done and cancelled columns were
    not counted anywhere. A folded column says its matches at its foot, as an open one does."""
    from tests.tui.test_drawer import screen_text

    clock, path = ManualClock(1_800_000_000_000), tmp_path / "board.db"
    with Board(path, clock=clock) as board:
        for n in range(5):
            task = board.create_task(f"ledger {n}" if n < 3 else f"shipped {n}")
            board.claim(task.id, "ada")
            board.move(task.id, t.DONE)
        board.create_task("ledger to do")
    app = make_app(path, clock)
    async with app.run_test(size=(120, 30)) as pilot:
        await loaded(pilot)
        done = app.board_screen.board.columns[t.DONE]
        assert done.collapsed
        app.set_filter("ledger")
        await until(pilot, lambda: app.state.row_count(t.DONE) == 3)
        await until(pilot, lambda: "3 shown" in screen_text(app).splitlines()[-2])
        foot = screen_text(app).splitlines()[-2][done.region.x : done.region.right]
        assert "3 shown" in foot, foot
        app.set_filter("")
        await until(pilot, lambda: "shown" not in screen_text(app).splitlines()[-2])


def todo_review_and_blocked(path: Path, clock: ManualClock) -> list[str]:
    """5 todo, 1 in progress, 2 in review, 1 blocked; backlog, done and cancelled empty. The ids
    of the four tasks past todo, in that order."""
    with Board(path, clock=clock) as board:
        for n in range(5):
            board.create_task(f"todo {n}")
        ids = [board.create_task(f"busy {n}").id for n in range(4)]
        board.claim(ids[0], "ada")
        for task_id in ids[1:3]:
            board.claim(task_id, "ada")
            board.complete(task_id, "ada")
        board.claim(ids[3], "bob")
        board.block(ids[3], "bob", "needs a key")
    return ids


async def first_view(path: Path, clock: ManualClock) -> tuple[Any, list[tuple[str, ...]]]:
    """Where the settled board starts at 80x24 (the cursor's column, the scroll, the columns
    wholly on screen, the header's left side), and every left side `ColumnsHidden` said."""
    lefts: list[tuple[str, ...]] = []

    def hook(message: object) -> None:
        if isinstance(message, BoardView.ColumnsHidden):
            lefts.append(message.left)

    app = make_app(path, clock)
    async with app.run_test(size=(80, 24), message_hook=hook) as pilot:
        await settled(pilot, lambda: len(app.inbox_items) == 3)
        view = board_view(app)
        shown = tuple(
            status
            for status, column in view.columns.items()
            if column.region.width
            and view.region.x <= column.region.x
            and column.region.right <= view.region.right
        )
        x = int(view.scroll_offset.x)
        return (view.active_status, x, shown, header(app).hidden_left), lefts


@pytest.mark.parametrize("start_ups", [1, pytest.param(16, marks=pytest.mark.slow)])
async def test_the_first_view_at_80x24_is_the_same_every_time(
    tmp_path: Path, start_ups: int
) -> None:
    """At 80x24 the first view had started at backlog's empty strip in about 3 start-ups of 4
    and at todo (the strip off screen, `◀ empty` in the header) in the others: the start scrolled
    the strip away after a refresh while the board's own snap, also after a refresh, put it back
    (the order was the race), and the header said `◀ empty` for a moment even when the strip
    stayed. Now: the cursor on todo, the view from the far left (the strip and the three columns
    with work fill the 80 cells), and no other view said on the way."""
    views = set()
    for run in range(start_ups):
        clock = ManualClock(1_767_261_600_000)
        path = tmp_path / f"board-{run}.db"
        todo_review_and_blocked(path, clock)
        view, lefts = await first_view(path, clock)
        assert not any(lefts), lefts  # never `◀ empty`, not for a frame
        views.add(view)
    assert views == {(t.TODO, 0, (t.BACKLOG, t.TODO, t.IN_PROGRESS, t.IN_REVIEW), ())}, views
