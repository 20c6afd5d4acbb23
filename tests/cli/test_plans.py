"""`kanban plan lint|apply`: every problem reported at once, cycles named by their keys, and a plan
created entirely or not at all."""

import json
from pathlib import Path

import pytest

from boardlib.board import PlanItem
from boardlib.errors import BoardError, Reason
from boardlib.graph import MAX_CYCLES, find_cycles
from boardlib.plans import lint
from tests.backends import board_created
from tests.cli.conftest import Kanban, agent_notice


@pytest.fixture
def kanban(board_path: Path) -> Kanban:
    return Kanban(board_path)


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


CYCLIC = """\
tasks:
  - {key: design, title: Design the API, depends_on: [review]}
  - {key: build, title: Build it, depends_on: [design]}
  - {key: review, title: Review it, depends_on: [build]}
  - {key: docs, title: Write docs, depends_on: docs}
  - {key: ship, title: Ship, depends_on: [review, docs]}
"""


def test_lint_names_every_cycle_and_never_touches_the_board(tmp_path: Path) -> None:
    kanban = Kanban(tmp_path / "board.db", init=False)
    plan = write(tmp_path, "plan.yaml", CYCLIC)
    result = kanban.run("plan", "lint", plan)
    assert result.code == 2, str(result)
    report = result.doc
    assert report["ok"] is False
    assert report["tasks"] == 5
    cycles = [p["keys"] for p in report["problems"] if p["kind"] == "cycle"]
    assert cycles == [["design", "review", "build", "design"], ["docs", "docs"]]
    messages = [p["message"] for p in report["problems"]]
    assert "dependency cycle: design -> review -> build -> design" in messages
    error = result.error
    assert error["reason"] == "dependency_cycle"
    assert error["cycles"] == cycles
    assert not board_created(kanban.db)  # lint never creates (or writes) the board


def test_lint_reports_bad_fields_unknown_and_duplicate_keys_together(
    kanban: Kanban, tmp_path: Path
) -> None:
    with kanban.board() as board:
        existing = board.create_task("already on the board")
    before = kanban.snapshot()
    plan = write(
        tmp_path,
        "plan.yaml",
        f"""\
- key: a
  title: A
  priority: high
  depends_on: [ghost, {existing.id}]
- key: b
  title: ""
  colour: red
- key: a
  title: A again
- key: c
  title: C
  status: done
  parent: nowhere
- title: no key
""",
    )
    result = kanban.run("plan", "lint", plan)
    assert result.code == 2, str(result)
    problems = result.doc["problems"]
    kinds = sorted((p["kind"], p.get("field"), p.get("key")) for p in problems)
    assert kinds == [
        ("bad_field", "colour", "b"),
        ("bad_field", "key", None),
        ("bad_field", "priority", "a"),
        ("bad_field", "status", "c"),
        ("bad_field", "title", "b"),
        ("duplicate_key", None, "a"),
        ("unknown_key", "depends_on", "a"),
        ("unknown_key", "parent", "c"),
    ]
    unknown = {p["ref"] for p in problems if p["kind"] == "unknown_key"}
    assert unknown == {"ghost", "nowhere"}
    assert result.doc["existing"] == [existing.id]
    assert result.error["reason"] == "invalid_input"
    assert kanban.snapshot() == before


def test_lint_finds_every_cycle_even_through_items_with_bad_fields(tmp_path: Path) -> None:
    report = lint(
        [
            {"key": "a", "title": "A", "depends_on": ["b"], "colour": "red"},
            {"key": "b", "title": "B", "depends_on": ["a", "c"], "priority": "x"},
            {"key": "c", "title": "C", "depends_on": "b"},
        ]
    )
    assert report.cycles() == [["a", "b", "a"], ["b", "c", "b"]]


