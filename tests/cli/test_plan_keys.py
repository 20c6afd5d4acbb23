"""Plans are idempotent by key: `plan apply` records each item's (plan name, key) on its task, so
applying the same plan again creates nothing; a plan whose items differ from their tasks fails
`plan lint` (and `apply`) with the differences unless `--update`, which changes only what is
still safe to change; racing appliers create each task once (real processes, both backends)."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from boardlib.errors import BoardError, Reason
from boardlib.plans import lint, read_plan
from tests.backends import raw_execute
from tests.cli.conftest import Kanban, unchanged

PLAN = """\
- {key: api,  title: Design the API, role: worker, priority: 5}
- {key: impl, title: Implement it,   role: worker, depends_on: [api]}
- {key: docs, title: Document it,    depends_on: [api, impl]}
- {key: ship, title: Ship it}
"""


@pytest.fixture
def kanban(board_path: Path) -> Kanban:
    return Kanban(board_path)


def write(tmp_path: Path, text: str, name: str = "sprint.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_applying_the_same_plan_again_creates_nothing(kanban: Kanban, tmp_path: Path) -> None:
    plan = write(tmp_path, PLAN)
    first = kanban.ok("plan", "apply", plan)
    assert (first["plan"], first["summary"], first["count"]) == (
        "sprint",
        "0 existing, 4 created",
        4,
    )
    with kanban.board() as board:
        stored = {task.plan_key: task for task in board.all_tasks()}
    assert {key: task.id for key, task in stored.items()} == first["keys"]
    assert {task.plan_name for task in stored.values()} == {"sprint"}
    assert stored["api"].to_json()["planKey"] == "api"  # shown on the task, as planName/planKey

    with unchanged(kanban.db):  # not a byte of the board (or one row, on Postgres) moves
        again = kanban.ok("plan", "apply", plan)
    assert again["summary"] == "4 existing, 0 created"
    assert (again["count"], again["created"], again["tasks"]) == (0, [], [])
    assert again["existing"] == ["api", "impl", "docs", "ship"]
    assert again["keys"] == first["keys"]
    linted = kanban.ok("plan", "lint", plan)
    assert linted["matched"] == first["keys"] and linted["problems"] == []

    # A new item is the only thing created; the others keep their tasks and links.
    grown = write(tmp_path, PLAN + "- {key: demo, title: Demo it, depends_on: [ship]}\n")
    applied = kanban.ok("plan", "apply", grown)
    assert applied["summary"] == "4 existing, 1 created"
    assert applied["created"] == ["demo"]
    deps = kanban.ok("task", "deps", "list", applied["keys"]["demo"])
    assert [linked["id"] for linked in deps["dependencies"]] == [first["keys"]["ship"]]
    with kanban.board() as board:
        assert len(board.all_tasks()) == 5


def test_keys_are_scoped_by_the_plan_name(kanban: Kanban, tmp_path: Path) -> None:
    """The same keys in another plan are other tasks: `name:` in the file, else --name, else the
    file name. A plan from stdin has no file name and must say its name."""
    named = write(tmp_path, "name: release-7\ntasks:\n" + PLAN.replace("- ", "  - "), "x.yaml")
    assert kanban.ok("plan", "apply", named)["plan"] == "release-7"
    other = kanban.ok("plan", "apply", named, "--name", "release-8")
    assert (other["plan"], other["summary"]) == ("release-8", "0 existing, 4 created")
    by_file = kanban.ok("plan", "apply", write(tmp_path, PLAN, "sprint-3.yaml"))
    assert (by_file["plan"], by_file["count"]) == ("sprint-3", 4)
    with kanban.board() as board:
        assert len(board.all_tasks()) == 12
    error = kanban.refused("plan", "apply", "-", stdin=PLAN, reason="invalid_input")
    assert "--name" in error["error"]
    piped = kanban.ok("plan", "apply", "-", "--name", "sprint-3", stdin=PLAN)
    assert piped["summary"] == "4 existing, 0 created"


def test_lint_reports_each_difference_and_apply_refuses_it_whole(
    kanban: Kanban, tmp_path: Path
) -> None:
    keys = kanban.ok("plan", "apply", write(tmp_path, PLAN))["keys"]
    claimed = kanban.ok("task", "claim-next", "--agent", "w1", "--role", "worker")
    assert claimed["id"] == keys["api"]
    changed = write(
        tmp_path,
        """\
