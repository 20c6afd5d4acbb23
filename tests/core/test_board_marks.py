"""The marks a board view reads on every full read (`Board.marked_task_ids`): the tasks moved
to done over the verdict and the done tasks that won't land, the same sets as read one by one,
from one scan of the audit table (it has no index on action; each mark scanned it, and each
won't-land decision cost a task read and an audit read)."""

from pathlib import Path

import pytest

from boardlib import Board, ManualClock
from boardlib import transitions as t
from boardlib.records import OVERRIDE_ACTION, AuditEntry, Marks
from boardlib.store.base import Tx
from boardlib.wontland import ABANDON_ACTION, abandon_detail, wont_land
from tests.conftest import task_in


def audited(board: Board, task_id: str | None, action: str, reason: str = "superseded") -> None:
    """An audit row as the board writes one (a won't-land decision needs a worktree to take)."""

    def work(tx: Tx) -> None:
        tx.insert_audit(
            task_id=task_id, actor="operator:ada", action=action, from_status=t.DONE,
            to_status=t.DONE, verdict_overridden=None, now=board.now(), tenant=None,
            detail=abandon_detail("operator:ada", reason, "its work kept on b at 0123456789ab"),
        )  # fmt: skip

    board.store.write(work)


def one_by_one(board: Board) -> Marks:
    """The marks as each task's own reads say them (a task, its whole audit)."""
    overridden, decided = set(), set()
    for entry in board.audit():
        if entry.task_id is None:
            continue
        if entry.action == OVERRIDE_ACTION:
            overridden.add(entry.task_id)
        elif entry.action == ABANDON_ACTION and wont_land(
            board.get_task(entry.task_id), board.audit(entry.task_id)
        ):
            decided.add(entry.task_id)
    return Marks(frozenset(overridden), frozenset(decided))


def test_the_marks_are_the_sets_read_one_by_one(board: Board, clock: ManualClock) -> None:
    """Overridden, won't land (decided twice, a gate's row between), decided before the task's
    stint in done, decided while in review, decided on a dropped task, and rows of no task: the
    marks read together are the sets each task's reads give, on both backends."""
    overridden = task_in(board, t.IN_REVIEW, title="overridden")
    board.move(overridden.id, t.DONE, human_override=True, reason="ship it")
    standing = task_in(board, t.DONE, title="won't land")
    audited(board, standing.id, ABANDON_ACTION, "first")
    audited(board, standing.id, "verification", "gate")
    audited(board, standing.id, ABANDON_ACTION, "second")
    earlier = task_in(board, t.IN_REVIEW, title="decided before its stint in done")
    audited(board, earlier.id, ABANDON_ACTION)
    clock.advance(minutes=1)
    board.approve(earlier.id, "reviewer")
    in_review = task_in(board, t.IN_REVIEW, title="in review")
    audited(board, in_review.id, ABANDON_ACTION)
    dropped = task_in(board, t.DONE, title="dropped")
    audited(board, dropped.id, ABANDON_ACTION)
    board.drop(dropped.id)
    audited(board, None, OVERRIDE_ACTION)
    audited(board, None, ABANDON_ACTION)

    marks = board.marked_task_ids()
    assert marks == Marks(frozenset({overridden.id}), frozenset({standing.id})), marks
    assert marks == one_by_one(board)
    assert (board.overridden_task_ids(), board.wont_land_task_ids()) == (
        {overridden.id},
        {standing.id},
    )
    decided = [e for e in board.audit(standing.id) if e.action == ABANDON_ACTION]
    assert all(isinstance(entry, AuditEntry) for entry in decided) and len(decided) == 2


@pytest.mark.sqlite_only  # a statement trace: SQLite's connection
def test_the_marks_scan_the_audit_once_and_read_no_task_one_by_one(board_path: Path) -> None:
    """A full read of the TUI read the audit table twice (an override scan, a won't-land scan,
    no index on action) and, per won't-land decision, its task and its audit: at 600 decisions,
    1,202 statements. It is one audit scan and a batched task read (500 ids a statement)."""
    with Board(board_path) as board:
        for n in range(600):
            task = task_in(board, t.DONE) if n < 3 else board.create_task(f"task {n}")
            audited(board, task.id, ABANDON_ACTION)
        task = task_in(board, t.IN_REVIEW)
        board.move(task.id, t.DONE, human_override=True)
        expected = one_by_one(board)
        assert len(expected.wont_land) == 3, expected
        reader = board.store._reader  # type: ignore[attr-defined]
        seen: list[str] = []
        reader.set_trace_callback(seen.append)
        try:
            marks = board.marked_task_ids()
        finally:
            reader.set_trace_callback(None)
        assert marks == expected and marks.overridden == {task.id}, marks
        read = [" ".join(sql.split()) for sql in seen if sql.lstrip().startswith("SELECT")]
        assert len([sql for sql in read if "FROM audit" in sql]) == 1, read
        assert len([sql for sql in read if "FROM tasks" in sql]) == 2, read  # 500 ids, then 100
