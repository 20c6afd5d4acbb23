"""The atomic claim and claim-next: guards, ordering, roles, readiness."""

import json
import sqlite3
from pathlib import Path

import pytest

from boardlib import Board, BoardError, ManualClock, Reason
from boardlib import transitions as t
from tests.conftest import row, task_in


def test_claim_takes_a_todo_task_with_a_lease_and_epoch(board: Board) -> None:
    task = board.create_task("parse")
    claimed = board.claim(task.id, "alice", runtime="claude-code")
    assert claimed.status == t.IN_PROGRESS
    assert claimed.assignee_agent_id == "alice"
    assert claimed.assignee_runtime == "claude-code"
    assert claimed.claimed_by == "alice"
    assert claimed.holders == ["alice"]
    assert claimed.claim_epoch == 1
    assert claimed.attempts == 1
    assert claimed.lease_until == board.now() + board.config.lease_ms


def test_the_loser_gets_conflict_and_the_row_is_untouched(board: Board) -> None:
    task = board.create_task("parse")
    board.claim(task.id, "alice")
    before = row(board, task.id)
    with pytest.raises(BoardError) as lost:
        board.claim(task.id, "bob")
    assert lost.value.reason is Reason.CONFLICT
    assert lost.value.details == {"id": task.id, "current": "in_progress", "assignee": "alice"}
    assert row(board, task.id) == before


def test_unknown_id_is_not_found_not_conflict(board: Board) -> None:
    with pytest.raises(BoardError) as missing:
        board.claim("TASK-999", "alice")
    assert missing.value.reason is Reason.NOT_FOUND


@pytest.mark.parametrize("status", [t.BACKLOG, t.IN_REVIEW, t.BLOCKED, t.DONE, t.CANCELLED])
def test_only_todo_is_claimable(board: Board, status: str) -> None:
    task = task_in(board, status)
    before = row(board, task.id)
    with pytest.raises(BoardError) as refused:
        board.claim(task.id, "carol")
    assert refused.value.reason is Reason.CONFLICT
    assert row(board, task.id) == before


def test_dropped_task_is_not_claimable(board: Board) -> None:
    task = board.create_task("hidden")
    board.drop(task.id)
    with pytest.raises(BoardError) as refused:
        board.claim(task.id, "alice")
    assert refused.value.reason is Reason.CONFLICT
    assert board.claim_next("alice") is None
    board.restore(task.id)
    assert board.claim(task.id, "alice").status == t.IN_PROGRESS


def test_claim_by_id_refuses_unmet_dependencies(board: Board) -> None:
    first = board.create_task("first")
    second = board.create_task("second", depends_on=[first.id])
    with pytest.raises(BoardError) as refused:
        board.claim(second.id, "alice")
    assert refused.value.reason is Reason.UNMET_DEPENDENCIES
    assert refused.value.details["unmet"] == [first.id]
    assert row(board, second.id).status == t.TODO


def test_claim_next_ranks_by_priority_then_most_recent_change(
    board: Board, clock: ManualClock
) -> None:
    low = board.create_task("low", priority=1)
    clock.advance(ms=5)
    old_high = board.create_task("old high", priority=5)
    clock.advance(ms=5)
    new_high = board.create_task("new high", priority=5)
    assert [task.id for task in board.ready_tasks()] == [new_high.id, old_high.id, low.id]
    assert board.claim_next("a").id == new_high.id  # type: ignore[union-attr]
    assert board.claim_next("b").id == old_high.id  # type: ignore[union-attr]
    assert board.claim_next("c").id == low.id  # type: ignore[union-attr]
    assert board.claim_next("d") is None


def test_a_heartbeat_does_not_reorder_but_an_edit_does(board: Board, clock: ManualClock) -> None:
    older = board.create_task("older")
    clock.advance(ms=10)
    newer = board.create_task("newer")
    clock.advance(ms=10)
    held = board.create_task("held", priority=9)
    board.claim(held.id, "alice")
    clock.advance(ms=10)
    beat = board.heartbeat(held.id, "alice")
    assert beat.updated_at == row(board, held.id).updated_at < clock.now_ms()
    assert [task.id for task in board.ready_tasks()] == [newer.id, older.id]
    board.update_task(older.id, title="older, retitled")
    assert [task.id for task in board.ready_tasks()] == [older.id, newer.id]


def test_claim_next_skips_tasks_waiting_on_dependencies(board: Board) -> None:
    blocker = board.create_task("blocker", priority=0)
    board.create_task("waits", priority=10, depends_on=[blocker.id])
    assert board.claim_next("alice").id == blocker.id  # type: ignore[union-attr]
    assert board.claim_next("bob") is None


