"""The board screen's model without a terminal: the keyed diff, display order, filters, and the
reader's incremental feed (`Board.live_view`) against a real board, on both backends."""

from pathlib import Path

from boardlib import Board, ManualClock
from boardlib import transitions as t
from tui.board_state import Applied, BoardState, TaskFilter
from tui.cards import EXPIRED, NO_LEASE, OK, SOON, lease_state, next_lease_change


def loaded(board: Board, state: BoardState | None = None) -> BoardState:
    """A state after its full read."""
    state = state or BoardState()
    state.load(board.live_view(state.search, page_size=state.page_size))
    return state


def follow(state: BoardState, board: Board, *, rematch: bool = False) -> Applied:
    """What the reader does every poll: the changes since the state's cursor."""
    return state.apply(
        board.live_view(
            state.search,
            since=state.cursor,
            rematch=rematch,
            anchors=state.anchors(),
            page_size=state.page_size,
        )
    )


def test_load_orders_by_priority_then_creation(board: Board) -> None:
    low = board.create_task("low")
    high = board.create_task("high", priority=5)
    mid = board.create_task("mid", priority=1)
    also_mid = board.create_task("also mid", priority=1)
    state = loaded(board)
    assert state.columns[t.TODO] == [high.id, mid.id, also_mid.id, low.id]
    assert state.counts[t.TODO] == 4


def test_apply_repaints_in_place_or_shifts(board: Board) -> None:
    a = board.create_task("a")
    b = board.create_task("b")
    c = board.create_task("c")
    state = loaded(board)
    # A field edit that keeps the slot: a repaint in place, nothing shifts.
    board.update_task(b.id, title="b, renamed")
    applied = follow(state, board)
    assert applied.changed == {b.id}
    assert applied.columns[t.TODO].rows == {b.id}
    assert applied.columns[t.TODO].shifted_from is None
    # A move: out of todo at row 0, into in_progress at row 0; the selection-follow data is there.
    board.claim(a.id, "ada")
    applied = follow(state, board)
    assert applied.moved == {a.id: (t.TODO, t.IN_PROGRESS)}
    assert applied.columns[t.TODO].shifted_from == 0
    assert applied.columns[t.IN_PROGRESS].shifted_from == 0
    assert state.columns[t.TODO] == [b.id, c.id]
    assert state.columns[t.IN_PROGRESS] == [a.id]
    assert state.index_of(c.id) == 1
    # Nothing new since: not a change.
    assert follow(state, board).empty


def test_priority_change_reorders(board: Board) -> None:
    a = board.create_task("a")
    b = board.create_task("b")
    state = loaded(board)
    board.update_task(b.id, priority=3)
    applied = follow(state, board)
    assert state.columns[t.TODO] == [b.id, a.id]
    assert applied.columns[t.TODO].shifted_from == 0


def test_filter_and_dropped(board: Board) -> None:
    a = board.create_task("Parse the plan", role="builder", team_id="core")
    b = board.create_task("Write docs", role="writer")
    c = board.create_task("Parse dates", role="builder")
    board.drop(c.id)
    state = loaded(board)
    assert state.columns[t.TODO] == [a.id, b.id]
    state.filter = TaskFilter.parse("parse role:builder")
    follow(state, board, rematch=True)
    assert state.columns[t.TODO] == [a.id]
    state.show_dropped = True
    follow(state, board, rematch=True)
    assert state.columns[t.TODO] == [a.id, c.id]
    # Counts are the tasks in scope (dropped ones while shown), whatever the filter matches:
    # the header's "shown" can never exceed its total, and a column agrees with the header.
    assert state.counts[t.TODO] == 3
    assert state.shown <= state.total == 3
    assert TaskFilter.parse("team:core @ada x").describe() == "x team:core assignee:ada"
    # A changed row is matched by the store too: renamed out of the filter, it leaves.
    board.update_task(a.id, title="Write the plan")
    follow(state, board)
    assert state.columns[t.TODO] == [c.id]