def test_find_cycles_enumerates_each_elementary_cycle_once() -> None:
    nodes = "abcd"
    complete = {node: [other for other in nodes if other != node] for node in nodes}
    cycles, finished = find_cycles(complete)
    assert finished
    assert len(cycles) == 20  # 6 two-cycles + 8 three-cycles + 6 four-cycles
    assert len({tuple(cycle) for cycle in cycles}) == 20
    assert all(cycle[0] == cycle[-1] for cycle in cycles)


def test_find_cycles_is_bounded_on_a_dense_tangle_and_iterative_on_a_long_chain() -> None:
    nodes = [f"n{i}" for i in range(9)]
    dense = {node: [other for other in nodes if other != node] for node in nodes}
    cycles, finished = find_cycles(dense)
    assert not finished
    assert len(cycles) == MAX_CYCLES

    chain = {f"k{i}": [f"k{i + 1}"] for i in range(5000)}
    chain["k5000"] = ["k0"]
    cycles, finished = find_cycles(chain)
    assert finished
    assert len(cycles) == 1
    assert len(cycles[0]) == 5002


def test_apply_creates_the_plan_with_its_links(kanban: Kanban, tmp_path: Path) -> None:
    with kanban.board() as board:
        existing = board.create_task("spec", status="todo")
    plan = write(
        tmp_path,
        "plan.json",
        json.dumps(
            {
                "tasks": [
                    {"key": "api", "title": "API", "role": "worker", "priority": 5},
                    {"key": "ui", "title": "UI", "dependsOn": ["api", existing.id]},
                    {"key": "qa", "title": "QA", "depends_on": "api, ui", "status": "backlog"},
                    {"key": "sub", "title": "Sub", "parent": "api", "team": "core"},
                ]
            }
        ),
    )
    assert kanban.ok("plan", "lint", plan)["order"] == ["api", "ui", "qa", "sub"]
    applied = kanban.noticed(
        "plan", "apply", plan, "--agent", "planner", notice=agent_notice("planner")
    )
    assert applied["count"] == 4
    ids = applied["keys"]
    assert set(ids) == {"api", "ui", "qa", "sub"}
    by_id = {task["id"]: task for task in applied["tasks"]}
    assert by_id[ids["api"]]["priority"] == 5
    assert by_id[ids["ui"]]["unmetDeps"] == 2
    assert by_id[ids["qa"]]["status"] == "backlog"
    assert by_id[ids["sub"]]["parentTaskId"] == ids["api"]
    assert by_id[ids["sub"]]["teamId"] == "core"
    deps = kanban.ok("task", "deps", "list", ids["ui"])
    assert {linked["id"] for linked in deps["dependencies"]} == {ids["api"], existing.id}
    assert kanban.ok("events")[-1]["actor"] == "planner"


def test_apply_is_all_or_nothing(kanban: Kanban, tmp_path: Path) -> None:
    """The third item fails inside the transaction, after the first two were inserted: the
    whole plan rolls back, events included."""
    with kanban.board() as board:
        board.create_task("before the plan")
    before = kanban.snapshot()
    plan = write(
        tmp_path,
        "plan.yaml",
        """\
- {key: a, title: A}
- {key: b, title: B, depends_on: [a]}
- {key: c, title: C, depends_on: [b, TASK-404]}
""",
    )
    error = kanban.refused("plan", "apply", plan, reason="invalid_input")
    assert [p["kind"] for p in error["problems"]] == ["unknown_key"]
    assert error["problems"][0]["ref"] == "TASK-404"
    assert kanban.snapshot() == before

    cyclic = write(tmp_path, "cyclic.yaml", CYCLIC)
    refused = kanban.refused("plan", "apply", cyclic, reason="dependency_cycle")
    assert len(refused["problems"]) == 2
    assert kanban.snapshot() == before


