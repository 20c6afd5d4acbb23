"""The marks a board view reads on every full read (`Board.marked_task_ids`): the tasks moved
to done over the verdict and the done tasks that won't land, the same sets as read one by one,
from one read of the audit table by its index on action (each mark scanned the table, and each
won't-land decision cost a task read and an audit read)."""

from pathlib import Path
from typing import Any

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
    """A full read of the TUI read the audit table twice (an override scan, a won't-land scan)
    and, per won't-land decision, its task and its audit: at 600 decisions,
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


def test_the_marks_read_the_audit_by_its_index_on_action(board: Board, backend: str) -> None:
    """The statement `marked_task_ids` reads the audit with, as run, is planned on the index on
    action (migration 11), not as a scan of every row: at 100,000 tasks and 133,000 audit rows
    the scan took 8-10 ms on SQLite, 25-29 ms on Postgres; by the index 0.13 ms and 0.36 ms."""
    for n in range(20):
        audited(board, task_in(board, t.DONE).id, "verification" if n % 5 else ABANDON_ACTION)

    def plan(tx: Any) -> str:
        run: list[tuple[str, Any]] = []
        fetchall = tx._fetchall

        def traced(query: str, params: Any = ()) -> Any:
            run.append((query, params))
            return fetchall(query, params)

        tx._fetchall = traced
        tx.audit_of((OVERRIDE_ACTION, ABANDON_ACTION))
        tx._fetchall = fetchall
        ((query, params),) = run
        if backend == "postgres":  # a table this small is read whole, index or not
            tx._fetchall("SELECT set_config('enable_seqscan', 'off', true)")
            return " ".join(str(row[0]) for row in tx._fetchall(f"EXPLAIN {query}", params))
        return " ".join(str(row[-1]) for row in tx._fetchall(f"EXPLAIN QUERY PLAN {query}", params))

    found = board.store.read(plan)
    assert "audit_action" in found, found
