"""Leases, heartbeats, epochs and recovery: one mechanism (issue 2 items 9 and 11)."""

from pathlib import Path

import pytest

from boardlib import Board, BoardError, ManualClock, Reason
from boardlib import transitions as t
from tests.conftest import row, task_in


def test_seed_002_walkthrough(board: Board, clock: ManualClock) -> None:
    task = board.create_task("TASK-1 work", role="worker")
    alice = board.claim_next("alice", role="worker")
    assert alice is not None and alice.lease_until == clock.now_ms() + 15 * 60_000
    clock.advance(minutes=10)
    renewed = board.log_progress(task.id, "alice", "Working")
    assert renewed.lease_until == clock.now_ms() + 15 * 60_000
    # alice crashes; 15 minutes pass
    clock.advance(minutes=15, ms=1)
    bob = board.claim_next("bob", role="worker")
    assert bob is not None and bob.id == task.id
    assert bob.assignee_agent_id == "bob"
    assert bob.claim_epoch == alice.claim_epoch + 2  # the expiry release, then bob's claim
    assert bob.holders == ["alice", "bob"]
    kinds = [event.kind for event in board.events(task_id=task.id)]
    assert kinds[-2:] == ["lease_expired", "task_claimed"]


def test_lapsed_worker_cannot_write_over_its_successor(board: Board, clock: ManualClock) -> None:
    task = board.create_task("job")
    first = board.claim(task.id, "alice")
    clock.advance(ms=board.config.lease_ms + 1)
    second = board.claim_next("alice")  # same agent name, new incarnation
    assert second is not None and second.claim_epoch > first.claim_epoch
    before = row(board, task.id)
    with pytest.raises(BoardError) as stale:
        board.complete(task.id, "alice", epoch=first.claim_epoch)
    assert stale.value.reason is Reason.STALE_CLAIM
    assert row(board, task.id) == before
    assert board.complete(task.id, "alice", epoch=second.claim_epoch).status == t.IN_REVIEW


@pytest.mark.parametrize("verb", ["heartbeat", "log_progress", "extend_lease", "complete", "block"])
def test_lease_protected_verbs_refuse_other_agents(board: Board, verb: str) -> None:
    task = board.create_task("job")
    board.claim(task.id, "alice")
    before = row(board, task.id)
    call = {
        "heartbeat": lambda: board.heartbeat(task.id, "mallory"),
        "log_progress": lambda: board.log_progress(task.id, "mallory", "hi"),
        "extend_lease": lambda: board.extend_lease(task.id, "mallory", minutes=60),
        "complete": lambda: board.complete(task.id, "mallory"),
        "block": lambda: board.block(task.id, "mallory", "why not"),
    }[verb]
    with pytest.raises(BoardError) as refused:
        call()
    assert refused.value.reason is Reason.NOT_ASSIGNEE
    assert row(board, task.id) == before


def test_an_expired_lease_is_stale_even_before_it_is_released(
    board: Board, clock: ManualClock
) -> None:
    task = board.create_task("job")
    board.claim(task.id, "alice")
    clock.advance(ms=board.config.lease_ms + 1)
    with pytest.raises(BoardError) as stale:
        board.heartbeat(task.id, "alice")
    assert stale.value.reason is Reason.STALE_CLAIM


def test_claim_next_takes_a_lapsed_task_the_moment_its_lease_lapses(
    board: Board, clock: ManualClock
) -> None:
    """The claim statement claims nothing while any lease has expired; the claim then reclaims and
    tries again in its own transaction, so the released task competes at once (ranked first here,
    although other tasks are ready), and not a millisecond earlier."""
    abandoned = board.create_task("abandoned", priority=9)
    held = board.claim(abandoned.id, "ghost", lease_ms=60_000)
    assert held.lease_until is not None
    low = {board.create_task(f"low {n}", priority=1).id for n in range(3)}
    clock.set(held.lease_until)  # its last live millisecond
    first = board.claim_next("bob")
    assert first is not None and first.id in low
    clock.advance(ms=1)
    taken = board.claim_next("bob")
    assert taken is not None and taken.id == abandoned.id
    assert taken.claim_epoch == held.claim_epoch + 2  # the expiry release, then bob's claim
    kinds = [event.kind for event in board.events()]
    assert kinds[-2:] == ["lease_expired", "task_claimed"]