def test_a_key_shaped_like_a_task_id_is_refused_naming_it(kanban: Kanban, tmp_path: Path) -> None:
    """An item keyed `TASK-1` on a board with a TASK-1 took the other item's dependency on `TASK-1`
    for itself, silently. Such a key is refused, by lint, apply and the library alike, and nothing
    is written."""
    with kanban.board() as board:
        real = board.create_task("the board's own")
    before = kanban.snapshot()
    plan = write(
        tmp_path,
        "plan.yaml",
        f"""\
- {{key: {real.id}, title: an item}}
- {{key: b, title: B, depends_on: [{real.id}]}}
""",
    )
    linted = kanban.run("plan", "lint", plan)
    assert linted.code == 2 and linted.error["reason"] == "invalid_input", str(linted)
    applied = kanban.refused("plan", "apply", plan, reason="invalid_input")
    for problems in (linted.doc["problems"], applied["problems"]):
        [problem] = problems
        assert (problem["kind"], problem["field"], problem["key"]) == ("bad_field", "key", real.id)
        assert repr(real.id) in problem["message"]
    assert kanban.snapshot() == before
    with kanban.board() as board, pytest.raises(BoardError) as refused:
        board.create_plan([PlanItem("TASK-99", "not yet a task")])
    assert refused.value.reason is Reason.INVALID_INPUT
    assert refused.value.details == {"field": "key", "key": "TASK-99"}
    assert kanban.snapshot() == before


def test_plans_read_from_stdin_and_syntax_errors_name_the_line(kanban: Kanban) -> None:
    applied = kanban.ok("plan", "apply", "-", "--name", "piped", stdin="- {key: one, title: One}\n")
    assert applied["count"] == 1
    error = kanban.refused("plan", "lint", "-", stdin="- key: [\n", reason="invalid_input")
    assert "line 2" in error["error"]
    empty = kanban.refused("plan", "apply", "-", "--name", "x", stdin="[]", reason="invalid_input")
    assert "no tasks" in empty["error"]
    shape = kanban.run("plan", "lint", "-", stdin="just text")
    assert shape.code == 2
    assert shape.doc["ok"] is False
    assert "a plan is a list of tasks" in shape.error["error"]
    missing = kanban.run("plan", "lint", "/nonexistent/plan.yaml")
    assert missing.code == 2
    assert "does not exist" in missing.err


def test_a_field_written_twice_is_refused_not_read_as_its_last_value(
    kanban: Kanban, tmp_path: Path
) -> None:
    """YAML and JSON readers keep the last of a key written twice, so a plan with a second `tasks:`
    (two plans pasted together) created only the second list, and an item with two `key:`s took the
    last one, all with exit 0. The file is refused as a syntax error naming the key (the line, in
    YAML), on lint and apply, and nothing is written."""
    before = kanban.snapshot()
    twice = {
        "tasks.yaml": "tasks:\n  - {key: a, title: A}\ntasks:\n  - {key: b, title: B}\n",
        "key.yaml": "- key: a\n  title: A\n  key: b\n",
        "tasks.json": '{"tasks": [{"key": "a", "title": "A"}], "tasks": [{"key": "b"}]}',
        "key.json": '[{"key": "a", "title": "A", "key": "b"}]',
    }
    for name, text in twice.items():
        plan = write(tmp_path, name, text)
        for verb in ("lint", "apply"):
            error = kanban.refused("plan", verb, plan, reason="invalid_input")
            written = "'tasks'" if name.startswith("tasks") else "'key'"
            assert f"the key {written} is written twice" in error["error"], (name, error)
            assert [p["kind"] for p in error["problems"]] == ["syntax"]
            if name.endswith(".yaml"):
                assert "at line 3" in error["error"] or "at line 4" in error["error"], error
    assert kanban.snapshot() == before
    # a merge key's fields may be written over: that is what it is for
    merged = write(
        tmp_path, "merged.yaml", "tasks:\n  - &a {key: a, title: A}\n  - {<<: *a, key: b}\n"
    )
    assert kanban.ok("plan", "apply", merged)["keys"] == {"a": "TASK-1", "b": "TASK-2"}