def test_respect_deps_false_takes_the_blocked_one_too(board: Board) -> None:
    blocker = board.create_task("blocker", priority=0)
    waits = board.create_task("waits", priority=10, depends_on=[blocker.id])
    assert board.claim_next("alice", respect_deps=False).id == waits.id  # type: ignore[union-attr]


def test_roles_match_exactly_and_roleless_tasks_suit_everyone(board: Board) -> None:
    review = board.create_task("review it", role="reviewer", priority=3)
    build = board.create_task("build it", role="worker", priority=2)
    anyone = board.create_task("anyone", priority=1)
    assert board.claim_next("w1", role="worker").id == build.id  # type: ignore[union-attr]
    assert board.claim_next("w2", role="worker").id == anyone.id  # type: ignore[union-attr]
    assert board.claim_next("w3", role="worker") is None
    assert board.claim_next("r1", role="reviewer").id == review.id  # type: ignore[union-attr]


def test_roleless_agent_takes_any_role(board: Board) -> None:
    review = board.create_task("review it", role="reviewer")
    assert board.claim_next("generalist").id == review.id  # type: ignore[union-attr]


def test_completing_a_blocker_makes_its_dependent_ready(board: Board) -> None:
    a = board.create_task("a")
    b = board.create_task("b")
    c = board.create_task("c", depends_on=[a.id, b.id])
    assert row(board, c.id).unmet_deps == 2
    for blocker in (a, b):
        board.claim(blocker.id, "builder")
        board.complete(blocker.id, "builder")
        board.approve(blocker.id, "judge")
    assert row(board, c.id).unmet_deps == 0
    assert [task.id for task in board.ready_tasks()] == [c.id]
    assert board.claim_next("alice").id == c.id  # type: ignore[union-attr]


def test_explain_names_what_blocks_a_claim(board: Board, clock: ManualClock) -> None:
    blocker = board.create_task("blocker")
    board.claim(blocker.id, "alice")
    waits = board.create_task("waits", depends_on=[blocker.id], role="reviewer")
    why = board.explain(waits.id, role="worker")
    assert not why.claimable
    assert [dep.id for dep in why.unmet_dependencies] == [blocker.id]
    assert any("in_progress, held by alice" in reason for reason in why.reasons)
    assert any("role reviewer" in reason for reason in why.reasons)
    held = board.explain(blocker.id)
    assert not held.claimable and held.lease_holder == "alice"
    clock.advance(ms=board.config.lease_ms + 1)
    assert board.explain(blocker.id).claimable  # the lease lapsed: the next claim takes it
    idle = board.explain_idle(role="worker")
    assert idle.waiting_on_dependencies == [waits.id]
    assert idle.claimable and idle.ready == [] and any("ran out" in r for r in idle.reasons)


def test_explain_idle_says_claimable_when_claim_next_would_find_work(board: Board) -> None:
    """Asked before a claim (an MCP agent's `explain`): never 'nothing' while a task waits."""
    mine = board.create_task("for anyone")
    theirs = board.create_task("for reviewers", role="reviewer")
    worker = board.explain_idle(role="worker")
    assert worker.claimable and worker.ready == [mine.id] and worker.other_roles == [theirs.id]
    assert sorted(board.explain_idle().ready) == sorted([mine.id, theirs.id])  # no role: any task
    board.claim(mine.id, "alice")
    after = board.explain_idle(role="worker")
    assert not after.claimable and after.ready == []
    assert board.claim_next("bob", role="worker") is None  # the two agree


def test_an_agent_asking_for_work_hears_what_it_still_holds(
    board: Board, clock: ManualClock
) -> None:
    """An agent that lost its context calls claim-next again: the empty answer's explanation
    names the claims still its own (live leases only), and no one else's."""
    first = board.create_task("first")
    second = board.create_task("second")
    board.claim(first.id, "alice")
    clock.advance(ms=10)
    board.claim(second.id, "alice")
    board.claim(board.create_task("theirs").id, "bob")
    assert board.claim_next("alice") is None
    assert board.held_by("alice") == [first.id, second.id]
    idle = board.explain_idle(agent="alice")
    assert idle.held_by_you == [first.id, second.id]
    assert f"you (alice) already hold {first.id}, {second.id}" in idle.reasons[0]
    assert board.explain_idle().held_by_you == []  # no agent asked: nobody's
    assert board.preview_claim_next(agent="carol").explain.held_by_you == []
    assert board.preview_claim_next(agent="alice").explain.held_by_you == [first.id, second.id]
    clock.advance(ms=board.config.lease_ms + 1)
    assert board.held_by("alice") == []  # lapsed: the next claim-next takes them back


