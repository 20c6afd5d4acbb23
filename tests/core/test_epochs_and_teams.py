"""Library support the HTTP surface relies on: every verb that acts on a claimed attempt honours a
quoted `epoch`, claim-next narrows to a team, a clean shutdown folds the WAL in, and readiness is
a cheap schema probe."""

from pathlib import Path

import pytest

from boardlib import Board, BoardError, Reason
from boardlib import transitions as t
from tests.conftest import row, task_in


def refused(reason: Reason, call: object) -> BoardError:
    assert callable(call)
    with pytest.raises(BoardError) as caught:
        call()
    assert caught.value.reason is reason
    return caught.value


def test_review_verbs_refuse_a_stale_epoch_and_change_nothing(board: Board) -> None:
    task = task_in(board, t.IN_REVIEW)
    stale = task.claim_epoch - 1
    for verb in (
        lambda: board.approve(task.id, "judge", epoch=stale),
        lambda: board.reject(task.id, "judge", "no", epoch=stale),
    ):
        error = refused(Reason.STALE_CLAIM, verb)
        assert error.details["current_epoch"] == task.claim_epoch
        assert row(board, task.id) == task
    assert board.approve(task.id, "judge", epoch=task.claim_epoch).status == t.DONE


def test_reject_with_the_current_epoch(board: Board) -> None:
    task = task_in(board, t.IN_REVIEW)
    assert board.reject(task.id, "judge", "redo", epoch=task.claim_epoch).status == t.TODO


def test_unblock_drop_and_restore_honour_the_epoch(board: Board) -> None:
    blocked = task_in(board, t.BLOCKED)
    refused(Reason.STALE_CLAIM, lambda: board.unblock(blocked.id, epoch=blocked.claim_epoch + 1))
    assert row(board, blocked.id) == blocked
    assert board.unblock(blocked.id, epoch=blocked.claim_epoch).status == t.TODO

    todo = board.create_task("spare")
    refused(Reason.STALE_CLAIM, lambda: board.drop(todo.id, epoch=3))
    assert not row(board, todo.id).dropped
    dropped = board.drop(todo.id, epoch=0)
    assert dropped.dropped == 1
    refused(Reason.STALE_CLAIM, lambda: board.restore(todo.id, epoch=9))
    assert board.restore(todo.id, epoch=0).dropped == 0


def test_claim_next_narrows_to_a_team(board: Board) -> None:
    red = board.create_task("red work", team_id="red", priority=1)
    blue = board.create_task("blue work", team_id="blue", priority=5)
    claimed = board.claim_next("alice", team_id="red")
    assert claimed is not None and claimed.id == red.id
    assert board.claim_next("bob", team_id="red") is None
    assert row(board, blue.id).status == t.TODO
    other = board.claim_next("carol", team_id="blue", role="worker")
    assert other is not None and other.id == blue.id


@pytest.mark.sqlite_only  # the file's own write-ahead log (a Postgres server checkpoints itself)
def test_checkpoint_truncates_the_write_ahead_log(board_path: Path) -> None:
    with Board(board_path) as board:
        for n in range(20):
            board.create_task(f"task {n}")
        wal = Path(f"{board_path}-wal")
        assert wal.exists() and wal.stat().st_size > 0
        assert board.checkpoint() is True
        assert wal.stat().st_size == 0
        assert board.schema_current() is True


def test_an_agent_edits_only_a_task_it_holds(board: Board) -> None:
    held = board.create_task("held by alice")
    board.claim(held.id, "alice")
    queued = board.create_task("in the queue", priority=1)
    before = (row(board, held.id), row(board, queued.id))
    error = refused(Reason.NOT_ASSIGNEE, lambda: board.update_task(held.id, title="x", actor="bob"))
    assert error.details["fields"] == ["title"] and error.details["assignee"] == "alice"
    refused(Reason.NOT_ASSIGNEE, lambda: board.update_task(queued.id, priority=99, actor="bob"))
    assert (row(board, held.id), row(board, queued.id)) == before
    assert board.update_task(held.id, title="mine", actor="alice").title == "mine"
    assert board.update_task(queued.id, priority=99, actor="operator:dana").priority == 99