- {key: api,  title: Design the API v2, role: worker, priority: 5}
- {key: impl, title: Implement it now,  role: worker, depends_on: [api]}
- {key: docs, title: Document it,       depends_on: [api, impl, ship], priority: 3}
- {key: ship, title: Ship it, description: with care}
""",
    )
    with unchanged(kanban.db):
        lint = kanban.run("plan", "lint", changed)
        applied = kanban.refused("plan", "apply", changed, reason="invalid_input")
    assert lint.code == 2, str(lint)
    problems = lint.doc["problems"]
    assert lint.error["problems"] == applied["problems"] == problems  # the same, word for word
    assert [(p["kind"], p["key"], p["field"], p["updatable"]) for p in problems] == [
        ("differs", "api", "title", False),  # claimed: its worker read the old title
        ("differs", "impl", "title", True),
        ("differs", "docs", "priority", False),  # not a field --update changes
        ("differs", "docs", "dependsOn", True),
        ("differs", "ship", "description", True),
    ]
    api = problems[0]
    assert (api["id"], api["plan"], api["board"]) == (
        keys["api"],
        "Design the API v2",
        "Design the API",
    )
    assert "claimed by w1" in api["message"]
    assert problems[3]["plan"] == "ship" and problems[3]["board"] == [keys["api"], keys["impl"]]

    # --update still refuses while a difference is not safe to change, and writes nothing.
    with unchanged(kanban.db):
        lint = kanban.run("plan", "lint", changed, "--update")
        refused = kanban.refused("plan", "apply", changed, "--update", reason="invalid_input")
    assert [(p["key"], p["field"]) for p in refused["problems"]] == [
        ("api", "title"),
        ("docs", "priority"),
    ]
    assert lint.code == 2 and lint.error["problems"] == refused["problems"]
    assert [(c["key"], c["field"]) for c in lint.doc["changes"]] == [
        ("impl", "title"),
        ("docs", "dependsOn"),
        ("ship", "description"),
    ]


def test_lint_reports_a_link_the_board_has_beyond_the_plans(kanban: Kanban, tmp_path: Path) -> None:
    """A dependency added by hand (`deps add`) to a plan's task went unreported, so lint called plan
    and board the same while they were not. It is listed (apply leaves the board's links alone, so
    it is no problem and apply still goes through)."""
    plan = write(tmp_path, PLAN)
    keys = kanban.ok("plan", "apply", plan)["keys"]
    assert kanban.ok("plan", "lint", plan)["unplannedLinks"] == []
    kanban.ok("task", "deps", "add", keys["ship"], "--on", keys["docs"])
    linted = kanban.ok("plan", "lint", plan)
    assert (linted["ok"], linted["problems"]) == (True, [])
    [link] = linted["unplannedLinks"]
    assert (link["key"], link["id"], link["dependsOn"]) == ("ship", keys["ship"], keys["docs"])
    assert "not in the plan" in link["message"] and "deps remove" in link["message"]
    table = kanban.run("plan", "lint", plan, "--format", "table", env={"COLUMNS": "200"}).out
    assert "unplanned link: ship" in table, table
    assert kanban.ok("plan", "apply", plan)["summary"] == "4 existing, 0 created"
    deps = kanban.ok("task", "deps", "list", keys["ship"])["dependencies"]
    assert [linked["id"] for linked in deps] == [keys["docs"]]  # left alone


def test_update_changes_only_what_is_safe_to_change(kanban: Kanban, tmp_path: Path) -> None:
    keys = kanban.ok("plan", "apply", write(tmp_path, PLAN))["keys"]
    kanban.ok("task", "claim-next", "--agent", "w1", "--role", "worker")  # api is claimed
    since = kanban.ok("events")[-1]["seq"]
    changed = write(
        tmp_path,
        """\
