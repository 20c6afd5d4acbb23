"""Finished columns a page at a time (`boardlib.columns`, `tui.board_state`), on both backends:
scrolling reaches the oldest task, a task that finishes meanwhile is shown once, a filter and a
search find a task finished two years ago, and the store's order is the view's."""

from pathlib import Path

import pytest

from boardlib import Board, ManualClock, PlanItem
from boardlib import transitions as t
from boardlib.columns import PageRequest, TaskSearch, sort_key
from tui.board_state import WINDOW_PAGES, BoardState, TaskFilter

from .conftest import Notes, make_app, until
from .conftest import loaded as app_loaded
from .test_drawer import screen_text
from .test_state import follow, loaded
from .test_trust import palette_results

PAGE = 10
YEAR_MS = 365 * 86_400_000


def finish(board: Board, clock: ManualClock, count: int, *, title: str = "work") -> list[str]:
    """`count` tasks done one after another, a minute apart; their ids, oldest first."""
    created = board.create_plan([PlanItem(key=str(i), title=f"{title} {i}") for i in range(count)])
    ids = [created[str(i)].id for i in range(count)]
    for task_id in ids:
        clock.advance(minutes=1)
        board.claim(task_id, "ada")
        board.move(task_id, t.DONE)
    return ids


def page_in(state: BoardState, board: Board, status: str, row: int) -> str:
    """The task on `row`, its page read the way the reader reads it when the row is drawn."""
    request = state.want(status, row)
    if request is not None:
        state.apply(
            board.live_view(
                state.search, since=state.cursor, pages=[request], anchors=state.anchors()
            )
        )
    task_id = state.id_at(status, row)
    assert task_id is not None, (row, request)
    return task_id


def store_order(board: Board, status: str) -> list[str]:
    """The whole column, as the store orders it (one big page)."""
    return [task.id for task in board.live_view(page_size=10_000).pages[FINISHED_AT[status]].tasks]


FINISHED_AT = {t.DONE: 0, t.CANCELLED: 1}


def held_finished(state: BoardState) -> int:
    return sum(1 for task in state.tasks.values() if task.status in t.TERMINAL)


def test_scrolling_to_the_end_of_done_shows_the_oldest_task(
    board: Board, clock: ManualClock
) -> None:
    done = finish(board, clock, 75)
    board.create_task("still to do")
    state = loaded(board, BoardState(page_size=PAGE))
    assert (state.row_count(t.DONE), state.counts[t.DONE]) == (75, 75)
    assert len(state.columns[t.DONE]) == PAGE  # the newest page, and the count
    assert state.id_at(t.DONE, 0) == done[-1]
    seen = [page_in(state, board, t.DONE, row) for row in range(75)]
    assert seen == done[::-1] == store_order(board, t.DONE)
    assert seen[-1] == done[0]  # the end of done is the oldest task
    # The window stays a few pages around where it is looked at, not the whole history.
    assert len(state.columns[t.DONE]) <= WINDOW_PAGES * PAGE
    assert held_finished(state) <= WINDOW_PAGES * PAGE
    # And back up to the top, page by page before the window.
    assert [page_in(state, board, t.DONE, row) for row in range(74, -1, -1)] == done
    # A jump to the last row (`G`, a scrollbar dragged down) reads the page there at once.
    jumped = loaded(board, BoardState(page_size=PAGE))
    assert page_in(jumped, board, t.DONE, 74) == done[0]
    assert jumped.starts[t.DONE] > 0 and len(jumped.columns[t.DONE]) <= PAGE


def test_a_task_that_finishes_while_scrolling_appears_once(
    board: Board, clock: ManualClock
) -> None:
    done = finish(board, clock, 60)
    working = [board.claim(board.create_task(f"live {i}").id, "bob").id for i in range(6)]
    state = loaded(board, BoardState(page_size=PAGE))
    # Walk down the column by task (as the view keeps its place on a task, not a row), while
    # tasks finish above: each is on top when it arrives, and the walk never meets a task twice.
    walked = [page_in(state, board, t.DONE, 0)]
    finished_meanwhile = []
    while True:
        if len(walked) % 9 == 0 and working:
            clock.advance(minutes=1)
            board.move(working[0], t.DONE)
            finished_meanwhile.append(working.pop(0))
            follow(state, board)
            assert state.counts[t.DONE] == len(done) + len(finished_meanwhile)
        row = state.row_of(walked[-1])
        assert row is not None
        if row + 1 >= state.row_count(t.DONE):
            break
        walked.append(page_in(state, board, t.DONE, row + 1))
    assert len(walked) == len(set(walked)) == len(done)  # each once, none missed
    assert walked == done[::-1]
    assert finished_meanwhile  # the walk went deep enough for tasks to finish above it
    # Back at the top, every task is there once, the ones that finished meanwhile first.
    rows = state.row_count(t.DONE)
    column = [page_in(state, board, t.DONE, row) for row in range(rows - 1, -1, -1)][::-1]
    assert column == finished_meanwhile[::-1] + done[::-1] == store_order(board, t.DONE)
    assert state.starts[t.DONE] == 0