def test_a_claim_by_id_releases_expired_leases_and_a_refused_one_keeps_them(
    board: Board, clock: ManualClock
) -> None:
    lapsed = board.create_task("lapsed")
    board.claim(lapsed.id, "ghost")
    reviewed = task_in(board, t.IN_REVIEW)
    other = board.create_task("other")
    clock.advance(ms=board.config.lease_ms + 1)
    before = row(board, lapsed.id)
    with pytest.raises(BoardError) as refused:
        board.claim(reviewed.id, "bob")
    assert refused.value.reason is Reason.CONFLICT
    assert row(board, lapsed.id) == before  # the refusal rolled its reclaim back too
    assert board.claim(other.id, "bob").status == t.IN_PROGRESS
    released = row(board, lapsed.id)
    assert (released.status, released.assignee_agent_id) == (t.TODO, None)
    assert [event.kind for event in board.events()][-2:] == ["lease_expired", "task_claimed"]


def test_extend_lease_sets_the_requested_length(board: Board, clock: ManualClock) -> None:
    task = board.create_task("long step")
    board.claim(task.id, "alice")
    extended = board.extend_lease(task.id, "alice", minutes=90)
    assert extended.lease_until == clock.now_ms() + 90 * 60_000
    for bad in (0, -5, 24 * 60 + 1, True):
        with pytest.raises(BoardError) as refused:
            board.extend_lease(task.id, "alice", minutes=bad)
        assert refused.value.reason is Reason.INVALID_INPUT
    assert row(board, task.id).lease_until == extended.lease_until


def test_heartbeat_on_a_task_not_in_progress_names_the_states(board: Board) -> None:
    task = board.create_task("job")
    with pytest.raises(BoardError) as refused:
        board.heartbeat(task.id, "alice")
    assert refused.value.reason is Reason.INVALID_STATE
    assert "(current state: todo, expected: in_progress)" in refused.value.message


def test_block_clears_the_lease_and_complete_leaves_no_owner(board: Board) -> None:
    a = board.create_task("a")
    board.claim(a.id, "alice")
    blocked = board.block(a.id, "alice", "needs credentials")
    assert (blocked.status, blocked.lease_until, blocked.blocked_reason) == (
        t.BLOCKED, None, "needs credentials",
    )  # fmt: skip
    b = board.create_task("b")
    board.claim(b.id, "alice")
    done = board.complete(b.id, "alice", summary="wrote it")
    assert (done.status, done.assignee_agent_id, done.lease_until) == (t.IN_REVIEW, None, None)
    assert done.claimed_by == "alice"
    assert board.comments(b.id)[-1].body == "wrote it"


def test_orphan_pass_at_open_times_out_running_executions_once(
    board_path: object, clock: ManualClock
) -> None:
    with Board(board_path, clock=clock) as first:  # type: ignore[arg-type]
        task = first.create_task("job")
        first.claim(task.id, "alice")
        execution = first.open_execution(task.id, "claude-code", agent="alice")
    clock.advance(ms=first.config.lease_ms + 1)
    with Board(board_path, clock=clock) as reopened:  # type: ignore[arg-type]
        released = reopened.get_task(task.id)
        assert released.status == t.TODO and released.assignee_agent_id is None
        ran = reopened.get_execution(execution.id)
        assert ran.status == "timed_out" and ran.recovery_tombstone == 1
        events_before = reopened.events()
        assert reopened.reconcile_stale_tasks().released == []  # a second pass is a no-op
        assert reopened.events() == events_before
        with pytest.raises(BoardError) as closed:
            reopened.close_execution(execution.id, "succeeded", agent="alice")
        assert closed.value.reason is Reason.NOT_FOUND


def test_reconcile_reports_what_it_released(board: Board, clock: ManualClock) -> None:
    live = board.create_task("live")
    dead = board.create_task("dead")
    board.claim(dead.id, "ghost")
    clock.advance(minutes=10)
    board.claim(live.id, "alice")
    clock.advance(minutes=6)
    report = board.reconcile_stale_tasks()
    assert [task.id for task in report.released] == [dead.id]
    assert row(board, live.id).status == t.IN_PROGRESS


