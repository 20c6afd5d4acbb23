"""Money spent is spent: a run the board closed (its task blocked by a spent budget, cancelled,
handed on, its lease gone) before its holder reported what it cost takes that report once, on
both backends: counted in the task's cost and tokens, its subtree and every ancestor, the
team's and the board's day; the run stays as it closed, its task where it is, and a second
report, another agent's or one under another epoch is refused and writes nothing."""

from pathlib import Path

import pytest

from boardlib import Board, BoardError, ManualClock, Reason
from boardlib import transitions as t
from boardlib.events import EventKind
from boardlib.narration import narrate
from boardlib.records import (
    BUDGET_BOARD_DAILY,
    BUDGET_TEAM_DAILY,
    EXECUTION_CANCELLED,
    EXECUTION_SUCCEEDED,
    Task,
)
from tests.cli.conftest import unchanged

SPEND_FIELDS = ("cost_usd", "tokens", "subtree_cost_micros", "subtree_tokens")


def daily_spent(board: Board, task_id: str) -> dict[str, float]:
    return {
        standing.scope + standing.unit: standing.spent
        for standing in board.budgets_of(task_id)
        if standing.scope in (BUDGET_BOARD_DAILY, BUDGET_TEAM_DAILY)
    }


def apart_from_spend(task: Task) -> dict[str, object]:
    return {
        name: value for name, value in task.to_json().items()
        if name not in ("costUsd", "tokens", "subtreeCostMicros", "subtreeTokens")
    }  # fmt: skip


def test_a_run_the_budget_block_cancelled_counts_its_late_cost_once(
    board: Board, board_path: Path, clock: ManualClock
) -> None:
    board.set_daily_budget(usd=100, tokens=10**9, reason="the board's day")
    board.set_daily_budget(team_id="web", usd=100, tokens=10**9, reason="web's day")
    root = board.create_task("root")
    task = board.create_task("pricey", parent_task_id=root.id, team_id="web", budget_usd=1)
    board.claim(task.id, "ada")
    first = board.open_execution(task.id, "sh", agent="ada").id
    second = board.open_execution(task.id, "sh", agent="ada").id
    board.close_execution(first, EXECUTION_SUCCEEDED, agent="ada", cost_usd=1.0, input_tokens=10)
    cancelled = board.get_execution(second)
    assert cancelled.status == EXECUTION_CANCELLED  # the block closed it
    blocked = board.get_task(task.id)
    assert blocked.status == t.BLOCKED
    clock.advance(minutes=5)
    seq = board.last_event_seq()

    late = board.close_execution(
        second, EXECUTION_SUCCEEDED, agent="ada", cost_usd=0.5, input_tokens=7, output_tokens=3,
        summary="ignored", error="ignored too",
    )  # fmt: skip

    assert (late.status, late.error, late.completed_at) == (
        EXECUTION_CANCELLED, cancelled.error, cancelled.completed_at,
    )  # fmt: skip
    assert (late.cost_usd, late.input_tokens, late.output_tokens, late.summary) == (
        0.5, 7, 3, None,
    )  # fmt: skip
    assert late.budget_exceeded is None  # nothing moved
    now = board.get_task(task.id)
    assert apart_from_spend(now) == apart_from_spend(blocked)  # still blocked, as it was
    assert (now.cost_usd, now.tokens) == (1.5, 20)
    assert (now.subtree_cost_micros, now.subtree_tokens) == (1_500_000, 20)
    parent = board.get_task(root.id)
    assert (parent.subtree_cost_micros, parent.subtree_tokens) == (1_500_000, 20)
    assert daily_spent(board, task.id) == {
        "team_dailyusd": 1.5, "team_dailytokens": 20,
        "board_dailyusd": 1.5, "board_dailytokens": 20,
    }  # fmt: skip
    [event] = board.events(since=seq)
    assert event.kind == EventKind.EXECUTION_COMPLETED
    assert (event.data["status"], event.data["costUsd"], event.data["late"]) == (
        EXECUTION_CANCELLED, 0.5, True,
    )  # fmt: skip
    assert narrate(event).endswith("(cancelled) reported its cost late ($0.50)")

    with unchanged(board_path), pytest.raises(BoardError) as again:  # once
        board.close_execution(second, EXECUTION_SUCCEEDED, agent="ada", cost_usd=0.5)
    assert again.value.reason is Reason.NOT_FOUND
    assert again.value.details["status"] == EXECUTION_CANCELLED


def test_a_cancelled_task_and_an_expired_lease_count_a_late_cost(
    board: Board, clock: ManualClock
) -> None:
    cancelled = board.create_task("called off", team_id="web")
    board.claim(cancelled.id, "ada")
    run = board.open_execution(cancelled.id, "sh", agent="ada").id
    board.cancel(cancelled.id, reason="not needed")
    board.close_execution(run, EXECUTION_SUCCEEDED, agent="ada", cost_usd=2.25, cache_read=4)
    row = board.get_task(cancelled.id)
    assert (row.status, row.cost_usd, row.tokens, row.subtree_cost_micros) == (
        t.CANCELLED, 2.25, 4, 2_250_000,
    )  # fmt: skip
    assert board.get_execution(run).status == EXECUTION_CANCELLED

    lapsed = board.create_task("lapsed")
    board.claim(lapsed.id, "bob")
    timed = board.open_execution(lapsed.id, "sh", agent="bob").id
    clock.advance(minutes=120)
    board.reconcile_stale_tasks()
    assert board.get_execution(timed).recovery_tombstone == 1
    board.close_execution(timed, "failed", agent="bob", cost_usd=0.75)
    assert board.get_task(lapsed.id).subtree_cost_micros == 750_000


def test_a_late_cost_is_refused_to_another_agent_an_old_epoch_and_an_empty_report(
    board: Board, board_path: Path
) -> None:
    task = board.create_task("handed on")
    claimed = board.claim(task.id, "ada")
    run = board.open_execution(task.id, "sh", agent="ada").id
    board.transfer(task.id, "ada", "bob")  # closes ada's run, cancelled
    for closer, epoch, reason in (
        ("bob", None, Reason.NOT_ASSIGNEE),
        ("ada", claimed.claim_epoch + 1, Reason.STALE_CLAIM),
    ):
        with unchanged(board_path), pytest.raises(BoardError) as refused:
            board.close_execution(run, EXECUTION_SUCCEEDED, agent=closer, epoch=epoch, cost_usd=1)
        assert refused.value.reason is reason, refused.value
    with unchanged(board_path), pytest.raises(BoardError) as empty:  # nothing to count
        board.close_execution(run, EXECUTION_SUCCEEDED, agent="ada", summary="done")
    assert empty.value.reason is Reason.NOT_FOUND
    late = board.close_execution(
        run, EXECUTION_SUCCEEDED, agent="ada", epoch=claimed.claim_epoch, cost_usd=1
    )
    assert late.cost_usd == 1.0
    held = board.get_task(task.id)
    assert (held.status, held.assignee_agent_id, held.cost_usd) == (t.IN_PROGRESS, "bob", 1.0)


def test_a_run_its_holder_closed_takes_no_second_cost(board: Board, board_path: Path) -> None:
    task = board.create_task("plain")
    board.claim(task.id, "ada")
    run = board.open_execution(task.id, "sh", agent="ada").id
    board.close_execution(run, EXECUTION_SUCCEEDED, agent="ada")  # reported nothing: its close
    with unchanged(board_path), pytest.raises(BoardError) as refused:
        board.close_execution(run, EXECUTION_SUCCEEDED, agent="ada", cost_usd=3)
    assert refused.value.reason is Reason.NOT_FOUND