def test_lint_table_wraps_a_problem_under_its_text(kanban: Kanban, tmp_path: Path) -> None:
    """At 80 columns `plan lint --format table` wrapped a long problem back to the left edge, so its
    second line read as the start of another."""
    plan = write(tmp_path, "plan.yaml", "- {key: x, title: X, depends_on: [nowhere-at-all]}\n")
    table = kanban.run("plan", "lint", plan, "--format", "table", env={"COLUMNS": "80"})
    assert table.code == 2, str(table)
    lines = table.out.rstrip("\n").splitlines()
    assert lines[1].startswith("  - unknown_key: x.depends_on refers to 'nowhere-at-all'")
    assert len(lines) > 2, table.out  # the message is longer than one line
    assert all(line.startswith("    ") and line.strip() for line in lines[2:]), table.out


def test_a_link_onto_a_cancelled_task_is_refused_on_every_cli_path(
    kanban: Kanban, tmp_path: Path
) -> None:
    """deps add, dispatch --depends-on, plan lint and plan apply refuse it alike (invalid_state,
    naming the cancelled task), and nothing is written."""
    with kanban.board() as board:
        gone = board.create_task("gone")
        board.cancel(gone.id)
        task = board.create_task("task")
    plan = write(tmp_path, "plan.yaml", f"- {{key: a, title: A, depends_on: [{gone.id}]}}\n")
    before = kanban.snapshot()
    for args in (
        ("task", "deps", "add", task.id, "--on", gone.id),
        ("task", "dispatch", "-t", "new", "--depends-on", gone.id),
        ("plan", "apply", plan),
    ):
        error = kanban.refused(*args, reason="invalid_state")
        assert gone.id in error["error"] and "cancelled" in error["error"], error
    linted = kanban.run("plan", "lint", plan)
    assert linted.code == 2 and linted.error["reason"] == "invalid_state", str(linted)
    (problem,) = linted.doc["problems"]
    assert (problem["kind"], problem["ref"]) == ("cancelled_dependency", gone.id)
    assert kanban.snapshot() == before


DEEP = """\
tasks:
  - {key: n0, title: N0}
  - {key: n1, title: N1, parent: n0}
  - {key: n2, title: N2, parent: n1}
  - {key: n3, title: N3, parent: n2}
"""


def test_lint_as_an_agent_reports_the_caps_apply_refuses(kanban: Kanban, tmp_path: Path) -> None:
    """`plan lint --agent` (or KANBAN_AGENT) runs apply's cap checks, so it reports every
    problem `plan apply --agent` refuses, in the same words; the hint names the depth ceiling
    when depth is the cap broken. The operator's lint is not capped."""
    plan = write(tmp_path, "deep.yaml", DEEP)
    nowhere = Kanban(tmp_path / "none.db", init=False)  # no board yet: the board it would make
    as_planner, from_env = ("--agent", "planner"), {"KANBAN_AGENT": "planner"}
    before = kanban.snapshot()
    for cli, args, env, by in (
        (kanban, ("plan", "lint", plan, *as_planner), {}, "--agent"),
        (kanban, ("plan", "lint", plan), from_env, "env"),
        (kanban, ("plan", "apply", plan, *as_planner), {}, "--agent"),
        (nowhere, ("plan", "lint", plan, *as_planner), {}, "--agent"),
        (nowhere, ("plan", "apply", plan), from_env, "env"),
    ):
        result = cli.run(*args, env=env)
        assert result.code == 2, str(result)
        error = result.error
        assert error["reason"] == "cap_exceeded", str(result)
        assert error["error"] == (
            "the plan breaks the create caps for 1 task(s): n3 (depth); nothing was created"
        )
        assert [(v["key"], v["cap"], v["limit"]) for v in error["violations"]] == [
            ("n3", "depth", 2)
        ]
        assert error["hint"] == agent_notice(
            "planner", by=by, caps="2 ancestors, 24 children, 30 roots per 5 minutes"
        )
        if args[1] == "lint":
            problems = [(p["kind"], p["key"], p["cap"]) for p in result.doc["problems"]]
            assert problems == [("cap", "n3", "depth")]
    assert kanban.snapshot() == before and not board_created(nowhere.db)
    assert kanban.ok("plan", "lint", plan)["ok"] is True
