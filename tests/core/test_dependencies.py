"""Dependency links, cycles, readiness counters and cancel_dependents."""

import pytest

from boardlib import Board, BoardError, Reason
from boardlib import transitions as t
from tests.conftest import row, task_in


def test_link_is_idempotent_and_counts_once(board: Board) -> None:
    a = board.create_task("a")
    b = board.create_task("b")
    board.link_dependency(b.id, a.id)
    events = len(board.events())
    again = board.link_dependency(b.id, a.id)
    assert again.unmet_deps == 1
    assert len(board.events()) == events  # a no-op writes nothing
    assert [dep.id for dep in board.dependencies(b.id)] == [a.id]
    assert [dep.id for dep in board.dependents(a.id)] == [b.id]


def test_both_ends_must_exist(board: Board) -> None:
    a = board.create_task("a")
    for task_id, depends_on in ((a.id, "TASK-404"), ("TASK-404", a.id)):
        with pytest.raises(BoardError) as refused:
            board.link_dependency(task_id, depends_on)
        assert refused.value.reason is Reason.NOT_FOUND
    assert board.dependencies(a.id) == []


@pytest.mark.parametrize("length", [1, 2, 5])
def test_links_that_close_a_cycle_are_refused(board: Board, length: int) -> None:
    chain = [board.create_task(f"step {i}") for i in range(length)]
    for later, earlier in zip(chain[1:], chain, strict=False):
        board.link_dependency(later.id, earlier.id)
    before = [row(board, task.id) for task in chain]
    with pytest.raises(BoardError) as refused:
        board.link_dependency(chain[0].id, chain[-1].id)
    assert refused.value.reason is Reason.DEPENDENCY_CYCLE
    cycle = refused.value.details["cycle"]
    assert cycle[0] == cycle[-1] == chain[0].id
    assert set(cycle) == {task.id for task in chain}
    assert [row(board, task.id) for task in chain] == before


def test_linking_onto_a_done_task_keeps_the_dependent_ready(board: Board) -> None:
    done = task_in(board, t.DONE)
    later = board.create_task("later")
    assert board.link_dependency(later.id, done.id).unmet_deps == 0
    assert later.id in [task.id for task in board.ready_tasks()]


def test_unlink_restores_readiness(board: Board) -> None:
    a = board.create_task("a")
    b = board.create_task("b", depends_on=[a.id])
    assert board.unlink_dependency(b.id, a.id).unmet_deps == 0
    with pytest.raises(BoardError) as missing:
        board.unlink_dependency(b.id, a.id)
    assert missing.value.reason is Reason.NOT_FOUND


def test_cancel_dependents_on_a_diamond(board: Board) -> None:
    #      top
    #     /   \
    #  left   right(claimed)
    #     \   /
    #     bottom     + tail depends on bottom; done_dep is done already
    top = board.create_task("top")
    left = board.create_task("left", depends_on=[top.id])
    right = board.create_task("right", depends_on=[top.id], status=t.BACKLOG)
    bottom = board.create_task("bottom", depends_on=[left.id, right.id])
    tail = board.create_task("tail", depends_on=[bottom.id])
    claimed = board.create_task("claimed")
    board.claim(claimed.id, "worker")
    board.link_dependency(claimed.id, top.id)  # a dependent that is already being worked
    unrelated = board.create_task("unrelated")
    board.move(top.id, t.BLOCKED, reason="the approach failed")  # an operator's verdict
    cancelled = board.cancel_dependents(top.id, actor="lead")
    assert sorted(task.id for task in cancelled) == sorted([left.id, right.id, bottom.id, tail.id])
    assert {task.status for task in cancelled} == {t.CANCELLED}
    assert row(board, claimed.id).status == t.IN_PROGRESS  # claimed a moment earlier: left alone
    assert row(board, unrelated.id).status == t.TODO
    assert row(board, top.id).status == t.BLOCKED
    reasons = [
        event.data.get("reason")
        for event in board.events()
        if event.kind == "status_changed" and event.data.get("to") == t.CANCELLED
    ]
    assert reasons == ["blocker_failed"] * 4
    assert board.cancel_dependents(top.id) == []


def test_cancel_dependents_of_unknown_task(board: Board) -> None:
    with pytest.raises(BoardError) as missing:
        board.cancel_dependents("TASK-404")
    assert missing.value.reason is Reason.NOT_FOUND


def test_create_with_unknown_dependency_creates_nothing(board: Board) -> None:
    with pytest.raises(BoardError) as refused:
        board.create_task("orphan", depends_on=["TASK-77"])
    assert refused.value.reason is Reason.NOT_FOUND
    assert board.list_tasks(include_dropped=True) == []


def test_ancestors_nearest_first(board: Board) -> None:
    root = board.create_task("root")
    child = board.create_task("child", parent_task_id=root.id)
    grandchild = board.create_task("grandchild", parent_task_id=child.id)
    assert [a.id for a in board.ancestors(grandchild.id)] == [child.id, root.id]
    assert board.ancestors(root.id) == []
    assert board.view(grandchild.id).ancestors[0].to_json() == {
        "id": child.id, "parent_task_id": root.id, "title": "child", "status": "todo",
    }  # fmt: skip


def test_create_plan_orders_by_dependencies_and_refuses_a_cyclic_plan(board: Board) -> None:
    from boardlib import PlanItem

    created = board.create_plan(
        [
            PlanItem(key="docs", title="Document it", depends_on=("impl",)),
            PlanItem(key="impl", title="Implement it", depends_on=("api",)),
            PlanItem(key="api", title="Design the API"),
        ]
    )
    assert [created[k].id for k in ("api", "impl", "docs")] == ["TASK-1", "TASK-2", "TASK-3"]
    assert row(board, created["docs"].id).unmet_deps == 1
    with pytest.raises(BoardError) as refused:
        board.create_plan(
            [
                PlanItem(key="a", title="a", depends_on=("b",)),
                PlanItem(key="b", title="b", depends_on=("a",)),
            ]
        )
    assert refused.value.reason is Reason.DEPENDENCY_CYCLE
    assert refused.value.details["keys"] == ["a", "b", "a"]
    assert len(board.list_tasks()) == 3  # nothing of the refused plan was created
