"""The capped create path and the execution ledger."""

import pytest

from boardlib import Board, BoardConfig, BoardError, ManualClock, Reason
from boardlib import transitions as t
from tests.conftest import row, task_in


def test_depth_ceiling_counts_the_parents_ancestors(board: Board) -> None:
    root = board.create_task("root", capped=True)
    child = board.create_task("child", parent_task_id=root.id, capped=True)
    grandchild = board.create_task("grandchild", parent_task_id=child.id, capped=True)
    with pytest.raises(BoardError) as refused:
        board.create_task("too deep", parent_task_id=grandchild.id, capped=True)
    assert refused.value.reason is Reason.CAP_EXCEEDED
    assert refused.value.details["cap"] == "depth"
    # the uncapped path (a supervised operator) is not limited
    assert board.create_task("operator", parent_task_id=grandchild.id).parent_task_id


def test_live_children_ceiling(board_path: object, clock: ManualClock) -> None:
    config = BoardConfig(max_live_children=3)
    with Board(board_path, clock=clock, config=config) as board:  # type: ignore[arg-type]
        parent = board.create_task("parent")
        kids = [
            board.create_task(f"kid {i}", parent_task_id=parent.id, capped=True) for i in range(3)
        ]
        with pytest.raises(BoardError) as refused:
            board.create_task("one too many", parent_task_id=parent.id, capped=True)
        assert refused.value.details["cap"] == "children"
        board.cancel(kids[0].id)  # a finished child frees a place
        assert board.create_task("now fits", parent_task_id=parent.id, capped=True)
        assert len(board.list_tasks()) == 5


def test_root_create_rate_rolls(board_path: object, clock: ManualClock) -> None:
    config = BoardConfig(root_create_limit=2, root_create_window_ms=60_000)
    with Board(board_path, clock=clock, config=config) as board:  # type: ignore[arg-type]
        board.create_task("one", actor="planner")
        clock.advance(seconds=30)
        board.create_task("two", actor="planner")
        with pytest.raises(BoardError) as refused:
            board.create_task("three", actor="planner")
        assert refused.value.details["cap"] == "root_rate"
        clock.advance(seconds=31)  # "one" left the window
        assert board.create_task("three", actor="planner").title == "three"


def test_execution_opens_only_after_a_claim_by_its_holder(board: Board) -> None:
    task = board.create_task("job")
    with pytest.raises(BoardError) as refused:
        board.open_execution(task.id, "claude-code")
    assert refused.value.reason is Reason.INVALID_STATE
    claimed = board.claim(task.id, "alice")
    with pytest.raises(BoardError) as other:
        board.open_execution(task.id, "claude-code", agent="bob")
    assert other.value.reason is Reason.NOT_ASSIGNEE
    with pytest.raises(BoardError) as stale:
        board.open_execution(task.id, "claude-code", agent="alice", epoch=claimed.claim_epoch + 7)
    assert stale.value.reason is Reason.STALE_CLAIM
    assert board.executions(task.id) == []
    run = board.open_execution(task.id, "claude-code", agent="alice", epoch=claimed.claim_epoch)
    assert (run.status, run.agent_id, run.claim_epoch) == ("running", "alice", claimed.claim_epoch)


def test_close_once_and_cost_is_the_sum(board: Board) -> None:
    task = board.create_task("job")
    board.claim(task.id, "alice")
    first = board.open_execution(task.id, "claude-code")
    second = board.open_execution(task.id, "claude-code")
    board.close_execution(
        first.id, "failed", agent="alice", error="oom", cost_usd=0.25, input_tokens=1000
    )
    closed = board.close_execution(
        second.id,
        "succeeded",
        agent="alice",
        cost_usd=0.5,
        input_tokens=10,
        output_tokens=20,
        summary="ok",
    )
    assert (closed.status, closed.output_tokens, closed.summary) == ("succeeded", 20, "ok")
    assert row(board, task.id).cost_usd == pytest.approx(0.75)
    with pytest.raises(BoardError) as again:
        board.close_execution(second.id, "failed", agent="alice")
    assert again.value.reason is Reason.NOT_FOUND
    assert board.get_execution(second.id).status == "succeeded"  # immutable once closed


@pytest.mark.parametrize(
    ("status", "kwargs"),
    [
        ("running", {}),
        ("succeeded", {"cost_usd": -1}),
        ("succeeded", {"input_tokens": -3}),
        ("succeeded", {"output_tokens": 1.5}),
        ("succeeded", {"summary": "x" * 20_001}),
        # past the ledger's 64-bit micro-dollars and token sums (found by the CLI fuzz: an
        # OverflowError, exit 1), and what no comparison with 0 refuses
        ("succeeded", {"cost_usd": 9_223_372_036_855.0}),
        ("succeeded", {"cost_usd": float("inf")}),
        ("succeeded", {"cost_usd": float("nan")}),
        ("succeeded", {"cost_usd": 1e9 + 1}),
        ("succeeded", {"input_tokens": 2**62, "output_tokens": 2**62}),
        ({}, {}),  # a status that cannot be hashed
    ],
)
def test_bad_close_is_refused_and_changes_nothing(
    board: Board, status: object, kwargs: dict[str, object]
) -> None:
    task = board.create_task("job")
    board.claim(task.id, "alice")
    run = board.open_execution(task.id, "claude-code")
    with pytest.raises(BoardError) as refused:
        board.close_execution(run.id, status, agent="alice", **kwargs)  # type: ignore[arg-type]
    assert refused.value.reason is Reason.INVALID_INPUT
    assert board.get_execution(run.id) == run
    assert board.get_task(task.id).cost_usd == 0 and len(board.events(task_id=task.id)) == 3


def test_release_cancels_the_abandoned_run(board: Board) -> None:
    task = task_in(board, t.IN_PROGRESS)
    run = board.open_execution(task.id, "script")
    board.release(task.id, "builder")
    assert board.get_execution(run.id).status == "cancelled"
