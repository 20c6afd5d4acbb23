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
        "author_agent_id=None, tenant_id=None)"
    )


def test_a_task_compares_every_field_and_prints_them() -> None:
    task = Task(id="TASK-1", title="x", status="todo", created_at=1, updated_at=2, holders=["a"])
    assert task == replace(task, holders=["a"])
    assert task != replace(task, completed_at=3)
    with pytest.raises(TypeError):
        hash(task)
    assert repr(task).startswith("Task(id='TASK-1', title='x', status='todo', created_at=1, ")
    assert repr(task).endswith("verification=None, completed_at=None)")
