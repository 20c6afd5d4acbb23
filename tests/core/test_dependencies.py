"""Dependency links, cycles, readiness counters and cancel_dependents."""

import subprocess
import sys
from pathlib import Path

import pytest

from boardlib import Board, BoardError, Reason
from boardlib import transitions as t
from boardlib.board import PlanItem
from tests.cli.conftest import clean_env, unchanged
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


VIEW_OF_A_TOP_TASK = """
import sys
from boardlib import Board
with Board(sys.argv[1]) as board:
    task = board.create_task("root")
    assert board.view(task.id).ancestors == []
    print("boardlib.models" in sys.modules)
"""


def test_the_view_of_a_task_without_a_parent_does_not_load_the_ancestor_checker(
    tmp_path: Path,
) -> None:
    """The checker (pydantic) costs 0.15 s of CPU the first time: the task drawer's first open
    paid it for every task, parent or not."""
    done = subprocess.run(
        [sys.executable, "-c", VIEW_OF_A_TOP_TASK, str(tmp_path / "board.db")],
        capture_output=True, text=True, timeout=60, env=clean_env(), check=True,
    )  # fmt: skip
    assert done.stdout.strip() == "False"


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


def test_a_cancelled_task_is_no_dependency_on_any_path(board: Board) -> None:
    """A cancelled task is never done, so a task depending on it could never become ready (the
    stall seed 000 refuses cycles for): deps add, dispatch's depends-on and plans refuse it,
    naming the task, and write nothing."""
    gone = board.create_task("gone")
    board.cancel(gone.id)
    task, fine = board.create_task("task"), board.create_task("fine")
    plan = [PlanItem(key="a", title="A", depends_on=(gone.id,))]
    for call in (
        lambda: board.link_dependency(task.id, gone.id),
        lambda: board.link_dependencies(task.id, [fine.id, gone.id]),
        lambda: board.create_task("new", depends_on=[gone.id]),
        lambda: board.apply_plan(plan, plan="p"),
    ):
        with unchanged(board.path), pytest.raises(BoardError) as refused:
            call()
        assert refused.value.reason is Reason.INVALID_STATE, refused.value
        assert gone.id in refused.value.message and "cancelled" in refused.value.message
    (problem,) = refused.value.details["problems"]
    assert (problem["kind"], problem["key"]) == ("cancelled_dependency", "a")
    assert problem["id"] == gone.id
    # A plan item already on the board gains no link onto a cancelled task by --update either.
    board.apply_plan([PlanItem(key="a", title="A")], plan="q")
    with unchanged(board.path), pytest.raises(BoardError) as refused:
        board.apply_plan(plan, plan="q", update=True)
    assert refused.value.reason is Reason.INVALID_STATE
    assert board.plan_problems(plan, plan="q", update=True) == refused.value.details["problems"]


def test_plan_problems_refuses_a_plan_name_or_flag_of_the_wrong_type(board: Board) -> None:
    """Found by the library fuzz in CI: `plan_problems(items, plan=("t",))` reached SQLite
    (ProgrammingError: a tuple bound as a parameter) where `apply_plan` and `compare_plan`
    refuse it. Now typed alike, reading nothing."""
    for call in (
        lambda: board.plan_problems([], plan=("t",)),  # type: ignore[arg-type]
        lambda: board.plan_problems([], plan="p", update="yes"),  # type: ignore[arg-type]
    ):
        with unchanged(board.path), pytest.raises(BoardError) as refused:
            call()
        assert refused.value.reason is Reason.INVALID_INPUT, refused.value
    assert board.plan_problems([], plan=None) == board.plan_problems([], plan="p") == []


def test_why_says_how_to_end_a_wait_on_a_cancelled_task(board: Board) -> None:
    blocker = board.create_task("blocker")
    waits = board.create_task("waits", depends_on=[blocker.id])
    board.cancel(blocker.id)  # the link was made while it could still finish
    (reason,) = board.explain(waits.id).reasons
    assert reason.startswith(f"waits on {blocker.id} (cancelled), which will never be done")
    assert f"kanban task deps remove {waits.id} --on {blocker.id}" in reason
    assert f"kanban task cancel-dependents {blocker.id}" in reason
    assert board.link_dependency(waits.id, blocker.id).unmet_deps == 1  # re-linking: harmless