def test_filter_and_search_find_a_two_year_old_done_task(board: Board, clock: ManualClock) -> None:
    old = finish(board, clock, 1, title="Migrate the ledger to acme-7")[0]
    for _ in range(4):
        clock.advance(ms=YEAR_MS // 2)
        finish(board, clock, 12)
    board.create_task("Rename acme-7 in the docs")  # unfinished: found too
    state = loaded(board, BoardState(page_size=PAGE))
    assert old not in state.tasks  # two years down the done column: not read at start
    # The filter is answered by the store: the done column shows exactly the old task.
    state.filter = TaskFilter.parse("ACME-7 ledger")
    follow(state, board, rematch=True)
    assert state.columns[t.DONE] == [old]
    assert (state.row_count(t.DONE), state.counts[t.DONE]) == (1, 49)
    state.filter = TaskFilter.parse("acme-7")
    follow(state, board, rematch=True)
    assert state.columns[t.DONE] == [old] and len(state.columns[t.TODO]) == 1
    # A search (the palette's) finds it among every column.
    found = board.find_tasks(TaskSearch(words=("ledger", "acme")))
    assert [task.id for task in found] == [old]
    # Jumping to it without a filter reads the page that holds it: the last row of done.
    fresh = loaded(board, BoardState(page_size=PAGE))
    applied = fresh.apply(
        board.live_view(
            fresh.search,
            since=fresh.cursor,
            pages=[PageRequest(None, around=old)],
        )
    )
    assert [task.id for task in applied.targets] == [old]
    assert fresh.row_of(old) == fresh.row_count(t.DONE) - 1 == 48


def test_the_store_orders_finished_work_as_the_view_does(board: Board, clock: ManualClock) -> None:
    """Ties on the finishing moment (a batch closed in one millisecond) go by seq, on both."""
    first = finish(board, clock, 3)
    batch = [board.create_task(f"batch {i}").id for i in range(4)]
    for task_id in batch:  # cancelled in the same millisecond
        board.cancel(task_id)
    for task_id in [board.create_task(f"same ms {i}").id for i in range(3)]:
        board.claim(task_id, "ada")
        board.move(task_id, t.DONE)
    for status in (t.DONE, t.CANCELLED):
        tasks = [task for task in board.all_tasks() if task.status == status]
        seq = {task.id: int(task.id.rsplit("-", 1)[1]) for task in tasks}  # ids follow seqs
        expected = [task.id for task in sorted(tasks, key=lambda x: sort_key(x, seq[x.id]))]
        assert store_order(board, status) == expected
    assert store_order(board, t.DONE)[-3:] == first[::-1]


async def test_the_app_pages_in_the_end_of_done(board_path: Path, clock: ManualClock) -> None:
    """`G` on a done column longer than a page: the oldest task's card, read when needed."""
    with Board(board_path, clock=clock) as board:
        done = finish(board, clock, 130)
        board.create_task("to do")
    app = make_app(board_path, clock)
    async with app.run_test(size=(200, 50)) as pilot:
        await app_loaded(pilot)
        view = app.board_screen.board
        assert len(app.state.columns[t.DONE]) == 100 and app.state.row_count(t.DONE) == 130
        view.focus_column(t.DONE)
        await pilot.press("G")
        await until(pilot, lambda: view.active.selected_id == done[0], timeout=10)
        await until(pilot, lambda: done[0] in screen_text(app))
        assert len(app.state.columns[t.DONE]) <= WINDOW_PAGES * 100


@pytest.mark.slow
async def test_the_app_finds_and_selects_a_task_two_years_down(
    board_path: Path, clock: ManualClock
) -> None:
    """The palette's jump (or a drawer's link) to a task far down done reads the page that holds
    it and selects it; the filter line finds it too; an id of no task is said so."""
    with Board(board_path, clock=clock) as board:
        old = finish(board, clock, 1, title="Zebra ledger migration")[0]
        clock.advance(ms=2 * YEAR_MS)
        finish(board, clock, 150)
        board.create_task("to do")
    app, notes = make_app(board_path, clock), Notes()
    async with app.run_test(size=(200, 50), message_hook=notes) as pilot:
        await app_loaded(pilot)
        view = app.board_screen.board
        assert old not in app.state.tasks
        app.jump_to(old)
        await until(pilot, lambda: view.active.selected_id == old, timeout=10)
        assert view.active_status == t.DONE and app.state.row_of(old) == 150
        await until(pilot, lambda: "Zebra ledger" in screen_text(app))
        view.home()
        await until(pilot, lambda: app.state.starts[t.DONE] == 0, timeout=10)
        app.set_filter("zebra")
        await until(pilot, lambda: app.state.columns[t.DONE] == [old], timeout=10)
        assert app.state.row_count(t.DONE) == 1 and app.state.counts[t.DONE] == 151
        app.set_filter("")
        await until(pilot, lambda: app.state.row_count(t.DONE) == 151, timeout=10)
        app.jump_to("TASK-9999")
        await until(pilot, lambda: notes.warnings() == [": TASK-9999 is not on this board."])
        # The palette's task jump asks the store too: found by words, chosen, selected.
        view.home()
        await until(pilot, lambda: old not in app.state.tasks, timeout=10)
        shown = await palette_results(pilot, "zebra ledger")
        assert shown[0].startswith(f"{old} "), shown
        await pilot.press("enter")
        await until(pilot, lambda: view.active.selected_id == old, timeout=10)


def test_a_page_read_while_paused_takes_its_tasks_out_of_the_live_columns(
    board: Board, clock: ManualClock
) -> None:
    """A paused view still scrolls: the page comes without the changes (`changes=False`). A task
    that finished meanwhile is in that page; it leaves its unfinished column there and then
    (it showed in both, and stayed in todo once its move came), and the changes, once applied,
    leave it where it is."""
    finish(board, clock, 25)
    started = board.claim(board.create_task("started, then finished while paused").id, "bob").id
    waiting = board.create_task("finished while paused").id
    state = loaded(board, BoardState(page_size=PAGE))
    for task_id in (started, waiting):
        clock.advance(minutes=1)
        if task_id == waiting:
            board.claim(task_id, "ada")
        board.move(task_id, t.DONE)
    request = PageRequest(t.DONE, offset=0, limit=PAGE)
    applied = state.apply(
        board.live_view(
            state.search, since=state.cursor, pages=[request], anchors=state.anchors(),
            changes=False,
        )
    )  # fmt: skip
    assert state.columns[t.DONE][:2] == [waiting, started]
    assert state.columns[t.TODO] == state.columns[t.IN_PROGRESS] == []
    assert (state.counts[t.TODO], state.counts[t.IN_PROGRESS]) == (0, 0)
    assert applied.moved == {started: (t.IN_PROGRESS, t.DONE), waiting: (t.TODO, t.DONE)}
    follow(state, board)
    assert state.columns[t.DONE][:2] == [waiting, started]
    assert state.columns[t.TODO] == state.columns[t.IN_PROGRESS] == []
    assert state.counts == {**dict.fromkeys(t.STATUSES, 0), t.DONE: 27}


async def test_a_task_done_in_another_year_says_its_year(
    board_path: Path, clock: ManualClock
) -> None:
    """Found in tmux on a 100,000-task board: the oldest done task, two years old, read
    `✓12-06 08:13` on its card on 12-06, as if it was done that morning."""
    import time

    with Board(board_path, clock=clock) as board:
        old = finish(board, clock, 1, title="Zebra ledger migration")[0]
        done_at = board.get_task(old).completed_at
        assert done_at is not None
        clock.advance(ms=2 * YEAR_MS + 86_400_000)  # another year, on any day of it
        board.create_task("to do")
    app = make_app(board_path, clock)
    async with app.run_test(size=(120, 30)) as pilot:
        await app_loaded(pilot)
        await pilot.press("z")
        await until(pilot, lambda: "Zebra ledger" in screen_text(app))
        year = time.strftime("%Y-%m-%d", time.localtime(done_at / 1000))
        [card] = [line for line in screen_text(app).splitlines() if "✓" in line]
        assert f"✓{year}" in card, card


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_open_on_a_task_far_down_done_keeps_its_drawer_open(
    board_path: Path, clock: ManualClock, size: tuple[int, int]
) -> None:
    """In tmux on a 100,000-task board, `kanban tui --open TASK-1` (the oldest done task) showed
    its drawer for a moment and closed it: the page that holds the task came, and selecting it
    there went through the palette's jump, which closes the drawer first."""
    from tui.components.drawer_screen import DrawerScreen

    with Board(board_path, clock=clock) as board:
        old = finish(board, clock, 1, title="Zebra ledger migration")[0]
        clock.advance(ms=YEAR_MS // 12)
        finish(board, clock, 150)
        board.create_task("to do")
    app = make_app(board_path, clock, open_task=old)
    async with app.run_test(size=size) as pilot:
        view = app.board_screen.board
        await until(pilot, lambda: view.active.selected_id == old, timeout=10)
        await until(pilot, lambda: app.drawer_task_id() == old)
        await pilot.pause(0.3)
        assert app.drawer_task_id() == old
        if size[0] < 140:
            assert isinstance(app.screen, DrawerScreen)
        assert "Zebra ledger" in screen_text(app)