def test_a_ready_list_for_a_role_is_what_claim_next_takes(board: Board) -> None:
    """`list --ready --role worker` (and HTTP's and MCP's ready lists, the same query) lists the
    tasks for no role too, as claim-next takes them; a list that is not a ready one matches the
    role exactly."""
    anyone = board.create_task("for anyone", priority=5)
    worker = board.create_task("for workers", priority=3, role="worker")
    board.create_task("for reviewers", priority=9, role="reviewer")
    board.create_task("waits", priority=7, role="worker", depends_on=[worker.id])
    expected = [anyone.id, worker.id]
    assert [task.id for task in board.list_tasks(ready=True, role="worker")] == expected
    page = board.task_page(ready=True, role="worker", limit=10)
    assert sorted(task.id for task in page.tasks) == sorted(expected)
    documents = board.task_documents(ready=True, role="worker").documents
    assert [json.loads(doc)["id"] for doc in documents] == expected
    assert [task.id for task in board.list_tasks(role="worker")] != expected  # exact role
    assert {task.role for task in board.list_tasks(role="worker")} == {"worker"}
    claimed = [board.claim_next(f"w{n}", role="worker") for n in range(3)]
    assert [task.id for task in claimed if task] == expected


def test_respect_deps_false_with_a_role_ranks_waiting_and_ready_together(board: Board) -> None:
    blocker = board.create_task("blocker", priority=0, role="worker")
    board.create_task("other role waits", priority=9, role="reviewer", depends_on=[blocker.id])
    waits = board.create_task("waits", priority=5, depends_on=[blocker.id])
    ready = board.create_task("ready", priority=3, role="worker")
    take = board.claim_next
    assert take("w1", role="worker", respect_deps=False).id == waits.id  # type: ignore[union-attr]
    assert take("w2", role="worker", respect_deps=False).id == ready.id  # type: ignore[union-attr]
    assert take("w3", role="worker", respect_deps=False).id == blocker.id  # type: ignore[union-attr]
    assert take("w4", role="worker", respect_deps=False) is None


@pytest.mark.parametrize("verb", ["claim", "claim_next"])
def test_a_claimed_task_is_the_stored_row_value_for_value(board: Board, verb: str) -> None:
    """Claims hand back the task as one JSON array (see `store.sqlite._json_returning`): every
    field must come back exactly as a read gives it, agent text, nulls and doubles included."""
    parent = board.create_task("parent")
    awkward = 'quote " backslash \\ tab \t newline \n nul-free \x1b[2J bell \x07 é 漢字 🚀 \u2028'
    task = board.create_task(
        awkward,
        description=awkward * 3,
        priority=7,
        team_id="team ü",
        role="röle",
        kind="research",
        parent_task_id=parent.id,
        assignee_runtime="claude-code",
        source_delegation_id="d-1",
        scheduled_by="orchestrator",
    )
    cost = 0.1 + 0.2  # 0.30000000000000004: not round-tripped by SQLite's 15-digit JSON
    board.store.write(lambda tx: tx.update_task(task.id, {"cost_usd": cost, "holders": ['x"y']}))
    if verb == "claim":
        claimed = board.claim(task.id, 'agent " \\ ü', runtime="rt é")
    else:
        claimed = board.claim_next('agent " \\ ü', role="röle", runtime="rt é")
    assert claimed is not None and claimed.id == task.id
    assert claimed == row(board, task.id)
    assert claimed.cost_usd == cost and claimed.holders == ['x"y', 'agent " \\ ü']


def test_a_claim_returns_a_task_whose_stored_json_orjson_refuses(tmp_path: Path) -> None:
    """The claim reads its returned row with orjson, and with the standard library when orjson
    refuses it: holders written by another program as an escaped lone surrogate still come back
    (as they did before orjson read them), and the claim is not lost after its commit."""
    path = tmp_path / "board.db"
    with Board(path) as board:
        task = board.create_task("t")
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE tasks SET holders = ? WHERE id = ?", ('["\\ud800"]', task.id))
    with Board(path) as board:
        claimed = board.claim_next("agent-a")
        assert claimed is not None and claimed.id == task.id
        assert claimed.holders == ["\ud800", "agent-a"]
        assert board.claim(board.create_task("u").id, "agent-b").holders == ["agent-b"]