def test_transfer_rules(board: Board, clock: ManualClock) -> None:
    task = board.create_task("job")
    claimed = board.claim(task.id, "bob")
    for agent, to, reason in (
        ("mallory", "charlie", Reason.NOT_ASSIGNEE),
        ("bob", "bob", Reason.INVALID_INPUT),
        ("bob", "  ", Reason.INVALID_INPUT),
    ):
        with pytest.raises(BoardError) as refused:
            board.transfer(task.id, agent, to)
        assert refused.value.reason is reason
    clock.advance(minutes=5)
    moved = board.transfer(task.id, "bob", "charlie", epoch=claimed.claim_epoch)
    assert moved.assignee_agent_id == "charlie"
    assert moved.lease_until == clock.now_ms() + board.config.lease_ms
    assert moved.claim_epoch == claimed.claim_epoch + 1
    with pytest.raises(BoardError) as stale:
        board.heartbeat(task.id, "charlie", epoch=claimed.claim_epoch)
    assert stale.value.reason is Reason.STALE_CLAIM
    todo = board.create_task("not started")
    with pytest.raises(BoardError) as wrong:
        board.transfer(todo.id, "bob", "charlie")
    assert wrong.value.reason is Reason.INVALID_STATE


def test_lease_liveness_is_one_rule_at_the_boundary_millisecond(tmp_path: Path) -> None:
    """At `lease_until` itself the holder still holds the task everywhere: the holder check, the
    SQL predicate, `explain` and the TUI's card; a millisecond later all of them say expired."""
    from boardlib.leases import lease_expired
    from tui.cards import EXPIRED, SOON, lease_state

    clock = ManualClock(1_800_000_000_000)
    with Board(tmp_path / "b.db", clock=clock) as board:
        task = board.claim(board.create_task("x").id, "ada", lease_ms=60_000)
        assert task.lease_until is not None
        clock.set(task.lease_until)
        assert not lease_expired(task.lease_until, clock.now_ms())
        assert lease_state(task, clock.now_ms()) == SOON
        assert board.explain(task.id).claimable is False
        assert board.heartbeat(task.id, "ada", epoch=task.claim_epoch).lease_until is not None
        assert board.reconcile_orphans() == []  # the SQL predicate agrees: still live
        renewed = board.get_task(task.id)
        clock.set(renewed.lease_until + 1)  # type: ignore[operator]
        assert lease_expired(renewed.lease_until, clock.now_ms())
        assert lease_state(renewed, clock.now_ms()) == EXPIRED
        assert board.explain(task.id).claimable is True
        assert [t.id for t in board.reconcile_orphans()] == [task.id]


@pytest.mark.parametrize("then", ["held", "completed"])
def test_a_superseded_epoch_is_stale_whoever_reclaimed(
    board: Board, clock: ManualClock, then: str
) -> None:
    """A lapsed worker quoting its epoch learns its claim is gone (`stale_claim`), not that bob
    holds the task (`not_assignee`) or that it moved on (`invalid_state`)."""
    task = board.create_task("job")
    first = board.claim(task.id, "alice")
    clock.advance(ms=board.config.lease_ms + 1)
    board.claim_next("bob")
    if then == "completed":
        board.complete(task.id, "bob")
    before = row(board, task.id)
    for call in (
        lambda: board.heartbeat(task.id, "alice", epoch=first.claim_epoch),
        lambda: board.complete(task.id, "alice", epoch=first.claim_epoch),
        lambda: board.release(task.id, "alice", epoch=first.claim_epoch),
    ):
        with pytest.raises(BoardError) as stale:
            call()
        assert stale.value.reason is Reason.STALE_CLAIM
        assert "is stale" in stale.value.message
    assert row(board, task.id) == before
    with pytest.raises(BoardError) as other:  # without an epoch, the holder check speaks
        board.heartbeat(task.id, "alice")
    assert other.value.reason is (Reason.NOT_ASSIGNEE if then == "held" else Reason.INVALID_STATE)
