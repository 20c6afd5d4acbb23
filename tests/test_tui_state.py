"""The board screen's model without a terminal: the keyed diff, display order, filters, and the
reader's incremental feed (`Board.changes_since`) against a real board file."""

from pathlib import Path

from boardlib import Board, ManualClock
from boardlib import transitions as t
from tui.board_state import BoardState, TaskFilter
from tui.cards import EXPIRED, NO_LEASE, OK, SOON, lease_state, next_lease_change


def test_load_orders_by_priority_then_creation(board: Board) -> None:
    low = board.create_task("low")
    high = board.create_task("high", priority=5)
    mid = board.create_task("mid", priority=1)
    also_mid = board.create_task("also mid", priority=1)
    state = BoardState()
    state.load(board.all_tasks())
    assert state.columns[t.TODO] == [high.id, mid.id, also_mid.id, low.id]
    assert state.counts[t.TODO] == 4


def test_apply_repaints_in_place_or_shifts(board: Board) -> None:
    a = board.create_task("a")
    b = board.create_task("b")
    c = board.create_task("c")
    state = BoardState()
    state.load(board.all_tasks())
    # A field edit that keeps the slot: a repaint in place, nothing shifts.
    edited = board.update_task(b.id, title="b, renamed")
    applied = state.apply([edited])
    assert applied.changed == {b.id}
    assert applied.columns[t.TODO].rows == {b.id}
    assert applied.columns[t.TODO].shifted_from is None
    # A move: out of todo at row 0, into in_progress at row 0; the selection-follow data is there.
    moved = board.claim(a.id, "ada")
    applied = state.apply([moved])
    assert applied.moved == {a.id: (t.TODO, t.IN_PROGRESS)}
    assert applied.columns[t.TODO].shifted_from == 0
    assert applied.columns[t.IN_PROGRESS].shifted_from == 0
    assert state.columns[t.TODO] == [b.id, c.id]
    assert state.columns[t.IN_PROGRESS] == [a.id]
    assert state.index_of(c.id) == 1
    # An unchanged row is not a change.
    assert state.apply([board.get_task(c.id)]).empty


def test_priority_change_reorders(board: Board) -> None:
    a = board.create_task("a")
    b = board.create_task("b")
    state = BoardState()
    state.load(board.all_tasks())
    applied = state.apply([board.update_task(b.id, priority=3)])
    assert state.columns[t.TODO] == [b.id, a.id]
    assert applied.columns[t.TODO].shifted_from == 0


def test_filter_and_dropped(board: Board) -> None:
    a = board.create_task("Parse the plan", role="builder", team_id="core")
    b = board.create_task("Write docs", role="writer")
    c = board.create_task("Parse dates", role="builder")
    board.drop(c.id)
    state = BoardState()
    state.load(board.all_tasks())
    assert state.columns[t.TODO] == [a.id, b.id]
    state.filter = TaskFilter.parse("parse role:builder")
    state.refilter()
    assert state.columns[t.TODO] == [a.id]
    state.show_dropped = True
    state.refilter()
    assert state.columns[t.TODO] == [a.id, c.id]
    assert state.counts[t.TODO] == 2  # counts are live tasks, whatever is shown
    assert TaskFilter.parse("team:core @ada x").describe() == "x team:core assignee:ada"


def test_changes_since_follows_the_board(board: Board) -> None:
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
