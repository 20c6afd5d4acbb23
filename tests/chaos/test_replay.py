"""The soak's judge can fail: the event-log replay flags each kind of broken promise.

The soak passes when the replay finds nothing, so the replay itself is checked here against logs
that break each promise on purpose, and against a real board's log that breaks none.
"""

from typing import Any

from boardlib import Board, BoardConfig, ManualClock
from boardlib import transitions as t
from boardlib.events import EventKind, wire
from boardlib.records import EXECUTION_SUCCEEDED

from .replay import replay

LEASE = 1000


def ev(
    seq: int, kind: EventKind, task: str, actor: str | None, at: int, **data: Any
) -> dict[str, Any]:
    """An event as the board serves it, from its payload's snake_case fields."""
    payload = wire(data)  # partial payloads, on purpose: each test breaks one promise
    return {
        "seq": seq,
        "kind": kind,
        "taskId": task,
        "actor": actor,
        "createdAt": at,
        "data": payload,
    }


def created(seq: int = 1) -> dict[str, Any]:
    return ev(seq, EventKind.TASK_CREATED, "T", "operator", 0, status=t.TODO)


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
        board.close_execution(mine.id, EXECUTION_SUCCEEDED, agent="bob", epoch=second.claim_epoch)
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
            ev(2, EventKind.TASK_CLAIMED, "T", "ada", 10, epoch=1),
            ev(3, EventKind.TASK_CLAIMED, "T", "bob", 20, epoch=2),
        ],
        lease_ms=LEASE,
    )
    assert verdict.double_held == 1
    assert "under a live lease" in verdict.violations[0]


def test_a_write_after_the_lease_or_by_another_is_late() -> None:
    verdict = replay(
        [
            created(),
            ev(2, EventKind.TASK_CLAIMED, "T", "ada", 10, epoch=1),
            ev(3, EventKind.LEASE_RENEWED, "T", "ada", 10 + LEASE + 1, lease_until=5000),
            ev(4, EventKind.PROGRESS_LOGGED, "T", "bob", 30, lease_until=5000),
            ev(
                5,
                EventKind.STATUS_CHANGED,
                "T",
                "bob",
                40,
                verb="complete",
                **{"from": t.IN_PROGRESS},
                to=t.IN_REVIEW,
            ),
        ],
        lease_ms=LEASE,
    )
    assert verdict.late_writes == 3, verdict.violations


def test_releasing_a_live_lease_is_early() -> None:
    verdict = replay(
        [
            created(),
            ev(2, EventKind.TASK_CLAIMED, "T", "ada", 10, epoch=1),
            ev(3, EventKind.LEASE_EXPIRED, "T", "system", 500, assignee="ada", claim_epoch=2),
        ],
        lease_ms=LEASE,
    )
    assert verdict.early_releases == 1


def test_done_twice_and_open_runs_are_counted() -> None:
    verdict = replay(
        [
            created(),
            ev(2, EventKind.TASK_CLAIMED, "T", "ada", 10, epoch=1),
            ev(3, EventKind.EXECUTION_STARTED, "T", "ada", 11, execution_id="E1"),
            ev(
                4,
                EventKind.STATUS_CHANGED,
                "T",
                "ada",
                12,
                verb="complete",
                to=t.IN_REVIEW,
                **{"from": t.IN_PROGRESS},
            ),
            ev(
                5,
                EventKind.STATUS_CHANGED,
                "T",
                "rita",
                13,
                verb="approve",
                to=t.DONE,
                **{"from": t.IN_REVIEW},
            ),
            ev(
                6,
                EventKind.STATUS_CHANGED,
                "T",
                "op",
                14,
                verb="move",
                to=t.DONE,
                **{"from": t.TODO},
            ),
        ],
        lease_ms=LEASE,
    )
    assert verdict.done_counts == {"T": 2}
    assert verdict.open_runs == ["E1"]