def test_counts_agree_with_dropped_tasks_shown(board: Board) -> None:
    """The issue saw `71/70 shown` in the header and `todo · 60` on the column."""
    live = [board.create_task(f"live {i}") for i in range(3)]
    for task in [board.create_task(f"gone {i}") for i in range(2)]:
        board.drop(task.id)
    state = loaded(board)
    assert (state.shown, state.total, state.counts[t.TODO]) == (3, 3, 3)
    state.show_dropped = True
    follow(state, board, rematch=True)
    assert (state.shown, state.total, state.counts[t.TODO]) == (5, 5, 5)
    # Incremental updates keep the same rule: a dropped task restored, a live one dropped.
    board.drop(live[0].id)
    follow(state, board)
    assert (state.shown, state.total, state.counts[t.TODO]) == (5, 5, 5)
    state.show_dropped = False
    follow(state, board, rematch=True)
    assert (state.shown, state.total, state.counts[t.TODO]) == (2, 2, 2)


def test_done_and_cancelled_are_newest_first(board: Board, clock: ManualClock) -> None:
    """Finished work is history: the latest at the top, whatever its priority."""
    tasks = [board.create_task(f"t{i}", priority=p) for i, p in enumerate((5, 0, 3))]
    for task in tasks:
        clock.advance(seconds=10)
        board.claim(task.id, "ada")
        board.move(task.id, t.DONE)
    cancelled = [board.create_task(f"c{i}", priority=p) for i, p in enumerate((9, 1))]
    for task in cancelled:
        clock.advance(seconds=10)
        board.cancel(task.id)
    state = loaded(board)
    assert state.columns[t.DONE] == [tasks[2].id, tasks[1].id, tasks[0].id]
    assert state.columns[t.CANCELLED] == [cancelled[1].id, cancelled[0].id]
    # One more finishes: it arrives on top (an insertion at row 0), counted by the store.
    late = board.create_task("late", priority=-5)
    clock.advance(seconds=10)
    board.claim(late.id, "ada")
    board.move(late.id, t.DONE)
    applied = follow(state, board)
    assert state.columns[t.DONE][0] == late.id
    assert applied.columns[t.DONE].shifted_from == 0
    assert (state.counts[t.DONE], state.row_count(t.DONE)) == (4, 4)
    # A priority edit on a finished task does not move it.
    board.update_task(tasks[0].id, priority=50)
    applied = follow(state, board)
    assert state.columns[t.DONE][-1] == tasks[0].id
    assert applied.columns[t.DONE].shifted_from is None


def test_filter_problems_are_named() -> None:
    parsed = TaskFilter.parse("status:dnoe foo:bar CLI: http")
    assert parsed.status == "dnoe"
    assert any("dnoe" in problem for problem in parsed.problems)
    assert any(problem.startswith("foo:") for problem in parsed.problems)
    assert "foo:bar" in parsed.text and "cli:" in parsed.text
    assert len(parsed.problems) == 2
    assert TaskFilter.parse("status:in-progress role:x").problems == ()
    assert TaskFilter.parse("status:in-progress").status == t.IN_PROGRESS


def test_changes_since_follows_the_board(board: Board) -> None:  # the feed other views use
    blocker = board.create_task("blocker")
    waiting = board.create_task("waiting", depends_on=[blocker.id])
    tasks, cursor = board.snapshot()
    assert {task.id for task in tasks} == {blocker.id, waiting.id}
    assert board.changes_since(cursor) == ([], [], cursor)
    board.claim(blocker.id, "ada")
    board.complete(blocker.id, "ada")
    board.approve(blocker.id, "grace")
    events, changed, new_cursor = board.changes_since(cursor)
    assert new_cursor > cursor
    assert [event.kind for event in events][-1] == "status_changed"
    rows = {task.id: task for task in changed}
    # The dependent's unmet count changed without an event of its own: it is still reported.
    assert rows[waiting.id].unmet_deps == 0
    assert rows[blocker.id].status == t.DONE


def test_lease_states_change_only_at_computed_moments(tmp_path: Path) -> None:
    clock = ManualClock(1_800_000_000_000)
    with Board(tmp_path / "b.db", clock=clock) as board:
        task = board.claim(board.create_task("x").id, "ada", lease_ms=8 * 60_000)
        assert lease_state(task, clock.now_ms()) == OK
        warn_at = next_lease_change(task, clock.now_ms())
        assert warn_at == task.lease_until - 2 * 60_000  # the last quarter, capped at 2 minutes
        assert lease_state(task, warn_at) == SOON
        expires_at = task.lease_until + 1  # live through its last millisecond, as the board says
        assert next_lease_change(task, warn_at) == expires_at
        assert lease_state(task, task.lease_until) == SOON
        assert lease_state(task, expires_at) == EXPIRED
        assert next_lease_change(task, expires_at) is None
        assert lease_state(board.create_task("y"), clock.now_ms()) == NO_LEASE
