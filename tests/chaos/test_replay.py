"""The soak's judge can fail: the event-log replay flags each kind of broken promise.

The soak passes when the replay finds nothing, so the replay itself is checked here against logs
that break each promise on purpose, and against a real board's log that breaks none.
"""

from typing import Any

from boardlib import Board, BoardConfig, ManualClock

from .replay import replay

LEASE = 1000


def ev(seq: int, kind: str, task: str, actor: str | None, at: int, **data: Any) -> dict[str, Any]:
    return {"seq": seq, "kind": kind, "taskId": task, "actor": actor, "createdAt": at, "data": data}


def created(seq: int = 1) -> dict[str, Any]:
    return ev(seq, "task_created", "T", "operator", 0, status="todo")


def test_a_real_boards_log_with_a_lapsed_lease_is_clean(tmp_path) -> None:  # type: ignore[no-untyped-def]
    clock = ManualClock(1_000_000)
    with Board(tmp_path / "b.db", clock=clock, config=BoardConfig(lease_ms=LEASE)) as board:
        task = board.create_task("t")
        first = board.claim_next("ada")
        assert first is not None
        run = board.open_execution(task.id, "x", agent="ada", epoch=first.claim_epoch)
        clock.advance(ms=LEASE + 1)
        second = board.claim_next("bob")  # the reclaim times ada's run out, bob takes over
        assert second is not None
        board.heartbeat(task.id, "bob", epoch=second.claim_epoch)
        mine = board.open_execution(task.id, "x", agent="bob", epoch=second.claim_epoch)
        board.close_execution(mine.id, "succeeded", agent="bob", epoch=second.claim_epoch)
        board.complete(task.id, "bob", epoch=second.claim_epoch)
        board.reject(task.id, "rita", "again")
        third = board.claim_next("bob")
        assert third is not None
        board.complete(task.id, "bob", epoch=third.claim_epoch)
        board.approve(task.id, "rita")
        verdict = replay(board.events(), lease_ms=LEASE)
    assert verdict.violations == []
    assert verdict.done_counts == {task.id: 1}
    assert verdict.open_runs == [] and verdict.runs_opened == 2 and run.id
    assert verdict.lease_expiries == 1 and verdict.claims == 3


def test_a_claim_of_a_held_task_is_a_double_holder() -> None:
    verdict = replay(
        [
            created(),
            ev(2, "task_claimed", "T", "ada", 10, epoch=1),
            ev(3, "task_claimed", "T", "bob", 20, epoch=2),
        ],
        lease_ms=LEASE,
    )
    assert verdict.double_held == 1
    assert "under a live lease" in verdict.violations[0]


def test_a_write_after_the_lease_or_by_another_is_late() -> None:
    verdict = replay(
        [
            created(),
            ev(2, "task_claimed", "T", "ada", 10, epoch=1),
            ev(3, "lease_renewed", "T", "ada", 10 + LEASE + 1, leaseUntil=5000),
            ev(4, "progress_logged", "T", "bob", 30, leaseUntil=5000),
            ev(
                5,
                "status_changed",
                "T",
                "bob",
                40,
                verb="complete",
                **{"from": "in_progress"},
                to="in_review",
            ),
        ],
        lease_ms=LEASE,
    )
    assert verdict.late_writes == 3, verdict.violations


def test_releasing_a_live_lease_is_early() -> None:
    verdict = replay(
        [
            created(),
            ev(2, "task_claimed", "T", "ada", 10, epoch=1),
            ev(3, "lease_expired", "T", "system", 500, assignee="ada", claimEpoch=2),
        ],
        lease_ms=LEASE,
    )
    assert verdict.early_releases == 1


def test_done_twice_and_open_runs_are_counted() -> None:
    verdict = replay(
        [
            created(),
            ev(2, "task_claimed", "T", "ada", 10, epoch=1),
            ev(3, "execution_started", "T", "ada", 11, executionId="E1"),
            ev(
                4,
                "status_changed",
                "T",
                "ada",
                12,
                verb="complete",
                to="in_review",
                **{"from": "in_progress"},
            ),
            ev(
                5,
                "status_changed",
                "T",
                "rita",
                13,
                verb="approve",
                to="done",
                **{"from": "in_review"},
            ),
            ev(6, "status_changed", "T", "op", 14, verb="move", to="done", **{"from": "todo"}),
        ],
        lease_ms=LEASE,
    )
    assert verdict.done_counts == {"T": 2}
    assert verdict.open_runs == ["E1"]
