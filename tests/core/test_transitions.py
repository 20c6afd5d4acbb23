"""The transition table (seed 000) and its enforcement by the board, pair by pair."""

import itertools

import pytest

from boardlib import Board, BoardError, Reason
from boardlib import transitions as t
from tests.conftest import row, task_in

EXPECTED = {
    "backlog": {"todo", "blocked", "cancelled"},
    "todo": {"in_progress", "blocked", "backlog", "cancelled"},
    "in_progress": {"in_review", "done", "blocked", "todo", "cancelled"},
    "in_review": {"done", "in_progress", "blocked", "cancelled"},
    "blocked": {"todo", "in_progress", "backlog", "cancelled"},
    "done": set(),
    "cancelled": set(),
}
PAIRS = list(itertools.product(t.STATUSES, t.STATUSES))


def test_seven_statuses_in_column_order() -> None:
    assert t.STATUSES == (
        "backlog", "todo", "in_progress", "in_review", "blocked", "done", "cancelled",
    )  # fmt: skip


def test_table_matches_the_seed() -> None:
    assert {status: set(targets) for status, targets in t.LEGAL_MOVES.items()} == EXPECTED


@pytest.mark.parametrize(("current", "target"), PAIRS)
def test_can_transition_agrees_with_legal_targets(current: str, target: str) -> None:
    listed = target in t.legal_targets(current)
    if current == target:
        assert t.can_transition(current, target) and not listed
    else:
        assert t.can_transition(current, target) == listed == (target in EXPECTED[current])


def test_terminal_statuses_have_no_targets_and_lists_have_no_duplicates() -> None:
    for status in t.STATUSES:
        targets = t.legal_targets(status)
        assert len(targets) == len(set(targets))
        assert (status in t.TERMINAL) == (targets == ())
        assert list(targets) == [s for s in t.STATUSES if s in targets]  # column order


def test_unknown_status_is_never_legal() -> None:
    assert not t.can_transition("archived", "todo")
    assert not t.can_transition("todo", "archived")
    assert t.legal_targets("archived") == ()


def test_neighbour_target_skips_illegal_columns() -> None:
    assert t.neighbour_target("todo", +1) == "in_progress"
    assert t.neighbour_target("todo", -1) == "backlog"
    assert t.neighbour_target("backlog", +1) == "todo"
    assert t.neighbour_target("backlog", -1) is None
    assert t.neighbour_target("in_review", -1) == "in_progress"
    assert t.neighbour_target("blocked", +1) == "cancelled"  # done is not legal from blocked
    assert t.neighbour_target("done", +1) is None


@pytest.mark.parametrize(("current", "target"), PAIRS)
def test_board_enforces_every_pair(shared_board: Board, current: str, target: str) -> None:
    """Each pair on a fresh task of one board per backend (`shared_board`)."""
    board = shared_board
    task = task_in(board, current)
    before = row(board, task.id)
    reason = "operator says so" if target == t.BLOCKED else None
    if current == target:
        assert board.move(task.id, target, reason=reason) == before  # idempotent no-op
        assert row(board, task.id) == before
    elif target in EXPECTED[current]:
        moved = board.move(task.id, target, reason=reason)
        assert moved.status == target
        assert row(board, task.id).status == target
    else:
        with pytest.raises(BoardError) as refused:
            board.move(task.id, target, reason=reason)
        assert refused.value.reason is Reason.ILLEGAL_TRANSITION
        assert refused.value.details["current"] == current
        assert refused.value.details["requested"] == target
        assert row(board, task.id) == before


def test_release_to_todo_clears_owner_lease_and_verdict(board: Board) -> None:
    task = task_in(board, t.IN_PROGRESS)
    board.record_verification(
        task.id, '{"status": "fail", "attempts": [], "debtNotes": [], "updatedAt": 1}'
    )
    released = board.move(task.id, t.TODO)
    assert released.assignee_agent_id is None
    assert released.assignee_runtime is None
    assert released.lease_until is None
    assert released.verification is None
    assert released.claimed_by == "builder"  # the first claimer is kept for the review rule


def test_move_to_blocked_needs_a_reason_and_records_it(board: Board) -> None:
    task = task_in(board, t.TODO)
    with pytest.raises(BoardError) as refused:
        board.move(task.id, t.BLOCKED)
    assert refused.value.reason is Reason.INVALID_INPUT
    assert row(board, task.id).status == t.TODO
    blocked = board.move(task.id, t.BLOCKED, reason="needs the schema")
    assert blocked.blocked_reason == "needs the schema"
    assert board.move(task.id, t.TODO).blocked_reason is None


def test_operator_moving_unowned_task_to_in_progress_takes_it_with_a_lease(
    board: Board,
) -> None:
    task = task_in(board, t.IN_REVIEW)
    taken = board.move(task.id, t.IN_PROGRESS, actor="operator:ops")
    assert taken.assignee_agent_id == "operator:ops"
    assert taken.lease_until == board.now() + board.config.lease_ms
    assert taken.claim_epoch == task.claim_epoch + 1
    assert "operator:ops" in taken.holders


def test_back_to_backlog_releases_the_owner_too(board: Board) -> None:
    task = task_in(board, t.BLOCKED)  # blocked keeps its owner, without a lease
    assert task.assignee_agent_id == "builder"
    parked = board.move(task.id, t.BACKLOG)
    assert (parked.assignee_agent_id, parked.lease_until, parked.holders) == (None, None, [])
