"""Records compare and print as dataclasses do, through `Record`'s shared methods."""

from dataclasses import replace

import pytest

from boardlib.records import Comment, Task


def test_records_compare_and_print_like_dataclasses() -> None:
    comment = Comment(id="C-1", task_id="TASK-1", author_type="agent", body="x", created_at=1)
    assert comment == replace(comment) and comment is not replace(comment)
    assert comment != replace(comment, body="y")
    assert comment.__eq__(("C-1", "TASK-1")) is NotImplemented
    assert comment != Task(id="C-1", title="x", status="todo", created_at=1, updated_at=1)
    with pytest.raises(TypeError):
        hash(comment)
    assert repr(comment) == (
        "Comment(id='C-1', task_id='TASK-1', author_type='agent', body='x', created_at=1, "
        "author_agent_id=None, tenant_id=None, path=None, line=None, side=None, line_text=None)"
    )


def test_a_task_compares_every_field_and_prints_them() -> None:
    task = Task(id="TASK-1", title="x", status="todo", created_at=1, updated_at=2, holders=["a"])
    assert task == replace(task, holders=["a"])
    assert task != replace(task, completed_at=3)
    with pytest.raises(TypeError):
        hash(task)
    assert repr(task).startswith("Task(id='TASK-1', title='x', status='todo', created_at=1, ")
    assert repr(task).endswith(
        "review_wait_ms=0, plan_name=None, plan_key=None, status_since=None)"
    )


def test_cost_reads_back_as_a_float_on_every_path(board_path) -> None:  # type: ignore[no-untyped-def]
    """The same task's `costUsd` is `0.0` whichever statement read it: SQLite's `RETURNING` gives
    an integral REAL as an integer where `SELECT` gives a float (found by the HTTP fast lane's
    differential test: a second drop answered `0.0`, the first `0`)."""
    from boardlib import Board

    with Board(board_path) as board:
        created = board.create_task("priced")
        dropped = board.drop(created.id)
        again = board.drop(created.id)
        listed = board.list_tasks(include_dropped=True)
        # the claim and heartbeat answered `0` where dispatch said `0.0`
        held = board.claim(board.create_task("held").id, "alice")
        beat = board.heartbeat(held.id, "alice")
        board.create_task("next")
        best = board.claim_next("bob")
        assert best is not None
        for task in (created, dropped, again, *listed, held, beat, best):
            assert type(task.to_json()["costUsd"]) is float, task