- {key: api,  title: Design the API, role: worker, priority: 5}
- {key: impl, title: Implement it now, role: worker, depends_on: [api]}
- {key: docs, title: Document it, depends_on: [api, impl, ship]}
- {key: ship, title: Ship it, description: with care}
- {key: demo, title: Demo it, depends_on: [ship]}
""",
    )
    assert kanban.ok("plan", "lint", changed, "--update")["ok"] is True
    applied = kanban.ok("plan", "apply", changed, "--update")
    assert applied["summary"] == "4 existing, 1 created, 3 change(s) made"
    assert [(c["key"], c["field"]) for c in applied["updated"]] == [
        ("impl", "title"),
        ("docs", "dependsOn"),
        ("ship", "description"),
    ]
    assert kanban.row(keys["impl"])["title"] == "Implement it now"
    assert kanban.row(keys["ship"])["description"] == "with care"
    assert kanban.row(keys["docs"])["unmetDeps"] == 3
    events = [e for e in kanban.ok("events") if e["seq"] > since]
    assert [(e["kind"], e["taskId"]) for e in events] == [
        ("task_created", applied["keys"]["demo"]),
        ("dep_linked", keys["docs"]),
        ("task_updated", keys["impl"]),
        ("task_updated", keys["ship"]),
    ]
    assert events[2]["data"] == {"verb": "plan_update", "fields": ["title"]}
    again = kanban.ok("plan", "apply", changed)  # now the plan and the board agree
    assert again["summary"] == "5 existing, 0 created"


def test_update_refuses_a_dependency_that_closes_a_cycle(kanban: Kanban, tmp_path: Path) -> None:
    """Through a task outside the plan: `ship` would wait on TASK-x, which waits on `ship`. One
    fact, one reason (the plan said invalid_input where `deps add` said dependency_cycle): the plan
    is refused `dependency_cycle`, the cycle named as `deps add` names it, by lint, apply and the
    library alike, with or without --update."""
    keys = kanban.ok("plan", "apply", write(tmp_path, PLAN))["keys"]
    with kanban.board() as board:
        outside = board.create_task("outside the plan", depends_on=[keys["ship"]])
    looped = write(
        tmp_path, PLAN.replace("title: Ship it", f"title: Ship it, depends_on: [{outside.id}]")
    )
    with unchanged(kanban.db):
        direct = kanban.refused(
            "task", "deps", "add", keys["ship"], "--on", outside.id, reason="dependency_cycle"
        )
        linted = kanban.run("plan", "lint", looped, "--update")
        refusals = [
            kanban.refused("plan", "apply", looped, *update, reason="dependency_cycle")
            for update in ((), ("--update",))
        ]
        with kanban.board() as board, pytest.raises(BoardError) as library:
            board.apply_plan(lint(read_plan(Path(looped))).to_items(), plan="sprint", update=True)
    assert linted.code == 2 and linted.error["reason"] == "dependency_cycle", str(linted)
    assert linted.doc["problems"] == refusals[0]["problems"] == refusals[1]["problems"]
    assert library.value.reason is Reason.DEPENDENCY_CYCLE
    assert library.value.details["problems"] == refusals[1]["problems"]
    for error in refusals:
        assert error["cycles"] == [direct["cycle"]] == [[keys["ship"], outside.id, keys["ship"]]]
        (problem,) = error["problems"]
        assert (problem["kind"], problem["key"], problem["field"]) == ("cycle", "ship", "dependsOn")
        assert (problem["keys"], problem["updatable"]) == (direct["cycle"], False)
        assert direct["error"] in problem["message"]


def test_an_agents_update_links_nothing_onto_another_agents_task(
    kanban: Kanban, tmp_path: Path
) -> None:
    """The agent contract holds on the plan path as on `deps add`: a planner links a dependency
    onto a task it holds or nobody holds, never another agent's (not_assignee, the whole plan
    refused, nothing written); the operator may."""
    keys = kanban.ok("plan", "apply", write(tmp_path, PLAN))["keys"]
    kanban.ok("task", "claim", keys["ship"], "--agent", "worker")
    held = write(tmp_path, PLAN.replace("title: Ship it", "title: Ship it, depends_on: [api]"))
    with unchanged(kanban.db):
        direct = kanban.refused(
            "task", "deps", "add", keys["ship"], "--on", keys["api"], "--agent", "planner",
            reason="not_assignee",
        )  # fmt: skip
        error = kanban.refused(
            "plan", "apply", held, "--update", "--agent", "planner", reason="not_assignee"
        )
    (problem,) = error["problems"]
    assert (problem["kind"], problem["key"], problem["assignee"]) == (
        "not_assignee",
        "ship",
        "worker",
    )
    assert problem["id"] == keys["ship"] and direct["error"] in problem["message"]
    applied = kanban.ok("plan", "apply", held, "--update")  # the operator's plan
    assert [(c["key"], c["field"]) for c in applied["updated"]] == [("ship", "dependsOn")]


def test_the_plan_key_is_unique_on_the_board(kanban: Kanban, tmp_path: Path) -> None:
    """The unique index behind "each task once": a second row with the same plan and key is
    refused by the database itself, on both backends."""
    kanban.ok("plan", "apply", write(tmp_path, PLAN))
    duplicate = (
        "INSERT INTO tasks (seq, id, title, status, created_at, updated_at, plan_name, plan_key) "
        "VALUES (999, 'TASK-999', 'copy', 'todo', 0, 0, 'sprint', 'api')"
    )
    with pytest.raises(Exception, match=r"(?i)unique"):
        raw_execute(kanban.db, duplicate)
    raw_execute(kanban.db, duplicate.replace("'sprint'", "'other'"))  # another plan's key is free


RACERS = 6


@pytest.mark.slow  # six processes racing
def test_racing_appliers_create_each_task_once(kanban: Kanban, tmp_path: Path) -> None:
    """Six processes apply the same plan at the same moment (each waits at a barrier with the CLI
    loaded): one creates the plan, every other finds it, and the board holds each task once."""
    plan = write(tmp_path, PLAN + "".join(f"- {{key: n{i}, title: N{i}}}\n" for i in range(8)))
    racers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.cli.plan_racer", "plan", "apply", plan],
            env=kanban.env(),
            cwd=Path(__file__).parents[2],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(RACERS)
    ]
    for racer in racers:
        assert racer.stderr is not None and racer.stderr.readline() == "ready\n"
    for racer in racers:  # the barrier: every racer is loaded; release them together
        assert racer.stdin is not None
        racer.stdin.write("go\n")
        racer.stdin.flush()
    results: list[dict[str, Any]] = []
    for racer in racers:
        out, err = racer.communicate(timeout=120)
        assert racer.returncode == 0, err
        results.append(json.loads(out))
    summaries = sorted(result["summary"] for result in results)
    assert summaries == ["0 existing, 12 created"] + ["12 existing, 0 created"] * (RACERS - 1)
    assert len({json.dumps(result["keys"], sort_keys=True) for result in results}) == 1
    with kanban.board() as board:
        tasks = board.all_tasks()
        created = [e for e in board.events() if e.kind == "task_created"]
    assert len(tasks) == len(created) == 12
    assert sorted(task.plan_key or "" for task in tasks) == sorted(results[0]["keys"])


def test_a_plans_budgets_are_compared_and_kept(kanban: Kanban, tmp_path: Path) -> None:
    """Budgets ride on the plan (as priority does): the same budgets re-apply as a no-op, a
    changed one is a difference `--update` does not change (only an operator sets budgets)."""
    budgeted = "- {key: api, title: Design the API, budgetUsd: 2.5, budgetTokens: 90000}\n"
    first = kanban.ok("plan", "apply", write(tmp_path, budgeted))
    with unchanged(kanban.db):
        assert kanban.ok("plan", "apply", write(tmp_path, budgeted))["summary"] == (
            "1 existing, 0 created"
        )
    raised = write(tmp_path, budgeted.replace("2.5", "4").replace("90000", "90001"))
    with unchanged(kanban.db):
        lint = kanban.run("plan", "lint", raised, "--update")
        refused = kanban.refused("plan", "apply", raised, "--update", reason="invalid_input")
    assert lint.code == 2
    assert [(p["field"], p["plan"], p["board"], p["updatable"]) for p in refused["problems"]] == [
        ("budgetUsd", 4.0, 2.5, False),
        ("budgetTokens", 90001, 90000, False),
    ]
    assert kanban.row(first["keys"]["api"])["budgetUsd"] == 2.5
    # The message said `2.5`/`4.0` and that `--update` changes only text, not what does change a
    # budget. Money as money, and the command that sets it.
    task_id = first["keys"]["api"]
    usd, tokens = (problem["message"] for problem in refused["problems"])
    assert f"api ({task_id}): budgetUsd is $2.50 on the board, $4.00 in the plan (kept: only an " \
        f"operator changes a budget, audited: `kanban budget set {task_id} --usd 4 -m WHY`)" \
        == usd, usd  # fmt: skip
    assert "budgetTokens is 90,000 tokens on the board, 90,001 tokens in the plan" in tokens
    assert f"`kanban budget set {task_id} --tokens 90001 -m WHY`" in tokens, tokens
    table = kanban.run("plan", "lint", raised, "--format", "table")
    assert "$2.50 on the board, $4.00 in the plan" in table.out, table.out
    said = usd.split("`")[1].replace("WHY", "raised").split()  # the command, run as printed
    kanban.ok(*said[1:])
    left = kanban.run("plan", "lint", raised)
    assert [p["field"] for p in json.loads(left.out)["problems"]] == ["budgetTokens"], left.out
