"""Say who is creating: when KANBAN_AGENT (or --agent) makes a `task dispatch` or `plan apply`
an agent's create, stderr says so once per call, with the caps from the board's config and the
way to create as the operator; a `cap_exceeded` refusal carries the same words as `hint` (and
stays the one stderr line). stdout stays one JSON document."""

import json
from pathlib import Path

import pytest

from tests.cli.conftest import Kanban, agent_notice


@pytest.fixture
def kanban(board_path: Path) -> Kanban:
    return Kanban(board_path)


def test_an_exported_agent_says_it_creates_as_that_agent(kanban: Kanban) -> None:
    agent = {"KANBAN_AGENT": "worker-1"}
    said = agent_notice("worker-1", by="env")
    assert said == (
        "creating as agent worker-1: agent creates are capped (24 children, 30 roots per 5 "
        "minutes); unset KANBAN_AGENT to create as the operator"
    )
    task = kanban.noticed("task", "dispatch", "-t", "one", env=agent, notice=said)
    assert task["scheduledBy"] == "agent"
    flagged = kanban.noticed("task", "dispatch", "-t", "two", "-a", "w2", notice=agent_notice("w2"))
    assert flagged["title"] == "two"
    # The operator, by default or by name, creates uncapped and says nothing.
    assert kanban.ok("task", "dispatch", "-t", "three")["scheduledBy"] == "manual"
    assert kanban.ok("task", "dispatch", "-t", "four", "-a", "operator:dana")["title"] == "four"


def test_the_numbers_are_the_boards_own(kanban: Kanban) -> None:
    config = {
        "KANBAN_AGENT": "worker-1",
        "KANBAN_MAX_LIVE_CHILDREN": "1",
        "KANBAN_ROOT_CREATE_LIMIT": "7",
        "KANBAN_ROOT_CREATE_WINDOW_MS": "90000",
    }
    said = agent_notice("worker-1", by="env", caps="1 child, 7 roots per 90 seconds")
    kanban.noticed("task", "dispatch", "-t", "one", env=config, notice=said)


def test_cap_exceeded_carries_the_same_hint_on_its_one_line(kanban: Kanban) -> None:
    limited = {"KANBAN_AGENT": "worker-1", "KANBAN_ROOT_CREATE_LIMIT": "1"}
    said = agent_notice("worker-1", by="env", caps="24 children, 1 root per 5 minutes")
    kanban.noticed("task", "dispatch", "-t", "first", env=limited, notice=said)
    before = kanban.snapshot()
    error = kanban.refused("task", "dispatch", "-t", "second", env=limited, reason="cap_exceeded")
    assert error["hint"] == said
    assert kanban.snapshot() == before


def test_a_depth_refusal_names_the_depth_ceiling_in_its_hint(kanban: Kanban) -> None:
    """The hint of a create refused for depth says the ceiling that was broken, which the
    notice of a create leaves out."""
    with kanban.board() as board:
        parent = board.create_task("root")
        for level in ("child", "grandchild"):
            parent = board.create_task(level, parent_task_id=parent.id)
    error = kanban.refused(
        "task", "dispatch", "-t", "too deep", "--parent", parent.id, "-a", "w1",
        reason="cap_exceeded",
    )  # fmt: skip
    assert error["cap"] == "depth"
    assert error["hint"] == agent_notice(
        "w1", caps="2 ancestors, 24 children, 30 roots per 5 minutes"
    )


def test_a_plan_applied_as_an_agent_says_it_once(kanban: Kanban, tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text("".join(f"- {{key: k{i}, title: K{i}}}\n" for i in range(3)))
    said = agent_notice("planner")
    result = kanban.run("plan", "apply", str(plan), "-a", "planner")
    assert result.code == 0 and result.err == f"kanban: {said}\n", str(result)  # once, not 3x
    assert json.loads(result.out)["count"] == 3 and result.out.count("\n") == 1
    wide = tmp_path / "wide.yaml"
    wide.write_text("".join(f"- {{key: r{i}, title: R{i}}}\n" for i in range(40)))
    error = kanban.refused("plan", "apply", str(wide), "-a", "planner", reason="cap_exceeded")
    assert error["hint"] == said


def test_an_empty_agent_name_is_refused_not_taken_for_the_operator(kanban: Kanban) -> None:
    """Found by hand: `--agent ''` said "creating as agent :" and filed the task as the
    operator, uncapped."""
    kanban.ok("task", "dispatch", "-t", "first")
    with kanban.board() as board:
        before = [task.to_json() for task in board.list_tasks()]
    error = kanban.refused("task", "dispatch", "-t", "x", "--agent", "", reason="invalid_input")
    assert "must not be empty" in error["error"]
    with kanban.board() as board:
        assert [task.to_json() for task in board.list_tasks()] == before
